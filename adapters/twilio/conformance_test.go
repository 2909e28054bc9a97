package twilio_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback Twilio bot.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{
		Adapter:    "twilio",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Interrupts: true, // the bot's clear
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			cfg := twiliobot.Config{HangUpAfter: p.HangUpAfter}
			if p.LongReply {
				cfg.ReplyDuration = 3 * time.Second
			}
			if p.Brief {
				cfg.ReplyDuration = 200 * time.Millisecond
			}
			if p.Stall == conformance.StallAnswer {
				cfg.Fault = twiliobot.Stall
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, string(f.Data))
			}
			cfg.Listener = p.Listener()
			url := ""
			if p.Stall == conformance.StallDial {
				url = p.BlackHole(t)
			} else {
				url = twiliobot.New(t, cfg).URL
			}
			a := twilio.New(url)
			if p.Net != nil {
				a.NetDial = p.Net.Dial
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			if p.Key != "" {
				// Twilio signs its requests rather than sending a key, but a
				// bot behind a gateway may want one: it is a secret all
				// the same.
				a.Header = http.Header{"Authorization": {"Bearer " + p.Key}}
			}
			return a
		},
		Audio: func(n int) conformance.Frame {
			payload := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, n))
			return conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"payload":"` + payload + `"}}`)
		},
		Echo: func(s string) conformance.Frame {
			name, _ := json.Marshal(s)
			return conformance.Text(`{"event":"mark","streamSid":"{sid}","mark":{"name":` + string(name) + `}}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"payload":"%%%"}}`),
			conformance.Text(`{"event":"dance","streamSid":"{sid}"}`),
			conformance.Text(`{"event":"media","streamSid":"MZ0000","media":{"payload":"AAAA"}}`),
		},
	})
}
