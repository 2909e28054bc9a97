package pcm

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readSegments reads a .segments reference file: one "start_ms end_ms"
// line per segment, # comments.
func readSegments(t *testing.T, name string) []Segment {
	t.Helper()
	b := readFileT(t, refPath(name))
	var out []Segment
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		a, err1 := strconv.Atoi(f[0])
		b, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", name, line)
		}
		out = append(out, Segment{Start: time.Duration(a) * time.Millisecond, End: time.Duration(b) * time.Millisecond})
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no segments", name)
	}
	return out
}

// TestVADSegmentsMatchReference runs the VAD on two utterances in pink and
// in white noise at 15 dB SNR and wants each segment's start and end within
// 20 ms of where ffmpeg finds the clean speech rising above, and sinking
// back into, the noise (testdata/ref/make.sh). The first utterance fades
// out. Before End counted the fading tail, the first segment ended 30 ms
// early in white noise (3.15 s for 3.18 s) and 20 ms early in pink noise.
func TestVADSegmentsMatchReference(t *testing.T) {
	for _, noise := range []string{"pink", "white"} {
		t.Run(noise, func(t *testing.T) {
			name := "speech_" + noise + "15_8k"
			c := Chunk{Rate: Rate8k, Samples: refS16(t, name+".s16")}
			want := readSegments(t, name+".segments")
			got, err := DetectSpeech(c, DefaultVADConfig())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("segments %v, reference %v", got, want)
			checkSegments(t, got, want, 20*time.Millisecond)
		})
	}
}
