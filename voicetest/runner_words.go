package voicetest

import (
	"math"
	"math/bits"
	"strings"
	"time"
)

// estimatesWords reports whether spokenWords estimates from speech time:
// for audio without a transcript, and for a text-only agent, whose text
// arrives before it is "said".
func (r *runner) estimatesWords() bool {
	return r.seg != nil && (!r.hasText || r.seg.audio == 0)
}

// spokenWords returns how many words of its current turn the agent has
// said: counted in its transcript, estimated from its speech time, or, for
// a transcript that runs ahead of the audio, estimated from the share of
// the turn's audio played (heardWords).
func (r *runner) spokenWords() int {
	if r.seg == nil {
		return 0
	}
	if !r.estimatesWords() {
		if r.countsHeard() {
			return r.heardWords()
		}
		return r.textWords()
	}
	played := min(r.now(), r.playEnd) - r.seg.start
	return int(played * time.Duration(r.cfg.WordsPerMinute) / time.Minute)
}

// textWords returns the number of words in the agent's text of its
// current turn so far.
func (r *runner) textWords() int { return len(strings.Fields(r.agentText())) }

// countsHeard reports whether spokenWords estimates the words heard from
// a transcript that runs ahead of the audio (Capabilities.TranscriptAhead):
// the agent sent both text and audio in its current turn.
func (r *runner) countsHeard() bool {
	return r.caps.TranscriptAhead && r.seg != nil && r.hasText && r.seg.audio > 0
}

// playedAudio returns how much of the current segment's audio has played
// by t, and how much there is.
func (r *runner) playedAudio(t time.Duration) (played, total time.Duration) {
	for _, p := range r.seg.pieces {
		d := p.c.Duration()
		total += d
		played += min(max(t-p.at, 0), d)
	}
	return played, total
}

// wordSpan returns the length of audio that words of text are taken to
// fill, given the audio received so far: that audio, once the agent has
// marked the end of its turn (all its text and audio are in); until then
// more may come, so at least the words' length at Config.WordsPerMinute.
func (r *runner) wordSpan(words int, received time.Duration) time.Duration {
	if r.turnEnds > 0 {
		return received
	}
	return max(received, time.Duration(scale(int64(words), int64(time.Minute), int64(r.cfg.WordsPerMinute))))
}

// heardWords estimates how many words of a transcript that runs ahead of
// the audio the agent has said by now: the text's words spread evenly over
// wordSpan, of which the audio played so far has been heard. A word counts
// once its whole share has played, as the speech-time estimate counts it.
func (r *runner) heardWords() int {
	words := r.textWords()
	played, total := r.playedAudio(r.now())
	span := r.wordSpan(words, total)
	if span <= 0 {
		return 0
	}
	return int(scale(int64(words), int64(min(played, span)), int64(span)))
}

// heardAt returns when heardWords reaches n if no more events arrive, and
// false when it cannot without more text or audio.
func (r *runner) heardAt(n int) (time.Duration, bool) {
	words := r.textWords()
	if words < n {
		return 0, false
	}
	_, total := r.playedAudio(r.now())
	span := r.wordSpan(words, total)
	if span <= 0 {
		return 0, false
	}
	// words × played / span ≥ n  ⇔  played ≥ ⌈n × span / words⌉.
	need := time.Duration(scaleUp(int64(n), int64(span), int64(words)))
	var cum time.Duration
	for _, p := range r.seg.pieces {
		d := p.c.Duration()
		if cum+d >= need {
			return p.at + need - cum, true
		}
		cum += d
	}
	return 0, false
}

// scale returns a × b / c, rounded down, for non-negative a and b and a
// positive c, without overflowing in the product; a result beyond
// math.MaxInt64 saturates.
func scale(a, b, c int64) int64 {
	q, _ := mulDiv(a, b, c)
	return q
}

// scaleUp is scale rounded up.
func scaleUp(a, b, c int64) int64 {
	q, rem := mulDiv(a, b, c)
	if rem != 0 && q < math.MaxInt64 {
		q++
	}
	return q
}

// mulDiv returns a × b / c and its remainder (see scale).
func mulDiv(a, b, c int64) (q, rem int64) {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0, 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64, 0
	}
	uq, ur := bits.Div64(hi, lo, uint64(c))
	if uq > math.MaxInt64 {
		return math.MaxInt64, 0
	}
	return int64(uq), int64(ur)
}
