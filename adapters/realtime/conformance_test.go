package realtime_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback Realtime server.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{
		Adapter:    "openai-realtime",
		InMemory:   true,
		Handshake:  true, // session.update → session.updated
		ChecksKey:  true,
		Interrupts: true, // response.cancel → a cancelled response.done
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			cfg := realtimepeer.Config{APIKey: p.Key, HangUpAfter: p.HangUpAfter}
			if p.PeerKey != "" {
				cfg.APIKey = p.PeerKey
			}
			if p.LongReply {
				// 8 s of audio, streamed over about 1.6 s.
				cfg.Turns = []realtimepeer.Turn{{Reply: strings.Repeat("la ", 20)}}
				cfg.ChunkDelay = 20 * time.Millisecond
			}
			if p.Stall == conformance.StallAnswer {
				cfg.Fault = realtimepeer.Mute
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, string(f.Data))
			}
			cfg.Listener = p.Listener()
			a := realtime.New("gpt-realtime")
			switch p.Stall {
			case conformance.StallDial:
				a.URL = p.BlackHole(t)
			case conformance.StallHandshake:
				a.URL = p.SilentServer(t)
			default:
				a.URL = realtimepeer.New(t, cfg).URL
			}
			if p.Net != nil {
				a.NetDial = p.Net.Dial
			}
			a.APIKey = p.Key
			if a.APIKey == "" {
				a.APIKey = "sk-test" // not the environment's
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			return a
		},
		Audio: func(n int) conformance.Frame {
			delta := base64.StdEncoding.EncodeToString(make([]byte, 2*n))
			return conformance.Text(`{"type":"response.output_audio.delta","response_id":"resp_x","item_id":"item_x","output_index":0,"content_index":0,"delta":"` + delta + `"}`)
		},
		Echo: func(s string) conformance.Frame {
			text, _ := json.Marshal(s)
			return conformance.Text(`{"type":"conversation.item.input_audio_transcription.completed","item_id":"item_u","content_index":0,"transcript":` + string(text) + `}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			conformance.Text(`{"event_id":"no type"}`),
			conformance.Text(`{"type":"response.output_audio.delta","response_id":"r","item_id":"i","delta":"%%%"}`),
			conformance.Text(`{"type":"response.output_audio.delta","response_id":"r","item_id":"i","delta":"AAAA"}`),
		},
	})
}
