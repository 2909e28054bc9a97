package vapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/internal/peers/vapipeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// run runs script against agent at 24 kHz (the adapter resamples to and
// from the call's 16 kHz), with fake speech both ways.
func run(t *testing.T, agent voicetest.Agent, script ...voicetest.Step) *voicetest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := voicetest.Run(ctx, voicetest.Config{
		Name: t.Name(), Agent: agent, UserVoice: fixtures.FakeTTS(), Rate: 24000,
		Pacing: voicetest.PaceFast, Logf: voicetest.TestLogf(t), Script: script,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.TimelineText())
	}
	return res
}

// TestConversation: the call is created as Vapi's WebSocket transport
// documents it, the assistant hears the user's words through the
// resampled PCM, its speech comes back with its transcript, tool call and
// turn end, and Close hangs up with {"type":"hangup"}.
func TestConversation(t *testing.T) { synctest.Test(t, testConversation) }

func testConversation(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := vapipeer.New(t, vapipeer.Config{Listener: n.Listen(), Turns: []vapipeer.Turn{
		{Reply: "A table for {heard}, booked.", Tool: &vapipeer.Tool{Name: "book_table", Args: map[string]any{"people": 2}}},
	}})
	a := vapi.New("vapi-test-key", "asst-1")
	a.BaseURL = bot.URL
	a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
	a.AssistantOverrides = map[string]any{"variableValues": map[string]any{"name": "Ada"}}
	res := run(t, a, voicetest.UserSays("two people"), voicetest.AgentTurn())
	if want := "user: two people\nagent: A table for two people, booked.\n"; res.TranscriptText() != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", res.TranscriptText(), want)
	}
	var tool, heard string
	for _, e := range res.Timeline {
		switch e.Type {
		case voicetest.EventToolCall:
			tool = e.Tool.Name + string(e.Tool.Arguments)
		case voicetest.EventUserTranscript:
			heard = e.Text
		}
	}
	if tool != `book_table{"people":2}` || heard != "two people" {
		t.Errorf("tool call %q and user transcript %q in the timeline, want book_table{\"people\":2} and \"two people\":\n%s", tool, heard, res.TimelineText())
	}
	c, err := bot.WaitCall(t.Context(), 0, func(c vapipeer.Call) bool { return c.Ended })
	if err != nil {
		t.Fatalf("the call did not end: %+v", c)
	}
	if !c.HangUp {
		t.Error("Close did not send {\"type\":\"hangup\"}")
	}
	if c.SampleRate != 16000 || c.Body["assistantId"] != "asst-1" {
		t.Errorf("the call was created with rate %d and body %v", c.SampleRate, c.Body)
	}
	if ov, _ := c.Body["assistantOverrides"].(map[string]any); ov == nil || ov["variableValues"] == nil {
		t.Errorf("assistantOverrides not sent: %v", c.Body)
	}
	if len(c.Heard) != 1 || c.Heard[0] != "two people" || len(c.Errors) > 0 {
		t.Errorf("the assistant heard %q and saw errors %q", c.Heard, c.Errors)
	}
}

// TestCreateErrors: Vapi's refusals fail Connect with what came back and
// what to do; the key is never repeated.
func TestCreateErrors(t *testing.T) {
	bot := vapipeer.New(t, vapipeer.Config{Key: "the-right-key"})
	for _, tc := range []struct {
		name string
		a    *vapi.Agent
		want string
	}{
		{"wrong key", &vapi.Agent{APIKey: "sk-wrong-4242", AssistantID: "a", BaseURL: bot.URL}, "check Agent.APIKey"},
		{"no key", &vapi.Agent{AssistantID: "a", BaseURL: bot.URL}, "Agent.APIKey is empty"},
		{"no assistant", &vapi.Agent{APIKey: "the-right-key", BaseURL: bot.URL}, "exactly one of Agent.AssistantID and Agent.Assistant"},
		{"bad rate", &vapi.Agent{APIKey: "the-right-key", AssistantID: "a", BaseURL: bot.URL, SampleRate: 12345}, "SampleRate"},
		{"bad base", &vapi.Agent{APIKey: "the-right-key", AssistantID: "a", BaseURL: "ftp://x"}, "not an http:// or https:// URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := tc.a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 16000, Logf: t.Logf})
			if err == nil {
				conn.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-wrong-4242") {
				t.Errorf("Connect: %v, want it to say %q and not repeat the key", err, tc.want)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"x","transport":{"provider":"vapi.websocket"}}`))
	}))
	defer srv.Close()
	a := vapi.New("k", "a")
	a.BaseURL = srv.URL
	if _, err := a.Connect(t.Context(), voicetest.Session{Rate: 16000, Logf: t.Logf}); err == nil || !strings.Contains(err.Error(), "websocketCallUrl") {
		t.Errorf("a call without websocketCallUrl: %v", err)
	}
}

// TestTurnEndAndDeltas: the assistant's cumulative partial transcripts
// become deltas that add up to its final transcript, and its
// speech-update stopped ends the turn after all of its audio.
func TestTurnEndAndDeltas(t *testing.T) { synctest.Test(t, testTurnEndAndDeltas) }

func testTurnEndAndDeltas(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := vapipeer.New(t, vapipeer.Config{Listener: n.Listen(), Turns: []vapipeer.Turn{{Reply: "We open at nine tomorrow."}}})
	a := vapi.New("vapi-test-key", "asst-1")
	a.BaseURL = bot.URL
	a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 16000))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	readmecaps.Check(t, "`vapi`", conn.Capabilities())
	defer cancel()
	adaptertest.SayFake(t, ctx, conn, 16000, "When do you open?")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	final, deltas := adaptertest.TurnText(r.Events, voicetest.AgentTranscript)
	if final != "We open at nine tomorrow." || deltas != final {
		t.Errorf("final %q, deltas %q: want both the reply", final, deltas)
	}
	if r.Audio < 500*time.Millisecond {
		t.Errorf("%v of audio before the turn end", r.Audio)
	}
	if last := r.Events[len(r.Events)-1]; last.Kind != voicetest.AgentTurnEnd {
		t.Errorf("last event %s", last.Kind)
	}
}
