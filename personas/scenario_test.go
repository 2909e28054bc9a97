package personas_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestScenarioWithLLMPersona runs an LLM persona in voicetest.Scenario
// against an in-process fake agent (on virtual time, in a synctest
// bubble), from a cache recorded on the real clock first: the way a
// committed cache replays a suite offline.
func TestScenarioWithLLMPersona(t *testing.T) {
	dir := t.TempDir()
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	rec := bookingRun(t, personas.LLM(personas.Elderly, "Book a table for two tonight.").With(newClient(t, srv, dir, cache.Record)))
	require.NoError(t, rec.Err)
	srv.Close()

	user := personas.LLM(personas.Elderly, "Book a table for two tonight.").With(newClient(t, nil, dir, cache.Replay))
	res := voicetest.Scenario(t, voicetest.Config{
		Name: "booking", Description: "Luigi's restaurant booking line.",
		Agent: bookingAgent(), User: user,
		Script: []voicetest.Step{
			voicetest.Proceed(0),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsToolCall("check_availability", map[string]any{"party": 2}).Err()
			}),
		},
	})
	require.True(t, res.Success, "%v", res.Err)
	assert.Equal(t, lines(rec), lines(res))
	assert.Equal(t, 3, res.Turns)
	assert.Equal(t, "the user hung up", res.Ended)
	// On virtual time the transcript's own order is the conversation's.
	var inOrder []string
	for _, m := range res.Transcript {
		inOrder = append(inOrder, string(m.Role)+": "+m.Text)
	}
	assert.Equal(t, lines(res), inOrder)
}

// toneVoice is a stand-in TTS: fixtures.WordTones. Real tests use an
// engine of the speech package.
type toneVoice struct{}

func (toneVoice) Synthesize(_ context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return fixtures.WordTones(req.Text, req.Rate), nil
}

// TestScenarioWithScriptedPersona runs a scripted caller with a persona's
// voice effects through Scenario, against an audio fake agent.
func TestScenarioWithScriptedPersona(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{
		Greeting: fixtures.Reply{Text: "Luigi's, how can I help?"},
		Replies:  []fixtures.Reply{{Text: "For two, sure."}, {Text: "Seven it is."}},
	})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		User:      personas.Scripted("A table for two, please.", "Seven o'clock.").As(personas.BadPhoneLine),
		UserVoice: toneVoice{},
	})
	require.True(t, res.Success, "%v", res.Err)
	assert.Equal(t, []string{
		"agent: Luigi's, how can I help?",
		"user: A table for two, please.",
		"agent: For two, sure.",
		"user: Seven o'clock.",
		"agent: Seven it is.",
	}, lines(res))
	var userSegs int
	for _, seg := range res.Recording.Segments {
		if seg.Role != voicetest.RoleUser {
			continue
		}
		userSegs++
		audio := seg.Audio()
		clean := fixtures.WordTones(seg.Text, audio.Rate)
		require.Equal(t, clean.Len(), audio.Len())
		want := personas.BadPhoneLine.Effects(clean)
		assert.True(t, slices.Equal(want.Samples, audio.Samples), "the persona's effects, and only they, were applied to %q", seg.Text)
	}
	assert.Equal(t, 2, userSegs)
}

// TestScenarioRecordsWithTheDefaultClient records an LLM persona built
// without With inside Scenario's synctest bubble: the default client keeps
// no idle connections, whose goroutines would block the bubble.
func TestScenarioRecordsWithTheDefaultClient(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_API_KEY", srv.APIKey())
	t.Setenv("VOICETEST_LLM_MODEL", "gpt-4o-mini")
	t.Setenv("VOICETEST_CACHE", "record")
	t.Chdir(t.TempDir())
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:  bookingAgent(),
		User:   personas.LLM(personas.Patient, "Book a table for two."),
		Golden: voicetest.GoldenOptions{Disable: true}, // the test runs in a temporary directory
	})
	require.True(t, res.Success, "%v", res.Err)
	assert.Equal(t, 3, res.Turns)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 3)
}
