package voicetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

func chunk(rate int, s ...int16) pcm.Chunk { return pcm.Chunk{Rate: rate, Samples: s} }

func TestCanonicalAgentAudio(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []pcm.Chunk
		want   []int16
	}{
		{"nothing", nil, nil},
		{"empty frames", []pcm.Chunk{chunk(8000), chunk(8000)}, nil},
		{"concatenated in order", []pcm.Chunk{chunk(8000, 100, 200), chunk(8000, -300), chunk(8000, 400)}, []int16{100, 200, -300, 400}},
		{"edge silence trimmed", []pcm.Chunk{chunk(8000, 0, 0, 64, -64), chunk(8000, 65, 0, -65), chunk(8000, 3, 0, -64)}, []int16{65, 0, -65}},
		{"inner silence kept", []pcm.Chunk{chunk(8000, 500), chunk(8000, 0, 0, 0), chunk(8000, -500)}, []int16{500, 0, 0, 0, -500}},
		{"all silence kept whole", []pcm.Chunk{chunk(8000, 0, 1, -2), chunk(8000, 64)}, []int16{0, 1, -2, 64}},
		{"other rates skipped", []pcm.Chunk{chunk(8000, 100), chunk(16000, 999), chunk(8000, 200)}, []int16{100, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := canonicalAgentAudio(8000, tc.frames)
			if !slices.Equal(got.Samples, tc.want) {
				t.Errorf("samples %v, want %v", got.Samples, tc.want)
			}
			if len(tc.want) > 0 && got.Rate != 8000 {
				t.Errorf("rate %d, want 8000", got.Rate)
			}
		})
	}
}

// The canonical audio depends on the samples only: the same utterance cut
// into frames at random places, with silent frames of random length before
// and after it (an agent that pads while it thinks), is the same audio.
func TestCanonicalAgentAudioIgnoresFraming(t *testing.T) {
	speech := make([]int16, 4000)
	for i := range speech {
		speech[i] = int16((i*7919)%20000 - 10000)
	}
	speech[0], speech[len(speech)-1] = 1000, -1000
	want := canonicalAgentAudio(16000, []pcm.Chunk{chunk(16000, speech...)})
	if !slices.Equal(want.Samples, speech) {
		t.Fatalf("unframed speech changed: %d samples, want %d", want.Len(), len(speech))
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var frames []pcm.Chunk
		for range rng.IntN(5) {
			frames = append(frames, chunk(16000), chunk(16000, make([]int16, rng.IntN(300))...))
		}
		for rest := speech; len(rest) > 0; {
			n := min(1+rng.IntN(700), len(rest))
			frames = append(frames, chunk(16000, rest[:n]...))
			rest = rest[n:]
		}
		for range rng.IntN(5) {
			frames = append(frames, chunk(16000, make([]int16, rng.IntN(300))...))
		}
		got := canonicalAgentAudio(16000, frames)
		if !slices.Equal(got.Samples, want.Samples) {
			t.Fatalf("seed %d: %d frames give %d samples, want the same %d as unframed", seed, len(frames), got.Len(), want.Len())
		}
	}
}

// The result is a copy: the runner may clip the pieces it plays after the
// transcription has started.
func TestCanonicalAgentAudioCopies(t *testing.T) {
	f := chunk(8000, 100, 200, 300)
	got := canonicalAgentAudio(8000, []pcm.Chunk{f})
	f.Samples[1] = 0
	if got.Samples[1] != 200 {
		t.Errorf("the canonical audio shares the frame's memory")
	}
}

// BenchmarkCanonicalAgentAudio makes 10 s of agent audio at 24 kHz,
// received as 500 frames of 20 ms, canonical: the cost per agent turn
// transcribed with Config.AgentSTT.
func BenchmarkCanonicalAgentAudio(b *testing.B) {
	speech := make([]int16, 10*24000)
	for i := range speech {
		speech[i] = int16((i*7919)%20000 - 10000)
	}
	frames := pcm.Chunk{Rate: 24000, Samples: speech}.Frames(20 * time.Millisecond)
	b.SetBytes(int64(2 * len(speech)))
	b.ReportAllocs()
	for b.Loop() {
		if c := canonicalAgentAudio(24000, frames); c.Len() != len(speech) {
			b.Fatal(c.Len())
		}
	}
}
