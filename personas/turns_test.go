package personas_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// checkingAgent answers the first message "Let me check that for you"
// (300 ms after it, 2.4 s of text speech), is quiet for pause, then shows
// the free times and says "Seven is free"; the second message it answers
// "Booked".
func checkingAgent(pause time.Duration) *fixtures.FakeAgent {
	return fixtures.TextAgent(
		fixtures.Reply{Text: "Let me check that for you", Latency: 300 * time.Millisecond,
			Then: &fixtures.Reply{Text: "Seven is free", Latency: pause,
				DataName: "slots", Data: json.RawMessage(`{"free":["19:00"]}`)}},
		fixtures.Reply{Text: "Booked", Latency: 300 * time.Millisecond},
	)
}

func turnRun(t *testing.T, tt voicetest.TurnTaking) *voicetest.Result {
	t.Helper()
	var res *voicetest.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = voicetest.Run(t.Context(), voicetest.Config{
			Agent: checkingAgent(2500 * time.Millisecond), User: personas.Scripted("Seven please"),
			TurnTaking: tt, DataView: voicetest.XMLView("screen"),
			Script: []voicetest.Step{
				voicetest.UserSays("Is seven free"), // 0–1.2 s
				voicetest.AgentTurn(),               // "Let me check that for you" 1.5–3.9 s
				voicetest.UserTurn(),
				voicetest.AgentTurn(),
			},
		})
		require.NoError(t, err)
	})
	return res
}

func waitEvents(res *voicetest.Result) []string {
	var out []string
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventUserWait || e.Type == voicetest.EventUserWaitLimit {
			out = append(out, e.At.String()+" "+string(e.Type)+" "+e.Duration.String()+" "+e.Text)
		}
	}
	return out
}

func userStarts(res *voicetest.Result) []time.Duration {
	var out []time.Duration
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleUser {
			out = append(out, m.Start)
		}
	}
	return out
}

// HoldOn waits while the agent's last words ask the caller to hold, on
// virtual time: at 3.9 s "Let me check that for you" has ended; 800 ms
// waits until the agent is back at 6.4 s (its answer ends at 7.6 s); then
// the caller speaks.
func TestHoldOnRule(t *testing.T) {
	res := turnRun(t, voicetest.TurnTaking{Classifier: personas.HoldOn(800 * time.Millisecond)})
	assert.Equal(t, []string{
		`3.9s user_wait 800ms the agent said "let me check"`,
		`4.7s user_wait 800ms the agent said "let me check"`,
		`5.5s user_wait 800ms the agent said "let me check"`,
		`6.3s user_wait 100ms the agent said "let me check"`,
	}, waitEvents(res))
	assert.Equal(t, []time.Duration{0, 7600 * time.Millisecond}, userStarts(res))
	assert.Equal(t, 4, res.Metrics.Waits.Count)

	// An agent that does not ask to hold gets its answer at once.
	var st voicetest.State
	d, err := personas.HoldOn(time.Second).TakeTurn(t.Context(), &st)
	require.NoError(t, err)
	assert.Equal(t, voicetest.TurnDecision{}, d)
}

// answerTurns is the double's classifier: not yet while the agent's last
// line asks to check, else speak.
func answerTurns(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
	conv := req.Messages[len(req.Messages)-1].Content
	lines := strings.Split(strings.TrimSuffix(conv, "\nShould the caller speak now?"), "\n")
	last := lines[len(lines)-1]
	if strings.Contains(last, "Let me check") {
		return call("take_turn", map[string]any{"speak": false, "check_again_ms": 1500, "reason": "the agent is checking"}), nil
	}
	return call("take_turn", map[string]any{"speak": true, "check_again_ms": 0, "reason": "the agent answered"}), nil
}

// LLMTurns asks the model through the cache: recorded once against the
// OpenAI double, the same waits replay with no server.
func TestLLMTurnsThroughTheCache(t *testing.T) {
	dir := t.TempDir()
	srv := fakeopenai.New(t)
	srv.HandleChat(answerTurns)
	want := []string{
		"3.9s user_wait 1.5s the agent is checking",
		"5.4s user_wait 1s the agent is checking", // cut short at 6.4 s by the agent's answer
	}
	for _, mode := range []cache.Mode{cache.Record, cache.Replay} {
		t.Run(mode.String(), func(t *testing.T) {
			s := srv
			if mode == cache.Replay {
				s = nil // no endpoint: every answer from the cache
			}
			res := turnRun(t, voicetest.TurnTaking{Classifier: personas.LLMTurns(newClient(t, s, dir, mode))})
			assert.Equal(t, want, waitEvents(res))
			assert.Equal(t, []time.Duration{0, 7600 * time.Millisecond}, userStarts(res))
		})
	}
	reqs := srv.RequestsTo("/v1/chat/completions")
	// Recorded once: at 3.9 s, and at 7.6 s; the question at 5.4 s is the
	// one at 3.9 s again (nothing new was said), answered from the cache.
	require.Len(t, reqs, 2)
	var last fakeopenai.ChatRequest
	require.NoError(t, json.Unmarshal(reqs[1].Body, &last.Raw))
	var msgs []struct{ Role, Content string }
	require.NoError(t, json.Unmarshal(last.Raw["messages"], &msgs))
	assert.Equal(t, "The end of the call so far:\n"+
		"caller: Is seven free\n"+
		"agent: Let me check that for you\n"+
		"agent: <screen name=\"slots\">\n  <free>\n    <item>19:00</item>\n  </free>\n</screen>\n"+
		"agent: Seven is free\n"+
		"Should the caller speak now?", msgs[1].Content)
	var choice struct {
		Function struct{ Name string } `json:"function"`
	}
	require.NoError(t, json.Unmarshal(last.Raw["tool_choice"], &choice))
	assert.Equal(t, "take_turn", choice.Function.Name)
}
