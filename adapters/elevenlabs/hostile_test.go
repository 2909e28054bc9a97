package elevenlabs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue #15, item 2: an agent that names an output format like pcm_1 made
// the adapter resample every audio event by 24000×. The formats of the
// initiation metadata are checked against the ones the Agents Platform
// documents, and Connect fails naming the value and the allowed set.
func TestElevenLabsRefusesUndocumentedFormats(t *testing.T) {
	for _, tc := range []struct{ in, out, bad string }{
		{"pcm_16000", "pcm_1", "pcm_1"},
		{"pcm_16000", "pcm_7", "pcm_7"},
		{"pcm_1", "pcm_16000", "pcm_1"},
		{"pcm_16000", "pcm_96000", "pcm_96000"},
		{"pcm_16000", "ulaw_16000", "ulaw_16000"},
		{"pcm_16000", "mp3_44100_128", "mp3_44100_128"},
	} {
		peer := elevenpeer.New(t, elevenpeer.Config{InputFormat: tc.in, OutputFormat: tc.out})
		a := elevenlabs.New("agent_test")
		a.URL = peer.URL
		conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
		if err == nil {
			conn.Close()
			t.Errorf("in %s, out %s: Connect succeeded, want an error naming %s", tc.in, tc.out, tc.bad)
			continue
		}
		var fe *wire.FormatError
		if !errors.As(err, &fe) || fe.Value != tc.bad {
			t.Errorf("in %s, out %s: %v, want a *wire.FormatError naming %s", tc.in, tc.out, err, tc.bad)
		}
		for _, want := range []string{tc.bad, "pcm_8000", "pcm_48000", "ulaw_8000"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("in %s, out %s: error %q does not name %q", tc.in, tc.out, err, want)
			}
		}
	}
}
