package vapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/internal/peers/vapipeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// testKey is the private key of the double when the suite asks for none.
const testKey = "vapi-test-key"

// start returns the suite's Subject.Start: a Vapi double that behaves as
// p says, and an agent that calls it.
func start(t *testing.T, p conformance.Peer) voicetest.Agent {
	key := testKey
	if p.Key != "" {
		key = p.Key
	}
	cfg := vapipeer.Config{Key: key, HangUpAfter: p.HangUpAfter}
	if p.PeerKey != "" {
		cfg.Key = p.PeerKey
	}
	if p.LongReply {
		cfg.Turns = []vapipeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}
	}
	if p.Brief {
		cfg.Turns = []vapipeer.Turn{{Reply: "Ok."}, {Reply: "Ok."}, {Reply: "Ok."}}
	}
	switch p.Stall {
	case conformance.StallAnswer:
		cfg.Fault = vapipeer.Mute
	case conformance.StallHandshake:
		cfg.Fault = vapipeer.StallCreate
	}
	for _, f := range p.Send {
		cfg.Send = append(cfg.Send, vapipeer.Frame{Data: f.Data, Binary: f.Binary})
	}
	cfg.Listener = p.Listener()
	base := ""
	if p.Stall == conformance.StallDial {
		base = "http" + strings.TrimPrefix(p.BlackHole(t), "ws")
	} else {
		base = vapipeer.New(t, cfg).URL
	}
	a := vapi.New(key, "5b0a4a08-133c-4146-9315-0984f8c6be80")
	a.BaseURL = base
	if p.Net != nil {
		a.NetDial, a.HTTPClient = p.Net.Dial, p.Net.HTTPClient()
	}
	a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
	return a
}

// message returns a Vapi client message as a text frame.
func message(fields map[string]any) conformance.Frame {
	b, _ := json.Marshal(fields)
	return conformance.Frame{Data: b}
}

// TestConformance runs the wire adapters' shared suite against the
// loopback Vapi double.
func TestConformance(t *testing.T) { conformance.Run(t, subject()) }

// FuzzServerMessage fuzzes the adapter's decoding of the call WebSocket's frames (Vapi's
// JSON messages and raw PCM) with the shared fuzz target.
func FuzzServerMessage(f *testing.F) { conformance.Fuzz(f, subject()) }

// subject describes the adapter and its loopback double to the suite.
func subject() conformance.Subject {
	return conformance.Subject{
		Adapter:    "vapi",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Handshake:  true, // POST /call
		ChecksKey:  true,
		Interrupts: true, // user-interrupted
		Start:      start,
		Audio: func(n int) conformance.Frame {
			return conformance.Frame{Data: pcm.EncodePCM16(nil, make([]int16, n)), Binary: true}
		},
		Echo: func(s string) conformance.Frame {
			return message(map[string]any{"type": "transcript", "role": "user", "transcriptType": "final", "transcript": s})
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			{Data: []byte{1, 2, 3}, Binary: true},
			conformance.Text(`{"role":"assistant"}`),
			message(map[string]any{"type": "transcript", "role": "assistant", "transcriptType": "final"}),
			message(map[string]any{"type": "speech-update", "role": "robot", "status": "started"}),
			message(map[string]any{"type": "tool-calls", "toolCallList": "none"}),
		},
	}
}
