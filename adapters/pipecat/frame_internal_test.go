package pipecat

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"google.golang.org/protobuf/proto"
)

// TestAppendAudioFrameMatchesMarshal wants appendAudioFrame's bytes to be
// exactly proto.Marshal's for the same Frame, for frames of every size up
// to 300 samples and 20 ms and 1 s ones, at the standard rates (varints of
// two and three bytes) and rate 0 (the field left out), after a non-empty
// buffer.
func TestAppendAudioFrameMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 80))
	sizes := []int{0, 1, 63, 64, 8191, 8192, 320, 480, 16000}
	for n := range 300 {
		sizes = append(sizes, n)
	}
	for _, rate := range []int{0, 8000, 16000, 24000, 48000} {
		for _, n := range sizes {
			samples := make([]int16, n)
			for i := range samples {
				samples[i] = int16(rng.Uint32())
			}
			want, err := proto.MarshalOptions{}.MarshalAppend([]byte("prefix"), &pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{
				Audio: &pipecatpb.AudioRawFrame{Audio: wire.AppendPCM16(nil, samples), SampleRate: uint32(rate), NumChannels: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := appendAudioFrame([]byte("prefix"), samples, rate); !bytes.Equal(got, want) {
				t.Fatalf("%d samples at %d Hz: appendAudioFrame gives\n%x\nproto.Marshal\n%x", n, rate, got[:min(len(got), 40)], want[:min(len(want), 40)])
			}
		}
	}
}

// TestParseCommonFrameMatchesUnmarshal feeds parseCommonFrame the frames a
// bot sends (AudioRawFrames with and without id, name and pts, RTVI
// MessageFrames), other frames, and those frames with random bytes
// changed, cut or appended: whenever it parses a frame, proto.Unmarshal
// must accept the same bytes and give an equal Frame; the common frames
// must take the fast path; and it must never accept what proto.Unmarshal
// rejects.
func TestParseCommonFrameMatchesUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	pts := uint64(123456789)
	var common, other [][]byte
	marshal := func(f *pipecatpb.Frame) []byte {
		b, err := proto.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, n := range []int{0, 1, 320, 480} {
		audio := make([]byte, 2*n)
		for i := range audio {
			audio[i] = byte(rng.Uint32())
		}
		for _, a := range []*pipecatpb.AudioRawFrame{
			{Audio: audio, SampleRate: 24000, NumChannels: 1},
			{Id: 12, Name: "OutputAudioRawFrame#12", Audio: audio, SampleRate: 16000, NumChannels: 1, Pts: &pts},
			{Audio: audio, SampleRate: 8000, NumChannels: 2},
			{Audio: audio},
		} {
			common = append(common, marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: a}}))
		}
	}
	for _, d := range []string{`{"label":"rtvi-ai","type":"bot-started-speaking"}`, `{"label":"rtvi-ai","type":"bot-tts-text","data":{"text":"Okay. é"}}`, ""} {
		common = append(common, marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: d}}}))
	}
	other = append(other,
		marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Text{Text: &pipecatpb.TextFrame{Text: "hi"}}}),
		marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Interruption{Interruption: &pipecatpb.InterruptionFrame{}}}),
		marshal(&pipecatpb.Frame{}),
		// an AudioRawFrame with its sample rate twice (the last wins),
		// and with a rate past 32 bits (truncated by proto)
		append(bytes.Clone(common[0][:len(common[0])]), 0),
		[]byte{0x12, 0x04, 0x20, 0x80, 0x7d, 0x20},
		[]byte{0x12, 0x06, 0x20, 0x80, 0x80, 0x80, 0x80, 0x10},
		[]byte{0x22, 0x02, 0x0a, 0x00, 0x0a},
		[]byte{0x22, 0x03, 0x0a, 0x01, 0xff}, // invalid UTF-8
	)
	check := func(data []byte) {
		t.Helper()
		got, ok := parseCommonFrame(data)
		var want pipecatpb.Frame
		err := proto.Unmarshal(data, &want)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("parseCommonFrame accepts %x, which proto.Unmarshal rejects: %v", data, err)
		}
		if !proto.Equal(got.frame(), &want) {
			t.Fatalf("%x: parseCommonFrame gives %v, proto.Unmarshal %v", data, got.frame(), &want)
		}
	}
	for _, data := range common {
		if _, ok := parseCommonFrame(data); !ok {
			t.Errorf("%x: a common frame left to proto.Unmarshal", data[:min(len(data), 40)])
		}
		check(data)
	}
	for _, data := range other {
		check(data)
	}
	for range 20000 {
		src := common[rng.IntN(len(common))]
		if rng.IntN(4) == 0 {
			src = other[rng.IntN(len(other))]
		}
		data := bytes.Clone(src)
		switch rng.IntN(3) {
		case 0:
			if len(data) > 0 {
				data[rng.IntN(len(data))] = byte(rng.Uint32())
			}
		case 1:
			data = data[:rng.IntN(len(data)+1)]
		case 2:
			for range 1 + rng.IntN(4) {
				data = append(data, byte(rng.Uint32()))
			}
		}
		check(data)
	}
}

// frame returns the pipecat.Frame f stands for, as proto.Unmarshal gives
// it (empty bytes fields nil).
func (f commonFrame) frame() *pipecatpb.Frame {
	if f.message {
		return &pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: string(f.data)}}}
	}
	a := &pipecatpb.AudioRawFrame{Id: f.id, Name: string(f.name), Audio: f.data, SampleRate: f.rate, NumChannels: f.channels, Pts: f.pts}
	return &pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: a}}
}

// TestParseCommonFrameAllocatesNothing wants the frames a bot sends most
// (an AudioRawFrame without pts, an RTVI MessageFrame) parsed without an
// allocation: decode passes their audio and data on as they lie in the
// read buffer.
func TestParseCommonFrameAllocatesNothing(t *testing.T) {
	audio, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{
		Id: 7, Name: "OutputAudioRawFrame#7", Audio: make([]byte, 960), SampleRate: 24000, NumChannels: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{
		Data: `{"label":"rtvi-ai","type":"bot-stopped-speaking"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{audio, msg} {
		if n := testing.AllocsPerRun(100, func() {
			if _, ok := parseCommonFrame(data); !ok {
				t.Fatal("left to proto.Unmarshal")
			}
		}); n != 0 {
			t.Errorf("%x…: %v allocations a frame, want 0", data[:8], n)
		}
	}
}
