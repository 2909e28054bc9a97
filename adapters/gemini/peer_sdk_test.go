package gemini_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"google.golang.org/genai"
)

// TestPeerSDKTurn: the double these tests run against
// (internal/peers/geminipeer) speaks the Live API as Google's own Go SDK
// sees it: the SDK connects (setup → setupComplete), sends one activity of
// 16 kHz audio, and reads the input transcription, the output
// transcription and audio, generationComplete and turnComplete, in its own
// types. It lives here, next to the adapter's own checks against genai
// (equiv_test.go), rather than in geminipeer's package: this test binary
// links genai anyway, and a test binary of its own for geminipeer linked
// genai's ~130 MB of objects again at every `go test ./...` for this one
// test.
func TestPeerSDKTurn(t *testing.T) {
	peer := geminipeer.New(t, geminipeer.Config{APIKey: "k"})
	ctx := t.Context()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: peer.URL, APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.Live.Connect(ctx, "m", &genai.LiveConnectConfig{
		ResponseModalities:  []genai.Modality{genai.ModalityAudio},
		RealtimeInputConfig: &genai.RealtimeInputConfig{AutomaticActivityDetection: &genai.AutomaticActivityDetection{Disabled: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "hello there", Rate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []genai.LiveRealtimeInput{
		{ActivityStart: &genai.ActivityStart{}},
		{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: pcm.EncodePCM16(nil, speech.Samples)}},
		{ActivityEnd: &genai.ActivityEnd{}},
	} {
		if err := sess.SendRealtimeInput(in); err != nil {
			t.Fatal(err)
		}
	}
	var heard, said strings.Builder
	var audio time.Duration
	var generation bool
	for {
		msg, err := sess.Receive()
		if err != nil {
			t.Fatal(err)
		}
		sc := msg.ServerContent
		if sc == nil {
			continue
		}
		if sc.InputTranscription != nil {
			heard.WriteString(sc.InputTranscription.Text)
		}
		if sc.OutputTranscription != nil {
			said.WriteString(sc.OutputTranscription.Text)
		}
		if mt := sc.ModelTurn; mt != nil {
			for _, p := range mt.Parts {
				if p.InlineData == nil || p.InlineData.MIMEType != "audio/pcm;rate=24000" {
					t.Fatalf("part %+v, want 24 kHz audio", p)
				}
				audio += pcm.DurationOf(len(p.InlineData.Data)/2, 24000)
			}
		}
		generation = generation || sc.GenerationComplete
		if sc.TurnComplete {
			break
		}
	}
	if heard.String() != "hello there" || strings.TrimSpace(said.String()) != "Reply 1." || audio == 0 || !generation {
		t.Errorf("heard %q, said %q, %v of audio, generationComplete %v", heard.String(), said.String(), audio, generation)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ss, err := peer.WaitSession(ctx, 0, func(s geminipeer.Session) bool { return s.Replies == 1 })
	if err != nil || len(ss.Errors) > 0 || ss.Setup["model"] != "models/m" {
		t.Errorf("session %+v, %v", ss, err)
	}
}
