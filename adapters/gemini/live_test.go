package gemini_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestGeminiLiveService talks to Google's real Gemini Live service, to
// check the adapter against the service the loopback double models. It
// runs only when asked: VOICETEST_GEMINI_LIVE=1 and GEMINI_API_KEY set
// (and, optionally, GEMINI_LIVE_MODEL); it needs the internet and costs a
// few cents.
func TestGeminiLiveService(t *testing.T) {
	if os.Getenv("VOICETEST_GEMINI_LIVE") != "1" || os.Getenv("GEMINI_API_KEY") == "" {
		t.Skip("talks to Google's Gemini Live service: set VOICETEST_GEMINI_LIVE=1 and GEMINI_API_KEY to run it")
	}
	a := gemini.New(os.Getenv("GEMINI_LIVE_MODEL"))
	a.SystemInstruction = "Answer in one short sentence."
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	conn, err := a.Connect(ctx, adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SendText(ctx, "Say hello."); err != nil {
		t.Fatal(err)
	}
	var audio time.Duration
	var text string
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv after %v of audio: %v", audio, err)
		}
		switch ev.Kind {
		case voicetest.AgentAudio:
			audio += ev.Audio.Duration()
		case voicetest.AgentTranscript:
			if ev.Final {
				text = ev.Text
			}
		}
		if ev.Kind == voicetest.AgentTurnEnd {
			break
		}
	}
	t.Logf("the model said %q in %v of audio", text, audio)
	if audio == 0 || text == "" {
		t.Errorf("audio %v, transcript %q", audio, text)
	}
}
