package webrtc_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// audioMagic starts the conformance frames that stand for audio on the
// track (Subject.Audio): the rest is PCM16 at 48 kHz, which the double
// sends as Opus packets.
var audioMagic = []byte("voicetest-audio-48k:")

// tone returns n samples of a 440 Hz tone at 48 kHz: sound, which the
// adapter's silence gate lets through.
func tone(n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/webrtcpeer.Rate))
	}
	return out
}

// start returns the Subject.Start of a bot that speaks RTVI or not: on
// the check's virtual network when the suite gives it one (p.Net, see
// network), otherwise on the machine's loopback.
//
// How the suite's frames reach the adapter: text frames are data channel
// text messages, binary ones data channel binary messages, and audio
// frames (audioMagic) Opus on the audio track, except one the suite makes
// larger than MaxFrameBytes: that one goes on the data channel, the only
// place a WebRTC peer can send a message that large (an RTP packet is
// bounded by the path's MTU), from a bot that ignores the max-message-size
// the adapter offers.
func start(rtviOn bool) func(t *testing.T, p conformance.Peer) voicetest.Agent {
	return func(t *testing.T, p conformance.Peer) voicetest.Agent {
		cfg := webrtcpeer.Config{RTVI: rtviOn, HangUpAfter: p.HangUpAfter, Key: p.Key}
		if p.PeerKey != "" {
			cfg.Key = p.PeerKey
		}
		if p.LongReply {
			cfg.Turns = []webrtcpeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}
		}
		if p.Brief {
			cfg.Turns = []webrtcpeer.Turn{{Reply: "Ok."}, {Reply: "Ok."}, {Reply: "Ok."}}
		}
		switch p.Stall {
		case conformance.StallAnswer:
			cfg.Fault = webrtcpeer.Mute
		case conformance.StallHandshake:
			cfg.Fault = webrtcpeer.NoMedia
		}
		for _, f := range p.Send {
			pcm16, audio := bytes.CutPrefix(f.Data, audioMagic)
			switch {
			case audio && p.MaxFrameBytes > 0 && int64(len(f.Data)) > p.MaxFrameBytes:
				cfg.Send = append(cfg.Send, webrtcpeer.Message{Data: f.Data, Binary: true})
				cfg.IgnoreMaxMessageSize = true
			case audio:
				samples, err := pcm.DecodePCM16(nil, pcm16)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Send = append(cfg.Send, webrtcpeer.Message{Audio: samples})
			default:
				cfg.Send = append(cfg.Send, webrtcpeer.Message{Data: f.Data, Binary: f.Binary})
			}
		}
		var n *network
		if p.Net != nil {
			n = newNetwork(t, p.Net)
		}
		url := ""
		if p.Stall == conformance.StallDial {
			url = "http://" + strings.TrimPrefix(p.BlackHole(t), "ws://")
		} else {
			url = n.bot(t, cfg).URL
		}
		a := n.agent(url)
		a.RTVI = rtviOn
		if p.Key != "" {
			a.Header = http.Header{"Authorization": {"Bearer " + p.Key}}
		}
		a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
		return a
	}
}

// rtviMessage returns an RTVI server message as a text frame.
func rtviMessage(typ string, data any) conformance.Frame {
	b, _ := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "data": data})
	return conformance.Text(string(b))
}

// subject returns the suite's Subject for a bot that speaks RTVI or not.
func subject(rtviOn bool) conformance.Subject {
	return conformance.Subject{
		Adapter:    "webrtc",
		Handshake:  true, // ICE, DTLS and the data channel after the answer
		ChecksKey:  true, // the offer endpoint answers 401
		Interrupts: rtviOn,
		Start:      start(rtviOn),
		InMemory:   true, // and the call's packets on a vnet.Net (network)
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Audio: func(n int) conformance.Frame {
			return conformance.Frame{Data: append(append([]byte(nil), audioMagic...), pcm.EncodePCM16(nil, tone(n))...), Binary: true}
		},
		Echo: func(s string) conformance.Frame { return rtviMessage("server-message", map[string]any{"text": s}) },
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			{Data: []byte{1, 2, 3}, Binary: true},
			conformance.Text(`{"type":"signalling","message":{"type":"dance"}}`),
			rtviMessage("bot-tts-text", "not an object"),
			rtviMessage("llm-function-call-in-progress", map[string]any{"function_name": "f"}),
		},
	}
}

// TestConformance runs the wire adapters' shared suite against the
// loopback WebRTC bot with RTVI on its data channel: every check on
// virtual time, the bot and the adapter in a testing/synctest bubble on a
// virtual network (see network), and the conversation once more on the
// machine's loopback (TCP and UDP) on the real clock
// (RealTimeConversation). (A bot without RTVI differs only in what the
// data channel adds, which TestPlainBot covers, and the media path, which
// TestOpusBothWays covers. VOICETEST_WEBRTC_PLAIN=1 runs the suite against
// the plain bot too.)
func TestConformance(t *testing.T) {
	t.Run("rtvi", func(t *testing.T) { conformance.Run(t, subject(true)) })
	if os.Getenv("VOICETEST_WEBRTC_PLAIN") != "" {
		t.Run("plain", func(t *testing.T) { conformance.Run(t, subject(false)) })
	}
}

// FuzzDataChannelMessage fuzzes the adapter's decoding of what the bot
// sends on the data channel (RTVI messages) with the shared fuzz target.
func FuzzDataChannelMessage(f *testing.F) { conformance.Fuzz(f, subject(true)) }
