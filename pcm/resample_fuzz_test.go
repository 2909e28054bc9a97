package pcm

import (
	"encoding/binary"
	"testing"
)

// FuzzResampler feeds arbitrary audio, split at an arbitrary point, through
// a Resampler between arbitrary rates from 4 to 48 kHz, and checks the
// stream length and that streaming matches one call.
func FuzzResampler(f *testing.F) {
	f.Add(uint16(24000), uint16(8000), uint16(7), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add(uint16(8000), uint16(44100), uint16(0), []byte{0xff, 0x7f, 0x00, 0x80, 0xff, 0x7f, 0x00, 0x80})
	f.Add(uint16(44100), uint16(44101), uint16(3), make([]byte, 64))
	f.Fuzz(func(t *testing.T, from, to, split uint16, data []byte) {
		rf, rt := 4000+int(from)%44001, 4000+int(to)%44001
		in := make([]int16, len(data)/2)
		for i := range in {
			in[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
		}
		whole, err := Resample(Chunk{Rate: rf, Samples: in}, rt)
		if err != nil {
			t.Fatalf("Resample %d→%d Hz: %v", rf, rt, err)
		}
		want := (2*int64(len(in))*int64(rt) + int64(rf)) / (2 * int64(rf))
		if rf != rt && int64(whole.Len()) != want {
			t.Fatalf("%d→%d Hz, %d samples: got %d, want %d", rf, rt, len(in), whole.Len(), want)
		}
		r, err := NewResampler(rf, rt)
		if err != nil {
			t.Fatal(err)
		}
		cut := int(split) % (len(in) + 1)
		got := r.Process(nil, in[:cut])
		got = r.Process(got, in[cut:])
		got = r.Flush(got)
		if rf != rt && !slicesEqual(got, whole.Samples) {
			t.Fatalf("%d→%d Hz: streaming split at %d differs from one call", rf, rt, cut)
		}
	})
}
