package layercode_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback LayerCode peer.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{
		Adapter:    "layercode",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Handshake:  true, // the authorize request
		ChecksKey:  true,
		Interrupts: true, // the user's turn.start over a reply
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			cfg := layercodepeer.Config{Token: p.Key, HangUpAfter: p.HangUpAfter}
			if p.PeerKey != "" {
				cfg.Token = p.PeerKey
			}
			if p.LongReply {
				// 3.75 s of speech at 150 ms a word, sent at once: the
				// adapter plays it in real time. (Streamed in real time,
				// a delivery that falls behind on a loaded machine lets
				// the adapter's playback catch up, and the barge-in then
				// lands after the reply has played.)
				cfg.Replies = func(n int, _ string) layercodepeer.Reply {
					if n == 1 {
						return layercodepeer.Reply{Text: strings.Repeat("la ", 25)}
					}
					return layercodepeer.Reply{Text: "Okay."}
				}
			}
			if p.Brief {
				cfg.Replies = func(int, string) layercodepeer.Reply { return layercodepeer.Reply{Text: "Okay."} }
			}
			switch p.Stall {
			case conformance.StallAnswer:
				cfg.Fault = layercodepeer.Stall
			case conformance.StallHandshake:
				cfg.Fault = layercodepeer.StallAuthorize
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, string(f.Data))
			}
			cfg.Listener = p.Listener()
			var a *layercode.Agent
			if p.Stall == conformance.StallDial {
				a = layercode.New("http"+strings.TrimPrefix(p.BlackHole(t), "ws"), "agent-test")
			} else {
				peer := layercodepeer.New(t, cfg)
				a = layercode.New(peer.AuthorizeURL, "agent-test")
				a.WebSocketURL = peer.WebSocketURL
			}
			if p.Net != nil {
				a.NetDial, a.HTTPClient = p.Net.Dial, p.Net.HTTPClient()
			}
			if p.Key != "" {
				a.AuthorizeHeader = http.Header{"Authorization": {"Bearer " + p.Key}}
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			return a
		},
		Audio: func(n int) conformance.Frame {
			audio := base64.StdEncoding.EncodeToString(make([]byte, 2*n))
			return conformance.Text(`{"type":"response.audio","content":"` + audio + `","delta_id":"d","turn_id":"t"}`)
		},
		Echo: func(s string) conformance.Frame {
			text, _ := json.Marshal(s)
			return conformance.Text(`{"type":"user.transcript","content":` + string(text) + `,"turn_id":"t"}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			conformance.Text(`{"type":"response.audio","content":"%%%","turn_id":"t"}`),
			conformance.Text(`{"type":"response.audio","content":"AAAA","turn_id":"t"}`),
			conformance.Text(`{"type":"response.dance"}`),
		},
	})
}
