package restaurant_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// unusedEngines fail the test if the server listens, or speaks when it
// must not: the calls below must fail before that. With greet, speaking
// (the greeting after a valid start) gives a short silence.
type unusedEngines struct {
	t     *testing.T
	greet bool
}

func (u unusedEngines) Synthesize(_ context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	if u.greet {
		return pcm.Silence(req.Rate, 100*time.Millisecond), nil
	}
	u.t.Error("the server synthesised speech")
	return pcm.Chunk{}, errors.New("unused")
}

func (u unusedEngines) Transcribe(context.Context, voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	u.t.Error("the server transcribed audio")
	return voicetest.Transcription{}, errors.New("unused")
}

func TestNewServerRejectsBadConfig(t *testing.T) {
	t.Parallel()
	e := unusedEngines{t: t}
	bad := pcm.DefaultVADConfig()
	bad.ThresholdDB = 0
	for _, tc := range []struct {
		name string
		cfg  restaurant.ServerConfig
		want string
	}{
		{"no TTS", restaurant.ServerConfig{STT: e}, "ServerConfig.TTS is nil"},
		{"no STT", restaurant.ServerConfig{TTS: e}, "ServerConfig.STT is nil"},
		{"negative timeout", restaurant.ServerConfig{TTS: e, STT: e, SilenceTimeout: -time.Second}, "SilenceTimeout is -1s"},
		{"bad VAD", restaurant.ServerConfig{TTS: e, STT: e, VAD: bad}, "ServerConfig.VAD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := restaurant.NewServer(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewServer error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestServerRejectsBadStreams sends malformed Media Streams traffic: the
// server must end the call with a close status and reason that say what
// was wrong, and record it, never panic or hang.
func TestServerRejectsBadStreams(t *testing.T) {
	t.Parallel()
	const start = `{"event":"start","streamSid":"MZ1","start":{"streamSid":"MZ1","callSid":"CA1","mediaFormat":{"encoding":"%s","sampleRate":8000,"channels":1}}}`
	for _, tc := range []struct {
		name string
		msgs []string
		want string
	}{
		{"a-law", []string{strings.Replace(start, "%s", "audio/x-alaw", 1)}, "this agent takes audio/x-mulaw at 8000 Hz mono"},
		{"not JSON", []string{"hello"}, "not a Media Streams message"},
		{"media before start", []string{`{"event":"media","media":{"payload":"AAAA"}}`}, "media before start"},
		{"bad payload", []string{strings.Replace(start, "%s", "audio/x-mulaw", 1), `{"event":"media","media":{"payload":"!!"}}`}, "not base64"},
		{"bad timestamp", []string{strings.Replace(start, "%s", "audio/x-mulaw", 1), `{"event":"media","media":{"timestamp":"soon","payload":"AAAA"}}`}, "timestamp \"soon\""},
		{"unknown event", []string{`{"event":"dance"}`}, `unknown Media Streams event "dance"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := unusedEngines{t: t, greet: strings.Contains(tc.msgs[0], "x-mulaw")}
			srv, err := restaurant.NewServer(restaurant.ServerConfig{TTS: e, STT: e})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			t.Cleanup(func() { srv.Close(); hs.Close() })
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			for _, m := range tc.msgs {
				if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			for err == nil { // the greeting may come first
				_, _, err = ws.Read(ctx)
			}
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusInternalError || !strings.Contains(ce.Reason, tc.want) {
				t.Fatalf("read after bad input: %v; want close 1011 with a reason containing %q", err, tc.want)
			}
			srv.Close()
			calls := srv.Calls()
			if len(calls) != 1 || !strings.Contains(calls[0].Err, tc.want) {
				t.Errorf("call records = %+v, want one whose Err contains %q", calls, tc.want)
			}
		})
	}
}
