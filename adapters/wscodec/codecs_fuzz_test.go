package wscodec_test

import (
	"fmt"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/voicetest"
)

// FuzzWebSocketCodecDecode feeds arbitrary frames, text and binary, to the
// generic WebSocket codecs (JSON with base64 audio, and raw PCM) at several
// session rates: Decode must never panic, must return well-formed events at
// the session rate, and must not keep the frame's buffer (the adapter reuses
// it), which the fuzzer checks by overwriting the frame after each call.
func FuzzWebSocketCodecDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio","audio":"AAAAAA==","sample_rate":16000}`,
		`{"type":"audio","audio":"AAA=","sample_rate":8000}`,
		`{"type":"audio","audio":"AAAA","sample_rate":-1}`,
		`{"type":"transcript","text":"hi","final":true}`,
		`{"type":"tool_call","name":"book","arguments":{"party":2}}`,
		`{"type":"tool_result","name":"book","result":"ok"}`,
		`{"type":"turn_end"}`, `{"type":"hangup","reason":"bye"}`, `{"type":"dance"}`, `{}`, ``,
	} {
		f.Add([]byte(s), false, uint8(0))
	}
	f.Add([]byte{1, 2, 3}, true, uint8(1))
	f.Add([]byte{1, 2, 3, 4}, true, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, binary bool, which uint8) {
		rate := []int{8000, 16000, 24000}[int(which)%3]
		var codec wscodec.Codec
		if which&4 == 0 {
			codec = wscodec.JSONBase64(wscodec.JSONOptions{Rate: []int{0, 16000, 24000}[int(which>>3)%3], UnknownAsData: which&8 != 0})
		} else {
			codec = wscodec.RawPCM([]int{8000, 16000, 24000}[int(which>>3)%3])
		}
		sess, _, err := codec.Open(voicetest.Session{Name: "fuzz", Rate: rate, Logf: func(string, ...any) {}})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		frame := append([]byte(nil), data...)
		evs, err := sess.Decode(nil, wscodec.Frame{Binary: binary, Data: frame})
		before := fmt.Sprintf("%+v", evs)
		for i := range frame {
			frame[i] ^= 0xFF // the adapter reuses its buffer
		}
		if after := fmt.Sprintf("%+v", evs); after != before {
			t.Fatalf("the events changed with the frame's buffer: they refer to it\nbefore %s\nafter  %s", before, after)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no message")
			}
			return
		}
		for _, ev := range evs {
			switch ev.Kind {
			case voicetest.AgentAudio:
				if ev.Audio.Rate != rate || ev.Audio.Validate() != nil {
					t.Fatalf("audio at %d Hz for a %d Hz session: %v", ev.Audio.Rate, rate, ev.Audio.Validate())
				}
			case voicetest.AgentToolCall, voicetest.AgentToolResult:
				if ev.Tool == nil {
					t.Fatalf("%s without Tool", ev.Kind)
				}
			case voicetest.AgentTranscript, voicetest.UserTranscript, voicetest.AgentData, voicetest.AgentTurnEnd,
				voicetest.AgentInterrupted, voicetest.AgentHangUp, voicetest.AgentLog:
			default:
				t.Fatalf("event of unknown kind %d", ev.Kind)
			}
		}
	})
}
