package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"google.golang.org/genai"
)

// agent returns an agent that reaches peer with its key.
func agent(peer *geminipeer.Server) *gemini.Agent {
	a := gemini.New("gemini-test-model")
	a.BaseURL, a.APIKey = peer.URL, "test-key"
	return a
}

// say sends text as one utterance of fake speech at 24 kHz, which the
// peer decodes.
func say(t *testing.T, ctx context.Context, conn voicetest.Conn, text string) {
	t.Helper()
	adaptertest.SayFake(t, ctx, conn, 24000, text)
}

// The setup message carries what the Agent asks for, in the Live API's
// shape: the model, audio responses, the voice, the system instruction,
// the tools, both transcriptions, and automatic activity detection off.
func TestGeminiSetup(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{})
	a := agent(peer)
	a.SystemInstruction = "You book tables."
	a.Voice = "Algieba"
	a.Tools = []gemini.Tool{{Name: "book", Description: "Books a table.", Parameters: json.RawMessage(`{"type":"object","properties":{"size":{"type":"integer"}}}`)}}
	a.Configure = func(c *genai.LiveConnectConfig) { c.Temperature = genai.Ptr[float32](0.25) }
	adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))
	ss := peer.Sessions()[0]
	if ss.Version != "v1beta" {
		t.Errorf("API version %q", ss.Version)
	}
	got, _ := json.Marshal(ss.Setup)
	for _, want := range []string{
		`"model":"models/gemini-test-model"`,
		`"responseModalities":["AUDIO"]`,
		`"temperature":0.25`,
		`"prebuiltVoiceConfig":{"voiceName":"Algieba"}`,
		`"systemInstruction":{"parts":[{"text":"You book tables."}]`,
		`"functionDeclarations":[{"description":"Books a table.","name":"book","parametersJsonSchema":{"properties":{"size":{"type":"integer"}},"type":"object"}}]`,
		`"inputAudioTranscription":{}`,
		`"outputAudioTranscription":{}`,
		`"realtimeInputConfig":{"activityHandling":"START_OF_ACTIVITY_INTERRUPTS","automaticActivityDetection":{"disabled":true}}`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("setup lacks %s:\n%s", want, got)
		}
	}
	if len(ss.Errors) > 0 {
		t.Errorf("server errors %q", ss.Errors)
	}
}

// One user turn is one activity of 16 kHz audio; the answer comes back as
// 24 kHz audio (here resampled to the session's 24 kHz, so unchanged)
// with both transcripts, and ends with one AgentTurnEnd: the service's
// empty interrupted→turnComplete pair at the start of the activity is
// skipped, not reported as a barge-in nor as the end of the turn.
func TestGeminiTurn(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{SpuriousPair: true})
	conn := adaptertest.DialAgent(t, agent(peer), adaptertest.Session(t, 24000))
	readmecaps.Check(t, "`gemini`", conn.Capabilities())
	ctx := t.Context()
	say(t, ctx, conn, "A table for two.")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if got := adaptertest.Kinds(r.Events); strings.Contains(got, "agent_interrupted") || strings.Count(got, "agent_turn_end") != 1 {
		t.Errorf("events %s: the empty pair must be skipped", got)
	}
	user, _ := adaptertest.TurnText(r.Events, voicetest.UserTranscript)
	agentText, deltas := adaptertest.TurnText(r.Events, voicetest.AgentTranscript)
	if user != "A table for two." || agentText != "Reply 1." || strings.TrimSpace(deltas) != "Reply 1." {
		t.Errorf("user %q, agent %q (deltas %q)", user, agentText, deltas)
	}
	want, _ := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "Reply 1.", Rate: 24000})
	adaptertest.WantDurationNear(t, "reply audio", r.Audio, want.Duration(), 5*time.Millisecond)
	ss := peer.Sessions()[0]
	if ss.Activities != 1 || len(ss.InputRates) != 1 || ss.InputRates[0] != 16000 || len(ss.Errors) > 0 {
		t.Errorf("server saw %d activities at rates %v, errors %q", ss.Activities, ss.InputRates, ss.Errors)
	}
	// The second turn is a second activity.
	say(t, ctx, conn, "At seven.")
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Reply 2." {
		t.Errorf("second reply %q", final)
	}
	if ss := peer.Sessions()[0]; ss.Activities != 2 || strings.Join(ss.Heard, "|") != "A table for two.|At seven." {
		t.Errorf("server heard %q in %d activities", ss.Heard, ss.Activities)
	}
}

