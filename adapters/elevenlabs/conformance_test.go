package elevenlabs_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestConformance runs the wire adapters' shared suite against the
// loopback ElevenLabs ConvAI server.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{
		Adapter:    "elevenlabs",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Handshake:  true, // conversation_initiation_metadata
		ChecksKey:  true,
		Interrupts: true, // the server's interruption event
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			cfg := elevenpeer.Config{APIKey: p.Key, HangUpAfter: p.HangUpAfter}
			if p.PeerKey != "" {
				cfg.APIKey = p.PeerKey
			}
			if p.LongReply {
				cfg.Turns = []elevenpeer.Turn{{Reply: strings.Repeat("la ", 20)}}
				cfg.ChunkDelay = 20 * time.Millisecond
			}
			if p.Stall == conformance.StallAnswer {
				cfg.Fault = elevenpeer.Stall
			}
			for _, f := range p.Send {
				cfg.Send = append(cfg.Send, string(f.Data))
			}
			cfg.Listener = p.Listener()
			a := elevenlabs.New("agent_test")
			switch p.Stall {
			case conformance.StallDial:
				a.URL = p.BlackHole(t)
			case conformance.StallHandshake:
				a.URL = p.SilentServer(t)
			default:
				a.URL = elevenpeer.New(t, cfg).URL
			}
			if p.Net != nil {
				a.NetDial = p.Net.Dial
			}
			a.APIKey = p.Key
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			return a
		},
		Audio: func(n int) conformance.Frame {
			audio := base64.StdEncoding.EncodeToString(make([]byte, 2*n))
			return conformance.Text(`{"type":"audio","audio_event":{"audio_base_64":"` + audio + `","event_id":1}}`)
		},
		Echo: func(s string) conformance.Frame {
			text, _ := json.Marshal(s)
			return conformance.Text(`{"type":"user_transcript","user_transcription_event":{"user_transcript":` + string(text) + `}}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			conformance.Text(`{"type":"audio","audio_event":{"audio_base_64":"%%%","event_id":2}}`),
			conformance.Text(`{"type":"audio","audio_event":{"audio_base_64":"AAAA","event_id":3}}`),
		},
	})
}
