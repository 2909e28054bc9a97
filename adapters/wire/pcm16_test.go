package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/voicetest-go/voicetest/pcm"
)

// AppendPCM16 gives exactly pcm.EncodePCM16's bytes, appended after what
// dst holds.
func TestAppendPCM16(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 479, 480, 4801} {
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(r.Uint32())
		}
		if n > 2 {
			s[0], s[1], s[2] = -32768, 32767, -1
		}
		prefix := []byte("prefix")
		got := AppendPCM16(bytes.Clone(prefix), s)
		want := pcm.EncodePCM16(bytes.Clone(prefix), s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d samples: AppendPCM16 differs from pcm.EncodePCM16", n)
		}
	}
}
