package judges_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// toneTTS is a test-double TTS: fixtures.WordTones of the text.
type toneTTS struct{}

func (toneTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	if req.Rate <= 0 {
		return pcm.Chunk{}, errors.New("toneTTS: no rate")
	}
	return fixtures.WordTones(req.Text, req.Rate), nil
}

// bookingAgent is a text-only fake restaurant agent: a greeting, a reply
// after 500 ms that checks availability, and one after 1200 ms that books
// and hangs up.
func bookingAgent() *fixtures.FakeAgent {
	return fixtures.Fake(fixtures.FakeConfig{
		Name:     "fake-booking",
		TextOnly: true,
		Greeting: fixtures.Reply{Text: "Hello, Luigi's, how can I help?"},
		Replies: []fixtures.Reply{
			{Text: "We have a table for 2 at seven. Shall I book it?", Latency: 500 * time.Millisecond,
				Tools: []voicetest.ToolCall{{ID: "c1", Name: "check_availability", Arguments: []byte(`{"party":2,"time":"19:00"}`), Result: []byte(`{"free":true}`)}}},
			{Text: "Booked! Goodbye.", Latency: 1200 * time.Millisecond, HangUp: true,
				Tools: []voicetest.ToolCall{{ID: "c2", Name: "book", Arguments: []byte(`{"party":2,"time":"19:00","guest":{"name":"Ann"}}`), Result: []byte(`{"ok":true}`)}}},
		},
	})
}

// bookingScript is the conversation bookingAgent is made for.
func bookingScript() []voicetest.Step {
	return []voicetest.Step{
		voicetest.AgentTurn(),
		voicetest.UserSays("A table for two at seven, please."),
		voicetest.AgentTurn(),
		voicetest.UserSays("Yes please, for Ann."),
		voicetest.AgentTurn(),
	}
}

// bookingState runs the booking conversation on virtual time and returns
// its final State.
func bookingState(t *testing.T) *voicetest.State {
	t.Helper()
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(), Agent: bookingAgent(), Script: bookingScript()})
	require.True(t, res.Success, "booking scenario: %v", res.Err)
	return res.State
}

// bargeInState runs an audio conversation with a barge-in the agent
// answers 150 ms later and a 3 s silence in which the agent re-prompts
// after 2 s, on virtual time, and returns its final State.
func bargeInState(t *testing.T) *voicetest.State {
	t.Helper()
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent: fixtures.Fake(fixtures.FakeConfig{
			Greeting: fixtures.Reply{Text: "Hello there"}, BargeIn: true, StopLatency: 150 * time.Millisecond,
			Replies: []fixtures.Reply{
				{Text: "one two three four five", Latency: 300 * time.Millisecond},
				{Text: "okay", Latency: 200 * time.Millisecond},
				{Text: "are you still there", Latency: 2 * time.Second},
			},
		}),
		UserVoice: toneTTS{},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("hi"),
			voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
			voicetest.UserSays("hmm"),
			voicetest.Silence(3 * time.Second),
			voicetest.AgentTurn(),
		},
	})
	require.True(t, res.Success, "barge-in scenario: %v", res.Err)
	return res.State
}

// run runs cfg with voicetest.Run inside a synctest bubble (virtual time)
// and returns the Result, failed or not, without failing t.
func run(t *testing.T, cfg voicetest.Config) *voicetest.Result {
	t.Helper()
	var res *voicetest.Result
	var err error
	synctest.Test(t, func(t *testing.T) {
		res, err = voicetest.Run(t.Context(), cfg)
	})
	require.NotNil(t, res, "invalid scenario: %v", err)
	return res
}

// lines is a scripted test User.
func lines(ls ...string) voicetest.User {
	i := 0
	return voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		if i >= len(ls) {
			return voicetest.Utterance{Done: true}, nil
		}
		i++
		return voicetest.Utterance{Text: ls[i-1]}, nil
	})
}

// final asks j for a final verdict on st.
func final(t *testing.T, j voicetest.Judge, st *voicetest.State) voicetest.Judgment {
	t.Helper()
	v, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true, Turn: st.Turn(), MaxTurns: 10})
	require.NoError(t, err)
	return v
}

// midway asks j for a non-final judgment on st.
func midway(t *testing.T, j voicetest.Judge, st *voicetest.State) voicetest.Judgment {
	t.Helper()
	v, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Turn: st.Turn(), MaxTurns: 10})
	require.NoError(t, err)
	return v
}

// noGolden turns golden files off for scenarios that only produce a State
// for the judges under test: the tests assert what the judges make of it,
// and a golden copy of the same fixture conversation per test would add
// nothing. Scenarios whose timeline carries the judge's verdict keep
// their goldens.
func noGolden() voicetest.GoldenOptions { return voicetest.GoldenOptions{Disable: true} }
