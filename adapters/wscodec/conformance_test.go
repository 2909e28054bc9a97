package wscodec_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback WebSocket bot, in the JSON codec.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{
		Adapter:    "websocket",
		InMemory:   true,
		Interrupts: true, // {"type":"interrupted"}
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			cfg := wsbot.Config{Rate: 16000, HangUpAfter: p.HangUpAfter}
			if p.LongReply {
				cfg.ReplyDuration, cfg.Paced = 3*time.Second, true
			}
			if p.Stall == conformance.StallAnswer {
				cfg.Fault = wsbot.Stall
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, string(f.Data))
			}
			cfg.Listener = p.Listener()
			url := ""
			if p.Stall == conformance.StallDial {
				url = p.BlackHole(t)
			} else {
				url = wsbot.New(t, cfg).URL
			}
			a := wscodec.New(url, wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true}))
			if p.Net != nil {
				a.NetDial = p.Net.Dial
			}
			if p.Key != "" {
				a.Header = http.Header{"Authorization": {"Bearer " + p.Key}}
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			return a
		},
		Audio: func(n int) conformance.Frame {
			audio := base64.StdEncoding.EncodeToString(make([]byte, 2*n))
			return conformance.Text(`{"type":"audio","audio":"` + audio + `","sample_rate":16000}`)
		},
		Echo: func(s string) conformance.Frame {
			text, _ := json.Marshal(s)
			return conformance.Text(`{"type":"log","text":` + string(text) + `}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`{"type":`),
			conformance.Text(`{"type":"audio","audio":"%%%"}`),
			conformance.Text(`{"type":"audio","audio":"AAAA"}`),
			conformance.Text(`{"type":"dance"}`),
		},
	})
}
