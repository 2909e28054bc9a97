package sdkcheck_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// maxUtterances bounds what an ear keeps: the pages say a handful of
// lines.
const maxUtterances = 16

// ear is a double's speech-to-text (fixtures.FakeSTT) that keeps what it
// was given, so that a failed test can show what reached the double: each
// utterance's audio, what was heard and why it was not.
type ear struct {
	mu   sync.Mutex
	utts []heardAudio
}

// heardAudio is one utterance an ear transcribed.
type heardAudio struct {
	audio pcm.Chunk
	text  string
	err   error
}

// hear transcribes c; audio FakeSTT cannot decode is "(inaudible)".
func (e *ear) hear(c pcm.Chunk) string {
	tr, err := fixtures.FakeSTT().Transcribe(context.Background(), voicetest.TranscriptionRequest{Audio: c})
	text := tr.Text
	if err != nil {
		text = "(inaudible)"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.utts) < maxUtterances {
		e.utts = append(e.utts, heardAudio{audio: pcm.Chunk{Rate: c.Rate, Samples: slices.Clone(c.Samples)}, text: text, err: err})
	}
	return text
}

// report, when t has failed, logs each utterance the ear heard (its
// length, what was heard or why nothing was, and its bursts of sound) and
// writes its audio to t.ArtifactDir() (kept with go test -artifacts).
func (e *ear) report(t *testing.T, name string) {
	t.Helper()
	if !t.Failed() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, u := range e.utts {
		why := ""
		if u.err != nil {
			why = " (" + u.err.Error() + ")"
		}
		keepAudio(t, fmt.Sprintf("%s-%d", name, i+1), fmt.Sprintf("heard %q%s", u.text, why), u.audio)
	}
}

// keepAudio writes c to name.wav in t.ArtifactDir() and logs it with
// what (what was heard of it) and its levels.
func keepAudio(t *testing.T, name, what string, c pcm.Chunk) {
	t.Helper()
	path := filepath.Join(t.ArtifactDir(), name+".wav")
	if err := pcm.WriteWAVFile(path, c); err != nil {
		t.Logf("%s: %v", name, err)
		path = "(not written)"
	}
	t.Logf("%s: %v, %s, %s; audio %s", name, pcm.DurationOf(len(c.Samples), c.Rate), what, levels(c), path)
}

// levels describes c's sound for a person reading a log: its peak RMS over
// 5 ms windows in dBFS, and the runs of sound and silence (a window is
// sound above a tenth of the peak power, as FakeSTT decides) as
// "on@start+length" in milliseconds. Fake speech shows 50 ms bursts, 15 ms
// apart within a word; a drop-out shows as a burst cut short or a gap
// where there should be none.
func levels(c pcm.Chunk) string {
	win := max(pcm.SamplesFor(c.Rate, 5*time.Millisecond), 1)
	var pow []float64
	for i := 0; i+win <= len(c.Samples); i += win {
		var e float64
		for _, v := range c.Samples[i : i+win] {
			e += float64(v) * float64(v)
		}
		pow = append(pow, e/float64(win))
	}
	if len(pow) == 0 {
		return "no audio"
	}
	peak := slices.Max(pow)
	var b strings.Builder
	fmt.Fprintf(&b, "peak %.1f dBFS, sound", 10*math.Log10(peak/(32768*32768)+1e-12))
	on := -1
	for i, p := range append(pow, 0) {
		switch {
		case p >= peak/10 && on < 0:
			on = i
		case p < peak/10 && on >= 0:
			fmt.Fprintf(&b, " %d+%d", on*5, (i-on)*5)
			on = -1
		}
	}
	return b.String()
}
