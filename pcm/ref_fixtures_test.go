package pcm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The tests in this file, resample_ref_test.go and vad_ref_test.go check
// pcm against reference values that ffmpeg and sox computed, in
// testdata/ref: testdata/ref/make.sh makes them (TestReferenceFixturesRegenerate
// reruns it) and testdata/ref/README.md lists every file.

// refPath returns the path of reference fixture name.
func refPath(name string) string { return filepath.Join("testdata", "ref", name) }

// refS16 reads reference fixture name, raw s16le, as samples.
func refS16(t *testing.T, name string) []int16 {
	t.Helper()
	return readS16(t, refPath(name))
}

// deinterleave splits interleaved samples into n channels.
func deinterleave(s []int16, n int) [][]int16 {
	out := make([][]int16, n)
	for i, v := range s {
		out[i%n] = append(out[i%n], v)
	}
	return out
}

// TestReadWAVFloatMatchesFFmpeg: ffmpeg's conversion of 4000 float samples
// (ties, their neighbours, the 0.49999237/32768, random values) to
// 16 bits, sample for sample. Before the fix a float sample was rounded
// twice (to a 2³¹ scale, then to 16 bits) and ties went up: 711 of the
// 4000 differed, the first one 0.49999237/32768, read as 1.
func TestReadWAVFloatMatchesFFmpeg(t *testing.T) {
	c, err := ReadWAVFile(refPath("f32_mono.wav"))
	if err != nil {
		t.Fatal(err)
	}
	want := refS16(t, "f32_mono.ffmpeg.s16")
	if c.Rate != 8000 || len(c.Samples) != 4000 || len(want) != 4000 {
		t.Fatalf("got %d samples at %d Hz, ffmpeg %d; want 4000 at 8000 Hz", len(c.Samples), c.Rate, len(want))
	}
	if c.Samples[0] != 0 || want[0] != 0 {
		t.Errorf("0.49999237/32768 becomes %d (ffmpeg %d), want 0", c.Samples[0], want[0])
	}
	if d := firstSampleDiff(want, c.Samples); d != "" {
		t.Errorf("ReadWAV differs from ffmpeg: %s", d)
	}
}

// TestReadWAV24BitMatchesFFmpeg: a 24-bit stereo file downmixed to 16-bit
// mono as ffmpeg -ac 1 does it, its channels as ffmpeg converts them
// through float, and a 24-bit mono file likewise; every fourth stereo
// frame and every other mono sample is an exact tie. Before the fix the
// ties went up: 567 of the 4410 mixed samples differed.
func TestReadWAV24BitMatchesFFmpeg(t *testing.T) {
	mono, err := ReadWAVFile(refPath("s24_stereo.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if d := firstSampleDiff(refS16(t, "s24_stereo.ffmpeg-ac1.s16"), mono.Samples); d != "" {
		t.Errorf("ReadWAV of 24-bit stereo differs from ffmpeg -ac 1: %s", d)
	}
	chans, err := ReadWAVChannelsFile(refPath("s24_stereo.wav"))
	if err != nil {
		t.Fatal(err)
	}
	want := deinterleave(refS16(t, "s24_stereo.ffmpeg-flt.s16"), 2)
	if len(chans) != 2 {
		t.Fatalf("ReadWAVChannels: %d channels, want 2", len(chans))
	}
	for ch := range chans {
		if d := firstSampleDiff(want[ch], chans[ch].Samples); d != "" {
			t.Errorf("channel %d differs from ffmpeg's: %s", ch, d)
		}
	}
	m, err := ReadWAVFile(refPath("s24_mono.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if d := firstSampleDiff(refS16(t, "s24_mono.ffmpeg-flt.s16"), m.Samples); d != "" {
		t.Errorf("ReadWAV of 24-bit mono differs from ffmpeg: %s", d)
	}
}

// TestReadWAVChannelsCallRecording reads the two sides of a stereo µ-law
// call recording (agent left, caller right) and downmixes them, against
// ffmpeg's pan filter and -ac 1.
func TestReadWAVChannelsCallRecording(t *testing.T) {
	path := refPath("call_8k_stereo_mulaw.wav")
	chans, err := ReadWAVChannelsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(chans) != 2 {
		t.Fatalf("%d channels, want 2", len(chans))
	}
	left, right := chans[0], chans[1]
	if left.Rate != 8000 || right.Rate != 8000 || left.Len() != right.Len() || left.Len() == 0 {
		t.Fatalf("left %d samples at %d Hz, right %d at %d Hz", left.Len(), left.Rate, right.Len(), right.Rate)
	}
	if d := firstSampleDiff(refS16(t, "call_8k_stereo_mulaw.left.s16"), left.Samples); d != "" {
		t.Errorf("left channel differs from ffmpeg's: %s", d)
	}
	if d := firstSampleDiff(refS16(t, "call_8k_stereo_mulaw.right.s16"), right.Samples); d != "" {
		t.Errorf("right channel differs from ffmpeg's: %s", d)
	}
	// The agent speaks first and the caller after: the sides differ.
	q := left.Len() / 4
	if RMS(Chunk{Rate: 8000, Samples: left.Samples[:q]}) < 10*RMS(Chunk{Rate: 8000, Samples: right.Samples[:q]}) {
		t.Errorf("the left channel is not the agent's: its first quarter is not much louder than the right's")
	}
	want := refS16(t, "call_8k_stereo_mulaw.ffmpeg-ac1.s16")
	mixed, err := Downmix(left, right)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstSampleDiff(want, mixed.Samples); d != "" {
		t.Errorf("Downmix differs from ffmpeg -ac 1: %s", d)
	}
	mono, err := ReadWAVFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstSampleDiff(want, mono.Samples); d != "" {
		t.Errorf("ReadWAV differs from ffmpeg -ac 1: %s", d)
	}
}

// TestReferenceFixturesRegenerate reruns testdata/ref/make.sh in a
// temporary directory when its tools are installed and checks that it
// reproduces the committed fixtures, so the script stays their source.
func TestReferenceFixturesRegenerate(t *testing.T) {
	t.Parallel()
	for _, tool := range []struct{ bin, pkg string }{{"go", "golang"}, {"ffmpeg", "ffmpeg"}, {"sox", "sox"}, {"soxi", "sox"}, {"flite", "flite"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Skipf("%s not installed (Debian package %s); the committed fixtures are used as they are", tool.bin, tool.pkg)
		}
	}
	dir := t.TempDir()
	script, err := filepath.Abs(refPath("make.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), "sh", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	made, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(made) == 0 {
		t.Fatal("make.sh made no files")
	}
	for _, e := range made {
		got := readFileT(t, filepath.Join(dir, e.Name()))
		want, err := os.ReadFile(refPath(e.Name()))
		if err != nil {
			t.Errorf("make.sh makes %s, which is not committed: %v", e.Name(), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: regenerated file differs from the committed one (%d bytes, committed %d); run testdata/ref/make.sh and review", e.Name(), len(got), len(want))
		}
	}
}
