package pcm

import (
	"errors"
	"testing"
	"time"
)

func TestFromBytesRejectsOddLength(t *testing.T) {
	_, err := FromBytes(Rate16k, []byte{1, 2, 3})
	if !errors.Is(err, ErrOddLength) {
		t.Fatalf("FromBytes(3 bytes) error = %v, want ErrOddLength", err)
	}
}

func TestFromBytesRejectsBadRate(t *testing.T) {
	for _, rate := range []int{0, -8000} {
		if _, err := FromBytes(rate, []byte{1, 2}); !errors.Is(err, ErrBadRate) {
			t.Errorf("FromBytes(rate %d) error = %v, want ErrBadRate", rate, err)
		}
		if _, err := New(rate, nil); !errors.Is(err, ErrBadRate) {
			t.Errorf("New(rate %d) error = %v, want ErrBadRate", rate, err)
		}
	}
}

func TestBytesRoundTrip(t *testing.T) {
	in := []int16{0, 1, -1, 32767, -32768, 1234}
	c, err := New(Rate24k, in)
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bytes()
	if want := []byte{0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0x80, 0xd2, 0x04}; string(b) != string(want) {
		t.Fatalf("Bytes() = % x, want % x", b, want)
	}
	back, err := FromBytes(Rate24k, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if back.Samples[i] != in[i] {
			t.Fatalf("sample %d = %d, want %d", i, back.Samples[i], in[i])
		}
	}
}

func TestDurationAndSilence(t *testing.T) {
	s := Silence(Rate8k, 250*time.Millisecond)
	if s.Len() != 2000 {
		t.Fatalf("Silence(8k, 250ms).Len() = %d, want 2000", s.Len())
	}
	if d := s.Duration(); d != 250*time.Millisecond {
		t.Fatalf("Duration() = %v, want 250ms", d)
	}
	if got := (Chunk{Rate: Rate44k1, Samples: make([]int16, 441)}).Duration(); got != 10*time.Millisecond {
		t.Fatalf("441 samples at 44.1k = %v, want 10ms", got)
	}
}

func TestFramesAndSlice(t *testing.T) {
	c := Silence(Rate8k, 50*time.Millisecond) // 400 samples
	fr := c.Frames(20 * time.Millisecond)
	if len(fr) != 3 || fr[0].Len() != 160 || fr[2].Len() != 80 {
		t.Fatalf("Frames(20ms) lengths = %d frames, want 160,160,80", len(fr))
	}
	if got := c.Slice(10*time.Millisecond, time.Hour).Len(); got != 320 {
		t.Fatalf("Slice(10ms, 1h).Len() = %d, want 320", got)
	}
}

func TestDecodePCM16ReusesBuffer(t *testing.T) {
	buf := make([]int16, 0, 4)
	out, err := DecodePCM16(buf, []byte{1, 0, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &buf[:1][0] {
		t.Fatal("DecodePCM16 allocated although dst had capacity")
	}
	if allocs := testing.AllocsPerRun(100, func() { out, _ = DecodePCM16(buf[:0], []byte{1, 0, 2, 0}) }); allocs != 0 {
		t.Fatalf("DecodePCM16 with capacity: %v allocs, want 0", allocs)
	}
}
