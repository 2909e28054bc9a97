package wscodec_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestDecodedAudioOwnsItsSamples: the sessions decode each frame into a
// buffer they reuse, and the runner keeps every AgentAudio event's samples
// in the Recording until the Result is gone (Segment.Audio lays them out
// on demand). An event must own its samples: decoding the next frame
// must not change the last one's.
func TestDecodedAudioOwnsItsSamples(t *testing.T) {
	const rate = pcm.Rate16k
	pcmFrame := func(v int16) []byte {
		s := make([]int16, 160)
		for i := range s {
			s[i] = v
		}
		return pcm.EncodePCM16(nil, s)
	}
	for _, tc := range []struct {
		name  string
		codec wscodec.Codec
		frame func(v int16) wscodec.Frame
	}{
		{"raw PCM", wscodec.RawPCM(rate), func(v int16) wscodec.Frame { return wscodec.Frame{Binary: true, Data: pcmFrame(v)} }},
		{"JSON", wscodec.JSONBase64(wscodec.JSONOptions{Rate: rate}), func(v int16) wscodec.Frame {
			return wscodec.Frame{Data: fmt.Appendf(nil, `{"type":"audio","audio":%q,"sample_rate":%d}`, base64.StdEncoding.EncodeToString(pcmFrame(v)), rate)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, _, err := tc.codec.Open(voicetest.Session{Name: "owned", Rate: rate, Logf: func(string, ...any) {}})
			if err != nil {
				t.Fatal(err)
			}
			first, err := sess.Decode(nil, tc.frame(1000))
			if err != nil || len(first) != 1 || first[0].Kind != voicetest.AgentAudio {
				t.Fatalf("first frame: %+v, %v; want one AgentAudio event", first, err)
			}
			if _, err := sess.Decode(nil, tc.frame(2000)); err != nil {
				t.Fatal(err)
			}
			if got := first[0].Audio.Samples; slices.ContainsFunc(got, func(v int16) bool { return v != 1000 }) {
				t.Errorf("the first event's samples became %v… after the second frame: they share the session's decode buffer", got[:4])
			}
		})
	}
}
