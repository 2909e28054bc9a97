package voicetest

import (
	"math"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		a, b, c    int64
		down, up   int64
		commentary string
	}{
		{3, 5, 2, 7, 8, "rounds"},
		{3, 4, 2, 6, 6, "exact"},
		{0, 5, 2, 0, 0, "zero"},
		{-3, 5, 2, 0, 0, "negative factor"},
		{3, 5, 0, 0, 0, "zero divisor"},
		{1 << 40, 1 << 40, 1 << 41, 1 << 39, 1 << 39, "product beyond int64"},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, "largest"},
		{math.MaxInt64, 3, 2, math.MaxInt64, math.MaxInt64, "saturates"},
		{math.MaxInt64, math.MaxInt64, 1, math.MaxInt64, math.MaxInt64, "saturates far"},
		{7, int64(time.Minute), 150, int64(2800 * time.Millisecond), int64(2800 * time.Millisecond), "words at 150 a minute"},
	} {
		if got := scale(tc.a, tc.b, tc.c); got != tc.down {
			t.Errorf("scale(%d, %d, %d) = %d, want %d (%s)", tc.a, tc.b, tc.c, got, tc.down, tc.commentary)
		}
		if got := scaleUp(tc.a, tc.b, tc.c); got != tc.up {
			t.Errorf("scaleUp(%d, %d, %d) = %d, want %d (%s)", tc.a, tc.b, tc.c, got, tc.up, tc.commentary)
		}
	}
}

// aheadRunner returns a runner in the middle of a turn whose transcript
// runs ahead of its audio: text of words words, and audio pieces of the
// given lengths laid from 1 s on, each at the later of its arrival and the
// end of the one before.
func aheadRunner(t *testing.T, text string, turnEnd bool, arrivals []time.Duration, lengths []time.Duration) *runner {
	t.Helper()
	r := &runner{cfg: Config{Rate: pcm.Rate16k, WordsPerMinute: DefaultWordsPerMinute}, caps: Capabilities{TranscriptAhead: true}}
	r.hasText = true
	r.committed = []string{text}
	if turnEnd {
		r.turnEnds = 1
	}
	for i, d := range lengths {
		r.speak(arrivals[i], pcm.Silence(pcm.Rate16k, d), d)
	}
	return r
}

// heardAt answers when the estimate reaches n from the pieces' places on
// the time axis, gaps included, and only when the audio received covers it.
func TestHeardAt(t *testing.T) {
	s := time.Second
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name     string
		text     string
		turnEnd  bool
		arrivals []time.Duration
		lengths  []time.Duration
		n        int
		want     time.Duration
		ok       bool
	}{
		{name: "contiguous", text: "a b c d e", turnEnd: true,
			arrivals: []time.Duration{s, s}, lengths: []time.Duration{ms(1000), ms(1000)}, n: 3, want: s + ms(1200), ok: true},
		{name: "after a gap", text: "a b c d e", turnEnd: true,
			// The second second of audio arrived 500 ms after the first ran out.
			arrivals: []time.Duration{s, s + ms(1500)}, lengths: []time.Duration{ms(1000), ms(1000)}, n: 3, want: s + ms(1700), ok: true},
		{name: "last word", text: "a b c d e", turnEnd: true,
			arrivals: []time.Duration{s}, lengths: []time.Duration{ms(2000)}, n: 5, want: s + ms(2000), ok: true},
		{name: "more words than the text", text: "a b", turnEnd: true,
			arrivals: []time.Duration{s}, lengths: []time.Duration{ms(2000)}, n: 3},
		{name: "needs audio not yet received", text: "a b c d e",
			// Five words at 150 a minute take 2 s; 1 s of audio is in.
			arrivals: []time.Duration{s}, lengths: []time.Duration{ms(1000)}, n: 3},
		{name: "rounds up", text: "a b c", turnEnd: true,
			arrivals: []time.Duration{s}, lengths: []time.Duration{ms(1000)}, n: 1, want: s + 333333334, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := aheadRunner(t, tc.text, tc.turnEnd, tc.arrivals, tc.lengths)
			got, ok := r.heardAt(tc.n)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("heardAt(%d) = %v, %v; want %v, %v", tc.n, got, ok, tc.want, tc.ok)
			}
		})
	}
}
