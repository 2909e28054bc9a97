package gemini_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Every inline audio part's MIME type is checked, also when the one
// before it was accepted (the adapter remembers the last type it
// accepted so as not to parse each message of a stream again): a bad
// type after a good one is a *wire.FrameError, and the good type after it
// is audio again.
func TestGeminiAudioTypeEachMessage(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(make([]byte, 960)) // 20 ms at 24 kHz
	part := func(typ string) geminipeer.Frame {
		return geminipeer.Frame{Data: []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"` + typ + `","data":"` + data + `"}}]}}}`)}
	}
	steps := []struct {
		typ     string
		wantErr string // "" for 480 samples of AgentAudio
	}{
		{"audio/pcm;rate=24000", ""},
		{"audio/pcm;rate=24000", ""},
		{"audio/pcm;rate=1", "rate"},
		{"audio/pcm;rate=24000", ""},
		{"video/mp4", `inline data of type "video/mp4"`},
		{"audio/pcm;rate=abc", "bad rate"},
		{"audio/pcm", ""}, // the Live API's 24 kHz
		{"audio/pcm", ""},
	}
	var send []geminipeer.Frame
	for _, s := range steps {
		send = append(send, part(s.typ))
	}
	peer := geminipeer.New(t, geminipeer.Config{Send: send})
	conn := adaptertest.DialAgent(t, agent(peer), adaptertest.Session(t, 24000))
	for i, s := range steps {
		ev, err := conn.Recv(t.Context())
		if s.wantErr == "" {
			if err != nil || ev.Kind != voicetest.AgentAudio || ev.Audio.Len() != 480 {
				t.Fatalf("message %d (%s): %v %v of %d samples, want 480 samples of AgentAudio", i, s.typ, ev.Kind, err, ev.Audio.Len())
			}
			continue
		}
		var fe *wire.FrameError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), s.wantErr) {
			t.Fatalf("message %d (%s): %v %v, want a *wire.FrameError saying %q", i, s.typ, ev.Kind, err, s.wantErr)
		}
	}
}
