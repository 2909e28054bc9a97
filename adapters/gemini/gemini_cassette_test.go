package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestGeminiCassette records a session with the loopback Live server (a
// tool call answered by the test, a reply that uses its result, a second
// turn), stops the server, and replays the session from the cassette:
// the same transcript, timeline and verdict, with the server gone. The
// recording runs on virtual time, the server on an in-memory network
// (adaptertest.RecordReplayOn).
func TestGeminiCassette(t *testing.T) {
	var peer *geminipeer.Server
	calls := 0
	rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		peer = geminipeer.New(t, geminipeer.Config{Listener: n.Listen(), SpuriousPair: true, Turns: []geminipeer.Turn{
			{ToolCall: &geminipeer.ToolCall{Name: "weather", Args: map[string]any{"city": "Paris"}}, Reply: "The weather is {result}"},
			{Reply: "Goodbye, {heard}"},
		}})
		a := agent(peer)
		a.NetDial = n.Dial
		a.Tools = []gemini.Tool{{Name: "weather"}}
		a.OnToolCall = func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
			calls++
			return json.RawMessage(`{"temp":21}`), nil
		}
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.ToolCalled("weather", nil), judges.Says("Goodbye, thanks."), judges.Turns(2, 2)),
		Script: []voicetest.Step{
			voicetest.UserSays("Weather in Paris?"),
			voicetest.AgentTurn(),
			voicetest.UserSays("thanks."),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if rec.Verdict == nil || len(rec.Passed) != 3 {
		t.Errorf("recorded verdict %v: want three criteria passed", rec.Verdict)
	}
	// The tool handler ran while recording only: the replay answers from
	// the cassette.
	if calls != 1 || len(peer.Sessions()) != 1 {
		t.Errorf("%d tool calls handled, %d sessions on the server: want 1 and 1 (the recording)", calls, len(peer.Sessions()))
	}
}