// A barge-in is the user's next activity: the model's reply is cut
// (AgentInterrupted), the turnComplete of the cut reply does not end the
// next turn, and the answer to the barge-in follows.
func TestGeminiBargeIn(t *testing.T) { synctest.Test(t, testGeminiBargeIn) }

func testGeminiBargeIn(t *testing.T) {
	peer, a := memPeer(t, geminipeer.Config{
		Turns:      []geminipeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}, {Reply: "Sure, {heard}"}},
		ChunkDelay: 100 * time.Millisecond,
	})
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))
	ctx := t.Context()
	say(t, ctx, conn, "Tell me a story.")
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
	say(t, ctx, conn, "Stop.")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	kinds := adaptertest.Kinds(r.Events)
	i := strings.Index(kinds, "agent_interrupted")
	if i < 0 || strings.Count(kinds, "agent_turn_end") != 1 {
		t.Fatalf("events %s: want agent_interrupted, then the reply to the barge-in ending with one agent_turn_end", kinds)
	}
	var after []voicetest.AgentEvent
	for j, ev := range r.Events {
		if ev.Kind == voicetest.AgentInterrupted {
			after = r.Events[j+1:]
		}
	}
	if final, _ := adaptertest.TurnText(after, voicetest.AgentTranscript); final != "Sure, Stop." {
		t.Errorf("the reply after the barge-in says %q", final)
	}
	if ss := peer.Sessions()[0]; ss.Interruptions != 1 || len(ss.Errors) > 0 {
		t.Errorf("server: %d interruptions, errors %q", ss.Interruptions, ss.Errors)
	}
	// Frames and their bytes both ways, the server's interrupted as the
	// one clear.
	if w := conn.(voicetest.WireStatsReporter).WireStats(); w.Adapter != "gemini-live" || w.FramesIn < 3 || w.FramesOut < 4 || w.Clears != 1 || w.BytesIn == 0 || w.BytesOut == 0 {
		t.Errorf("wire stats %+v", w)
	}
}

