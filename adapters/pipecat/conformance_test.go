package pipecat_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/internal/peers/pipecatpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/proto"
)

// start returns the Subject.Start of a bot with serializer ser.
func start(ser pipecat.Serializer, rtvi bool) func(t *testing.T, p conformance.Peer) voicetest.Agent {
	return func(t *testing.T, p conformance.Peer) voicetest.Agent {
		cfg := pipecatpeer.Config{Serializer: pipecatpeer.Serializer(ser), RTVI: rtvi, HangUpAfter: p.HangUpAfter}
		if p.LongReply {
			// 6 s of speech, streamed in real time.
			cfg.Turns = []pipecatpeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}
			cfg.ChunkDelay = 20 * time.Millisecond
		}
		if p.Brief {
			cfg.Turns = []pipecatpeer.Turn{{Reply: "Ok."}, {Reply: "Ok."}, {Reply: "Ok."}}
		}
		if p.Stall == conformance.StallAnswer {
			cfg.Fault = pipecatpeer.Mute
		}
		for _, f := range p.Send {
			cfg.Send = append(cfg.Send, pipecatpeer.Frame{Data: f.Data, Binary: f.Binary})
		}
		cfg.Listener = p.Listener()
		url := ""
		if p.Stall == conformance.StallDial {
			url = p.BlackHole(t)
		} else {
			url = pipecatpeer.New(t, cfg).URL
		}
		a := pipecat.New(url, ser)
		a.RTVI = rtvi
		if p.Net != nil {
			a.NetDial = p.Net.Dial
		}
		if p.Key != "" {
			// A bot behind a gateway that takes a key: a secret all the same.
			a.Header = http.Header{"Authorization": {"Bearer " + p.Key}}
		}
		a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
		return a
	}
}

// frame returns f marshalled, as a binary frame.
func frame(f *pipecatpb.Frame) conformance.Frame {
	b, err := proto.Marshal(f)
	if err != nil {
		panic(err)
	}
	return conformance.Frame{Data: b, Binary: true}
}

func audioFrame(pcm16 []byte, rate uint32) conformance.Frame {
	return frame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{Audio: pcm16, SampleRate: rate, NumChannels: 1}}})
}

// TestConformance runs the wire adapters' shared suite against the
// loopback Pipecat bot, with each serializer.
func TestConformance(t *testing.T) {
	t.Run("protobuf", func(t *testing.T) { conformance.Run(t, protobufSubject()) })
	t.Run("twilio", func(t *testing.T) { conformance.Run(t, twilioSubject()) })
}

// FuzzProtobufFrame fuzzes the adapter's decoding of Pipecat's protobuf
// frames (and the RTVI messages they carry) with the shared fuzz target.
func FuzzProtobufFrame(f *testing.F) { conformance.Fuzz(f, protobufSubject()) }

// FuzzTwilioFrame fuzzes the adapter's decoding of the Twilio
// serializer's frames with the shared fuzz target.
func FuzzTwilioFrame(f *testing.F) { conformance.Fuzz(f, twilioSubject()) }

// protobufSubject is the bot with Pipecat's protobuf serializer.
func protobufSubject() conformance.Subject {
	return conformance.Subject{
		Adapter:    "pipecat",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Interrupts: true, // InterruptionFrame, bot-interrupted
		Start:      start(pipecat.Protobuf, true),
		Audio:      func(n int) conformance.Frame { return audioFrame(make([]byte, 2*n), 24000) },
		Echo: func(s string) conformance.Frame {
			msg, _ := json.Marshal(map[string]any{"label": "rtvi-ai", "type": "user-transcription", "data": map[string]any{"text": s, "user_id": "", "timestamp": "", "final": true}})
			return frame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: string(msg)}}})
		},
		Malformed: []conformance.Frame{
			conformance.Text(`{"event":"media"}`),
			{Data: []byte{0xff, 0xff, 0xff}, Binary: true},
			{Data: []byte{}, Binary: true},
			audioFrame([]byte{1, 2, 3}, 24000),
			audioFrame([]byte{1, 2}, 1),
			frame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: "not json"}}}),
		},
	}
}

// twilioSubject is the bot with Pipecat's Twilio serializer.
func twilioSubject() conformance.Subject {
	return conformance.Subject{
		Adapter:    "pipecat",
		InMemory:   true,
		Alongside:  true, // RealTimeConversation overlaps the virtual-time checks
		Interrupts: true, // clear
		Start:      start(pipecat.Twilio, false),
		Audio: func(n int) conformance.Frame {
			payload := base64.StdEncoding.EncodeToString(make([]byte, n))
			return conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"payload":"` + payload + `"}}`)
		},
		Echo: func(s string) conformance.Frame {
			msg, _ := json.Marshal(map[string]any{"type": "custom", "text": s})
			return conformance.Text(string(msg))
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			{Data: []byte{1}, Binary: true},
			conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"payload":"%%%"}}`),
			conformance.Text(`{"event":"media","streamSid":"MZ0","media":{"payload":"AAAA"}}`),
			conformance.Text(`{"event":"dance","streamSid":"{sid}"}`),
		},
	}
}
