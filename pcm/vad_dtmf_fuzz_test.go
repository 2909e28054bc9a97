package pcm

import (
	"encoding/binary"
	"testing"
	"time"
)

// fuzzChunks splits data into a chunk size (first byte) and PCM16 samples
// (the rest, odd byte dropped).
func fuzzChunks(data []byte) (piece int, samples []int16) {
	if len(data) == 0 {
		return 1, nil
	}
	piece = 1 + int(data[0])*7
	data = data[1:]
	samples = make([]int16, len(data)/2)
	for i := range samples {
		samples[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
	}
	return piece, samples
}

// fuzzSeeds adds a few real signals to the corpus.
func fuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0, 0, 1})
	key, err := GenerateDTMF("5#", Rate8k, DTMFConfig{Tone: 60 * time.Millisecond, Gap: 40 * time.Millisecond, LevelDBFS: -10})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append([]byte{17}, key.Bytes()...))
	tone := bursts(Rate8k, 700*time.Millisecond, burst{ms(100), ms(400), 500, -20})
	f.Add(append([]byte{200}, tone.Bytes()...))
}

// FuzzDTMFDetector checks the detector's invariants on arbitrary audio fed
// in arbitrary pieces: it does not panic, reports only keys, in order,
// inside the stream, at least MinTone long (less half a step), and gives
// the same answer as DetectDTMF.
func FuzzDTMFDetector(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		piece, samples := fuzzChunks(data)
		c := Chunk{Rate: Rate8k, Samples: samples}
		want, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDTMFDetector(Rate8k, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		var got []DTMFDigit
		for s := samples; len(s) > 0; s = s[min(piece, len(s)):] {
			got = d.Process(got, s[:min(piece, len(s))])
		}
		got = d.Flush(got)
		if len(got) != len(want) {
			t.Fatalf("streaming %v, whole %v", got, want)
		}
		var prevEnd time.Duration
		for i, k := range got {
			if k != want[i] {
				t.Fatalf("streaming %v, whole %v", got, want)
			}
			if dtmfIndex(k.Digit) < 0 || k.Digit >= 'a' {
				t.Fatalf("digit %q is not a key", k.Digit)
			}
			if k.Start < prevEnd || k.End <= k.Start || k.End > c.Duration() {
				t.Fatalf("digit %v out of order or outside the %v stream (previous ended %v)", k, c.Duration(), prevEnd)
			}
			if k.Duration() < 36*time.Millisecond {
				t.Fatalf("digit %v shorter than MinTone", k)
			}
			prevEnd = k.End
		}
	})
}

// FuzzVAD checks the VAD's invariants on arbitrary audio fed in arbitrary
// pieces: no panic, events alternate start/end, segments are in order,
// inside the stream, hold at least MinSpeech, and match DetectSpeech.
func FuzzVAD(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		piece, samples := fuzzChunks(data)
		c := Chunk{Rate: Rate8k, Samples: samples}
		cfg := DefaultVADConfig()
		want, err := DetectSpeech(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewVAD(Rate8k, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var events []VADEvent
		for s := samples; len(s) > 0; s = s[min(piece, len(s)):] {
			events = v.Process(events, s[:min(piece, len(s))])
		}
		events = v.Flush(events)
		for i, e := range events {
			wantType := SpeechStart
			if i%2 == 1 {
				wantType = SpeechEnd
			}
			if e.Type != wantType {
				t.Fatalf("events %v do not alternate start/end", events)
			}
		}
		if len(events)%2 != 0 {
			t.Fatalf("events %v: a start without an end after Flush", events)
		}
		got := SegmentsOf(events)
		if len(got) != len(want) {
			t.Fatalf("streaming %v, whole %v", got, want)
		}
		var prevEnd time.Duration
		for i, s := range got {
			if s != want[i] {
				t.Fatalf("streaming %v, whole %v", got, want)
			}
			if s.Start < prevEnd || s.End > c.Duration() || s.Duration() < cfg.MinSpeech {
				t.Fatalf("segment %v out of order, outside the %v stream or shorter than MinSpeech", s, c.Duration())
			}
			prevEnd = s.End
		}
	})
}
