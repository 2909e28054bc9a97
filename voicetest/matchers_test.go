package voicetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// wordMatcher matches messages that contain its word, recording what it
// was asked.
type wordMatcher struct {
	word  string
	asked []string
}

func (m *wordMatcher) MatchMessage(ctx context.Context, text string) error {
	m.asked = append(m.asked, text)
	if !strings.Contains(text, m.word) {
		return errors.New("no " + m.word)
	}
	return nil
}

func TestIsMessageMatching(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent: fixtures.TextAgent(fixtures.Reply{Text: "Your table is booked.", Latency: 10 * time.Millisecond,
			Tools: []voicetest.ToolCall{{Name: "book", Arguments: []byte(`{"party":2}`), Result: []byte(`{"ok":true}`)}}}),
		Script: []voicetest.Step{voicetest.UserSays("A table for two."), voicetest.AgentTurn()},
	})
	require.True(t, res.Success, "%v", res.Err)
	st := res.State

	booked := &wordMatcher{word: "booked"}
	err := st.Expect().Skip(2).NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, booked).NoMoreEvents().Err()
	require.NoError(t, err)
	assert.Equal(t, []string{"Your table is booked."}, booked.asked)

	full := &wordMatcher{word: "full"}
	err = st.Expect().Skip(2).NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, full).Err()
	require.ErrorIs(t, err, voicetest.ErrExpectation)
	assert.Contains(t, err.Error(), `item 2: message agent: "Your table is booked." does not match: no full`)

	// Not a message: the matcher is not asked.
	never := &wordMatcher{word: "x"}
	err = st.Expect().NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, never).Err()
	require.ErrorIs(t, err, voicetest.ErrExpectation)
	assert.Contains(t, err.Error(), "item 0: expected a message from agent, got tool_call book")
	assert.Empty(t, never.asked)

	err = st.Expect().Skip(2).NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, nil).Err()
	assert.ErrorContains(t, err, "nil MessageMatcher")

	// After a failure later checks do nothing.
	err = st.Expect().NextEvent().IsMessageMatching(t.Context(), voicetest.RoleUser, never).
		NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, never).Err()
	require.Error(t, err)
	assert.Empty(t, never.asked)
}

// noGolden turns golden files off: the scenario only produces the State
// whose expectations the test checks.
func noGolden() voicetest.GoldenOptions { return voicetest.GoldenOptions{Disable: true} }