// Tool calls are answered from the test's handler: an object result is
// the function response, anything else is wrapped in "output", an error
// in "error"; both calls and results are reported as events.
func TestGeminiToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result json.RawMessage
		err    error
		want   string
	}{
		{"object", json.RawMessage(`{"temp":21}`), nil, `{"temp":21}`},
		{"scalar", json.RawMessage(`"sunny"`), nil, `{"output":"sunny"}`},
		{"error", nil, errors.New("no such city"), `{"error":"no such city"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer := geminipeer.New(t, geminipeer.Config{Turns: []geminipeer.Turn{{
				ToolCall: &geminipeer.ToolCall{Name: "weather", Args: map[string]any{"city": "Paris"}},
				Reply:    "The weather is {result}",
			}}})
			a := agent(peer)
			a.Tools = []gemini.Tool{{Name: "weather"}}
			var got voicetest.ToolCall
			a.OnToolCall = func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
				got = call
				return tc.result, tc.err
			}
			conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))
			say(t, t.Context(), conn, "Weather in Paris?")
			r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			if k := adaptertest.Kinds(r.Events); !strings.Contains(k, "tool_call tool_result") {
				t.Errorf("events %s", k)
			}
			if got.Name != "weather" || got.ID != "call_1" || string(got.Arguments) != `{"city":"Paris"}` {
				t.Errorf("handler got %+v", got)
			}
			if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "The weather is "+tc.want {
				t.Errorf("reply %q", final)
			}
			ss := peer.Sessions()[0]
			want := `{"id":"call_1","name":"weather","response":` + tc.want + `}`
			if len(ss.ToolResponses) != 1 || ss.ToolResponses[0] != want {
				t.Errorf("server got tool responses %q, want %s", ss.ToolResponses, want)
			}
		})
	}
}

// goAway is an error from Recv that says what it means; the Conn goes on.
func TestGeminiGoAway(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{GoAwayAfter: 1})
	conn := adaptertest.DialAgent(t, agent(peer), adaptertest.Session(t, 24000))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	say(t, ctx, conn, "Hello.")
	var goAway *gemini.GoAwayError
	for {
		_, err := conn.Recv(ctx)
		if err == nil {
			continue
		}
		if !errors.As(err, &goAway) {
			t.Fatalf("Recv: %v, want a *gemini.GoAwayError", err)
		}
		break
	}
	if goAway.TimeLeft != 5*time.Second || !strings.Contains(goAway.Error(), "5s") {
		t.Errorf("goAway %v", goAway)
	}
	say(t, ctx, conn, "Still there?")
	if r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd)); r.Audio == 0 {
		t.Error("no reply after goAway")
	}
}

// SendText is a user turn of its own: one activity holding the text.
func TestGeminiSendText(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{Turns: []geminipeer.Turn{{Reply: "You wrote {heard}"}}})
	conn := adaptertest.DialAgent(t, agent(peer), adaptertest.Session(t, 16000))
	if err := conn.SendText(t.Context(), "hello there"); err != nil {
		t.Fatal(err)
	}
	r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "You wrote hello there" {
		t.Errorf("reply %q", final)
	}
	for _, ev := range r.Events {
		if ev.Kind == voicetest.AgentAudio && ev.Audio.Rate != 16000 {
			t.Fatalf("audio at %d Hz on a 16 kHz session", ev.Audio.Rate)
		}
	}
	if err := conn.SendText(t.Context(), " "); err == nil {
		t.Error("blank text accepted")
	}
}

// The key comes from GEMINI_API_KEY when Agent.APIKey is empty; without
// any, Connect says what to set. A key the server refuses fails Connect
// with the server's reason, without repeating the key.
func TestGeminiKeys(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{APIKey: "env-key"})
	a := gemini.New("")
	a.BaseURL = peer.URL
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "env-key")
	adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))

	t.Setenv("GEMINI_API_KEY", "")
	if _, err := a.Connect(t.Context(), adaptertest.Session(t, 24000)); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("Connect without a key: %v", err)
	}

	a.APIKey = "AIza-wrong-key-1234567890"
	_, err := a.Connect(t.Context(), adaptertest.Session(t, 24000))
	if err == nil || !strings.Contains(err.Error(), "API key not valid") || !strings.Contains(err.Error(), "1007") || strings.Contains(err.Error(), a.APIKey) {
		t.Errorf("Connect with a wrong key: %v", err)
	}

	a.APIKey = "env-key"
	a.PingInterval = time.Second
	if _, err := a.Connect(t.Context(), adaptertest.Session(t, 24000)); err == nil || !strings.Contains(err.Error(), "PingInterval") {
		t.Errorf("Connect with a PingInterval: %v", err)
	}
	a.PingInterval = 0
	a.Tools = []gemini.Tool{{Name: "x", Parameters: json.RawMessage(`{`)}}
	if _, err := a.Connect(t.Context(), adaptertest.Session(t, 24000)); err == nil || !strings.Contains(err.Error(), "Parameters") {
		t.Errorf("Connect with broken tool parameters: %v", err)
	}
}

// A server error message is an *gemini.Error from Recv, and the
// conversation goes on.
func TestGeminiServerError(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{Send: []geminipeer.Frame{{Data: []byte(`{"error":{"code":400,"message":"Request contains an invalid argument."}}`)}}})
	conn := adaptertest.DialAgent(t, agent(peer), adaptertest.Session(t, 24000))
	_, err := conn.Recv(t.Context())
	var ge *gemini.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Error(), "invalid argument") {
		t.Fatalf("Recv: %v, want a *gemini.Error with the server's message", err)
	}
	say(t, t.Context(), conn, "Hello.")
	if r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd)); r.Audio == 0 {
		t.Error("no reply after the error")
	}
}

// A scenario through the runner: two turns with the model's own
// transcripts, no STT.
func TestGeminiScenario(t *testing.T) { synctest.Test(t, testGeminiScenario) }

func testGeminiScenario(t *testing.T) {
	_, a := memPeer(t, geminipeer.Config{SpuriousPair: true, Turns: []geminipeer.Turn{{Reply: "Sure, {heard}"}, {Reply: "Done."}}})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("A table for two."),
			voicetest.AgentTurn(),
			voicetest.UserSays("Thanks."),
			voicetest.AgentTurn(),
		},
	})
	want := "user: A table for two.\nagent: Sure, A table for two.\nuser: Thanks.\nagent: Done.\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}
