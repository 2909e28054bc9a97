package realtime_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestRealtimeCassette records a Realtime session with the loopback
// server (a greeting, a reply that calls a tool and says back what it
// heard, a goodbye and the hang-up), stops the server, and replays the
// session from the cassette: the same transcript, tool call, timeline and
// verdict, with no server and no API key.
func TestRealtimeCassette(t *testing.T) {
	var peer *realtimepeer.Server
	adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		peer = bistroPeer(t, n.Listen())
		a := bistroAgent(peer)
		a.NetDial = n.Dial
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge: judges.All(
			judges.Says("Booked: A table for two please"),
			judges.ToolCalled("book", map[string]any{"party": 2}),
			judges.HungUp(),
		),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.UserSays("Thanks"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if n := len(peer.Sessions()); n != 1 {
		t.Errorf("the server saw %d sessions, want the recorded one only", n)
	}
}

// bistroPeer starts the Realtime server of the bistro scenarios: a
// greeting, a reply that calls the tool "book" and says back what it heard
// (it decodes the user's fake speech, fixtures.FakeTTS: proof that the
// audio arrived intact), a goodbye, and the hang-up. It serves on ln, or
// on loopback TCP when ln is nil.
func bistroPeer(t *testing.T, ln net.Listener) *realtimepeer.Server {
	return realtimepeer.New(t, realtimepeer.Config{
		Greeting: "Welcome to the bistro",
		Turns: []realtimepeer.Turn{
			{ToolCall: &realtimepeer.ToolCall{Name: "book", Arguments: `{"party":2}`}, Reply: "Booked: {heard}"},
			{Reply: "Goodbye"},
		},
		HangUpAfter: 3,
		Listener:    ln,
	})
}

// bistroAgent is the adapter of the bistro scenarios: it asks for the
// greeting and the user's transcription, and answers the "book" tool.
func bistroAgent(peer *realtimepeer.Server) *realtime.Agent {
	a := realtimeAgent(peer)
	a.Greeting = true
	a.InputTranscription = "whisper-1"
	a.Tools = []realtime.Tool{{Name: "book"}}
	a.OnToolCall = func(context.Context, voicetest.ToolCall) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}
	return a
}
