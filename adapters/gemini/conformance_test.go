package gemini_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback Gemini Live server.
func TestConformance(t *testing.T) { conformance.Run(t, subject()) }

// FuzzServerMessage fuzzes the adapter's decoding of the server's
// messages with the shared fuzz target.
func FuzzServerMessage(f *testing.F) { conformance.Fuzz(f, subject()) }

// subject describes the adapter and its loopback server to the suite.
func subject() conformance.Subject {
	return conformance.Subject{
		Adapter:    "gemini-live",
		Handshake:  true, // setup → setupComplete
		ChecksKey:  true,
		Interrupts: true, // serverContent.interrupted
		InMemory:   true, // through WSOptions.NetDial
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			// Every turn starts with the service's empty
			// interrupted→turnComplete pair, which the adapter must skip.
			cfg := geminipeer.Config{APIKey: p.Key, HangUpAfter: p.HangUpAfter, SpuriousPair: true, Listener: p.Listener()}
			if p.PeerKey != "" {
				cfg.APIKey = p.PeerKey
			}
			if p.LongReply {
				// 6 s of speech, streamed in real time.
				cfg.Turns = []geminipeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}
				cfg.ChunkDelay = 100 * time.Millisecond
			}
			switch p.Stall {
			case conformance.StallHandshake:
				cfg.Fault = geminipeer.StallSetup
			case conformance.StallAnswer:
				cfg.Fault = geminipeer.Mute
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, geminipeer.Frame{Data: f.Data, Text: !f.Binary})
			}
			a := gemini.New("")
			if p.Stall == conformance.StallDial {
				a.BaseURL = p.BlackHole(t)
			} else {
				a.BaseURL = geminipeer.New(t, cfg).URL
			}
			a.APIKey = p.Key
			if a.APIKey == "" {
				a.APIKey = "test-key"
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			if p.Net != nil {
				a.NetDial = p.Net.Dial
			}
			return a
		},
		Audio: func(n int) conformance.Frame {
			data := base64.StdEncoding.EncodeToString(make([]byte, 2*n))
			return conformance.Frame{Binary: true, Data: []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + data + `"}}]}}}`)}
		},
		Echo: func(s string) conformance.Frame {
			text, _ := json.Marshal(s)
			return conformance.Frame{Binary: true, Data: []byte(`{"serverContent":{"inputTranscription":{"text":` + string(text) + `}}}`)}
		},
		Malformed: []conformance.Frame{
			{Binary: true, Data: []byte(`not json`)},
			{Binary: true, Data: []byte(`{"serverContent":{"turnComplete":"yes"}}`)},
			{Binary: true, Data: []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}}`)},
			{Binary: true, Data: []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=1","data":"AAAA"}}]}}}`)},
			{Binary: true, Data: []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"video/mp4","data":"AAAA"}}]}}}`)},
		},
	}
}
