package composable_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/composable"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// slowSTT and slowTTS take d before answering, as an engine's network
// round trip would (on virtual time, exactly d).
type slowSTT struct {
	voicetest.STT
	d time.Duration
}

func (s slowSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	time.Sleep(s.d)
	return s.STT.Transcribe(ctx, req)
}

type slowTTS struct {
	voicetest.TTS
	d time.Duration
}

func (s slowTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	time.Sleep(s.d)
	return s.TTS.Synthesize(ctx, req)
}

// TestComposableReportsItsParts: on virtual time the parts of the agent's
// response time are exact. The STT takes 150 ms, each of the two model
// calls (a tool call, then the answer) 400 ms, the tool 50 ms and the TTS
// 100 ms: the reply's first audio comes 1100 ms after the user stopped,
// and the greeting's, 100 ms after the start (TTS only).
func TestComposableReportsItsParts(t *testing.T) {
	model := &scriptLLM{reply: func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
		time.Sleep(400 * time.Millisecond)
		if n == 1 {
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{
				{ID: "call_1", Name: "book", Arguments: json.RawMessage(`{"party":2}`)}}}}, nil
		}
		return voicetest.ChatResponse{Message: voicetest.ChatMessage{Content: "Booked."}}, nil
	}}
	a := composable.New(slowSTT{fixtures.FakeSTT(), 150 * time.Millisecond}, model, slowTTS{fixtures.FakeTTS(), 100 * time.Millisecond})
	a.Greeting = "Hello."
	a.Tools = []voicetest.ToolSpec{{Name: "book"}}
	a.ToolHandler = func(context.Context, voicetest.ToolCall) (json.RawMessage, error) {
		time.Sleep(50 * time.Millisecond)
		return json.RawMessage(`{"ok":true}`), nil
	}
	a.VirtualClock = true
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: a, UserVoice: fixtures.FakeTTS(), Rate: pcm.Rate16k,
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{voicetest.AgentTurn(), voicetest.UserSays("A table for two."), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	m := res.Metrics
	if len(m.Turns) != 2 {
		t.Fatalf("turns %+v", m.Turns)
	}
	if p := m.Turns[0].Parts; p == nil || *p != (voicetest.Timings{TTS: 100 * time.Millisecond}) {
		t.Errorf("greeting parts %+v, want the TTS's 100 ms", p)
	}
	want := voicetest.Timings{STT: 150 * time.Millisecond, LLM: 800 * time.Millisecond, Tools: 50 * time.Millisecond, TTS: 100 * time.Millisecond}
	if p := m.Turns[1].Parts; p == nil || *p != want {
		t.Errorf("reply parts %+v, want %+v", p, want)
	}
	if l := m.Turns[1].Latency; l != 1100*time.Millisecond || m.Turns[1].TTFB != l {
		t.Errorf("latency %v, TTFB %v, want 1100 ms: the parts add up", l, m.Turns[1].TTFB)
	}
	// The tool call is the reply's first event, after the STT and the
	// first model call.
	if f := m.Turns[1].FirstEvent; f != 550*time.Millisecond {
		t.Errorf("first event %v, want 550 ms", f)
	}
	if m.Parts.LLM.P50 != 800*time.Millisecond || m.Parts.STT.N != 1 || m.Parts.TTS.N != 2 || m.Parts.TTS.Max != 100*time.Millisecond {
		t.Errorf("parts %+v", m.Parts)
	}
	attrs := map[string]string{}
	for _, kv := range res.Attrs() {
		attrs[kv.Key] = kv.Value
	}
	for k, v := range map[string]string{"voicetest.stt_p50_ms": "150", "voicetest.llm_p50_ms": "800", "voicetest.llm_max_ms": "800",
		"voicetest.tools_p50_ms": "50", "voicetest.tts_p50_ms": "100", "voicetest.tts_max_ms": "100"} {
		if attrs[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, attrs[k], v)
		}
	}
}

// TestComposablePartsOnTheRealClock: the same parts measured on the real
// clock, with engines reached over loopback HTTP (the OpenAI-compatible
// double): transcription and chat each answer after a set delay, so each
// part is at least that and the latency at least their sum. The user's
// audio is sent fast (PaceFast): the parts are timed from the end of the
// utterance, so its real-time playback would only add wall time.
//
// It runs in parallel (no process-wide state; the parts' bounds are lower
// bounds, which other work on the machine cannot break).
func TestComposablePartsOnTheRealClock(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.New(t)
	srv.HandleTranscription(func(fakeopenai.TranscriptionRequest) (string, error) {
		time.Sleep(150 * time.Millisecond)
		return "A table for two.", nil
	})
	srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		time.Sleep(250 * time.Millisecond)
		return fakeopenai.ChatReply{Content: "Booked."}, nil
	})
	opts := []speech.Option{speech.WithBaseURL(srv.BaseURL()), speech.WithAPIKey(srv.APIKey())}
	stt, err := speech.NewOpenAISTT(opts...)
	if err != nil {
		t.Fatal(err)
	}
	tts, err := speech.NewOpenAITTS(opts...)
	if err != nil {
		t.Fatal(err)
	}
	a := composable.New(stt, composableLLM(t, srv, t.TempDir(), cache.Off), tts)
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: a, UserVoice: fixtures.FakeTTS(), Rate: pcm.Rate16k, Pacing: voicetest.PaceFast,
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{voicetest.UserSays("A table for two."), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	m := res.Metrics
	if len(m.Turns) != 1 || m.Turns[0].Parts == nil {
		t.Fatalf("turns %+v", m.Turns)
	}
	p := *m.Turns[0].Parts
	t.Logf("parts %+v, latency %v", p, m.Turns[0].Latency)
	check := func(what string, got, lo, hi time.Duration) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %v, want %v to %v", what, got, lo, hi)
		}
	}
	check("STT", p.STT, 150*time.Millisecond, 2*time.Second)
	check("LLM", p.LLM, 250*time.Millisecond, 2*time.Second)
	check("TTS", p.TTS, time.Microsecond, 2*time.Second)
	if p.Tools != 0 {
		t.Errorf("tools %v, want none", p.Tools)
	}
	sum := p.STT + p.LLM + p.TTS
	check("latency", m.Turns[0].Latency, sum, sum+time.Second)
}
