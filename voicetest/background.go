package voicetest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// DefaultBackgroundLevel is the level of a Background's scene when its
// Level is zero: a noticeable bed under speech at about −20 dBFS.
const DefaultBackgroundLevel = -35.0

// Background is where the caller is, heard for the whole call as on a
// real phone line: a scene (a cafe, a street) that plays under the
// caller's speech, through Silence steps and between turns while the
// agent speaks, and the channel that carries it all (a cell phone).
//
// The runner plays it to agents that take audio, in real-time pacing:
// from the first step on, whenever the user is not speaking it sends the
// scene in 20 ms frames, and each utterance (after its own effects and
// Config.Effects) gets Voice, then the scene mixed in at the same point
// of the stream, then Line. So an agent's voice activity detection hears
// the noise between turns, as it would on a real call. Sleep sends
// nothing (not even the scene), and in-band DTMF tones are sent clean.
// Under PaceFast, and to text-only agents, the scene plays under
// utterances and Silence only. The scene between turns is sent but not
// recorded: the Recording's segments hold the user's utterances (with the
// scene in them) and, with a Background, its Silence steps (a user
// segment with no text).
type Background struct {
	// Scene is the background (pcm.Cafe(), pcm.Street(), …); the zero
	// Scene plays nothing.
	Scene pcm.Scene
	// Level is the scene's level in dBFS (its steady part's RMS); 0
	// means DefaultBackgroundLevel.
	Level float64
	// Seed makes the scene's random parts (talkers, events) repeatable.
	Seed uint64
	// Voice transforms the user's voice alone before the scene is mixed
	// in (pcm.Distance, pcm.Muffled); nil for none.
	Voice pcm.Effect
	// Line is the channel, applied to the voice and the scene together
	// (pcm.CellPhone, pcm.Landline); nil for none.
	Line pcm.Effect
}

// BackgroundOf returns the Background of a pcm.Preset: its scene at its
// Level, its Voice and Line effects, with seed.
func BackgroundOf(p pcm.Preset, seed uint64) Background {
	return Background{Scene: p.Scene, Level: p.Level, Seed: seed, Voice: p.Voice, Line: p.Line}
}

// active reports whether b does anything.
func (b Background) active() bool {
	return b.Scene.Name() != "" || b.Voice != nil || b.Line != nil
}

func (b Background) validate() error {
	if math.IsNaN(b.Level) || math.IsInf(b.Level, 0) || b.Level > 0 {
		return fmt.Errorf("voicetest: Config.Background.Level is %v; use a level in dBFS below 0 (e.g. -35), or 0 for %v", b.Level, DefaultBackgroundLevel)
	}
	return nil
}

// Line processing between turns: the scene is put through Line a block
// at a time, each with some history before it (so that filters start
// settled) and a little of the scene after it (so that non-causal
// filters, such as a resampler's, see what follows).
const (
	bgBlock     = time.Second
	bgHistory   = 60 * time.Millisecond
	bgLookahead = 20 * time.Millisecond
)

// bgPlayer is a run's playback of Config.Background.
type bgPlayer struct {
	stream *pcm.SceneStream
	rate   int
	// raw holds scene samples read from the stream and not yet sent (the
	// lookahead of the block being sent, and the rest of that block).
	raw []int16
	// hist is the last bgHistory of what went into Line (voice and
	// scene), the warm-up of the next piece.
	hist []int16
	// pending is the block of line-processed scene being sent between
	// turns, frame by frame.
	pending []int16
	// next is the offset of the next frame of scene the line is due,
	// between turns.
	next time.Duration
	// hold counts what stops frames between turns: the user speaking
	// (sendAudio), a Sleep.
	hold int
	// dead stops the frames after a failed send: the next step that
	// needs the line reports the failure.
	dead bool
}

// peek returns the next n samples of scene without using them up.
func (bg *bgPlayer) peek(n int) []int16 {
	if len(bg.raw) < n {
		bg.raw = append(bg.raw, bg.stream.Read(n-len(bg.raw)).Samples...)
	}
	return bg.raw[:n]
}

// take returns the next n samples of scene and uses them up.
func (bg *bgPlayer) take(n int) []int16 {
	out := append([]int16(nil), bg.peek(n)...)
	bg.raw = bg.raw[n:]
	return out
}

// remember keeps the end of s, what went into Line last, as history.
func (bg *bgPlayer) remember(s []int16) {
	h := pcm.SamplesFor(bg.rate, bgHistory)
	bg.hist = append(bg.hist, s...)
	if len(bg.hist) > h {
		bg.hist = append([]int16(nil), bg.hist[len(bg.hist)-h:]...)
	}
}

// mixLine puts mixed (voice and scene) through Background.Line, with the
// history before it and the scene's lookahead after it, and returns the
// part for mixed.
func (r *runner) mixLine(bg *bgPlayer, mixed []int16) []int16 {
	f := r.cfg.Background.Line
	if f == nil {
		bg.remember(mixed)
		return mixed
	}
	look := bg.peek(pcm.SamplesFor(bg.rate, bgLookahead))
	in := make([]int16, 0, len(bg.hist)+len(mixed)+len(look))
	in = append(append(append(in, bg.hist...), mixed...), look...)
	h := len(bg.hist)
	out := f(pcm.Chunk{Rate: bg.rate, Samples: in})
	bg.remember(mixed)
	if out.Rate != bg.rate || out.Len() != len(in) {
		// An effect that changes the length or rate (Tempo) cannot be a
		// line: pass the audio through unchanged rather than misalign it.
		r.logf("voicetest: Config.Background.Line changed the length or rate of the audio; it is not applied (use length-keeping effects)")
		return mixed
	}
	return out.Samples[h : h+len(mixed)]
}

// background returns the run's background player, made on first use,
// or nil when Config.Background is inactive.
func (r *runner) background() *bgPlayer {
	if r.bg == nil {
		if !r.cfg.Background.active() {
			return nil
		}
		b := r.cfg.Background
		level := b.Level
		if level == 0 {
			level = DefaultBackgroundLevel
		}
		r.bg = &bgPlayer{stream: b.Scene.Stream(r.cfg.Rate, level, b.Seed), rate: r.cfg.Rate, next: r.now()}
	}
	return r.bg
}

// surround returns user audio c as the line carries it: Background.Voice,
// the scene mixed in, Background.Line. Without a Background it returns c.
func (r *runner) surround(c pcm.Chunk) pcm.Chunk {
	bg := r.background()
	if bg == nil || c.Rate != bg.rate {
		return c
	}
	if v := r.cfg.Background.Voice; v != nil {
		if vc := v(c); vc.Rate == c.Rate {
			c = vc
		}
	}
	// What was processed ahead for the gap between turns is not sent:
	// the user's audio takes over from the scene's current point.
	bg.pending = nil
	mixed := append([]int16(nil), c.Samples...)
	pcm.MixInto(mixed, bg.take(len(mixed)), 1)
	return pcm.Chunk{Rate: c.Rate, Samples: r.mixLine(bg, mixed)}
}

// holdBackground stops the scene's frames between turns until the
// returned function is called (the user's own audio carries the scene
// meanwhile, or a Sleep sends nothing); then they start again from now.
func (r *runner) holdBackground() func() {
	bg := r.background()
	if bg == nil {
		return func() {}
	}
	bg.hold++
	return func() {
		bg.hold--
		if bg.hold == 0 {
			bg.next = max(bg.next, r.now())
		}
	}
}

// recordSilence records the audio a Silence step sent, when it carried a
// background scene: the caller's line was not silent.
func (r *runner) recordSilence(at time.Duration, c pcm.Chunk, sent time.Duration) {
	if r.bg == nil || sent <= 0 {
		return
	}
	r.segs = append(r.segs, Segment{Role: RoleUser, Turn: r.st.turn, Start: at, End: at + sent, audio: segmentAudio{whole: c.Slice(0, sent)}})
}

// maxBackgroundLag bounds the frames of scene the runner sends at once
// when it fell behind (a slow engine call on the real clock): the rest
// of the gap is skipped, as audio a phone did not send is lost.
const maxBackgroundLag = 200 * time.Millisecond

// backgroundDue returns when the next frame of scene is due between
// turns, and false when none will be sent.
func (r *runner) backgroundDue() (time.Duration, bool) {
	bg := r.bg
	if bg == nil || bg.hold > 0 || bg.dead || !r.caps.Audio || !r.realTime() || r.hungUp || r.conn == nil || r.streamClosed {
		return 0, false
	}
	return bg.next, true
}

// bgFrame returns the next frame of scene for the gap between turns, put
// through Line a block at a time.
func (r *runner) bgFrame(bg *bgPlayer) pcm.Chunk {
	n := pcm.SamplesFor(bg.rate, FrameDuration)
	if len(bg.pending) < n {
		block := append([]int16(nil), bg.peek(pcm.SamplesFor(bg.rate, bgBlock))...)
		// line reads the lookahead after the block: take the block first.
		bg.raw = bg.raw[len(block):]
		bg.pending = r.mixLine(bg, block)
		// Put the block's samples back: they are used up frame by frame.
		bg.raw = append(block, bg.raw...)
	}
	out := pcm.Chunk{Rate: bg.rate, Samples: bg.pending[:n:n]}
	bg.pending = bg.pending[n:]
	bg.take(n)
	return out
}

// playBackground sends the frames of scene due by now, between turns.
func (r *runner) playBackground(ctx context.Context) {
	if r.background() == nil {
		return
	}
	due, ok := r.backgroundDue()
	if !ok {
		return
	}
	bg := r.bg
	now := r.now()
	if now-due > maxBackgroundLag {
		skip := pcm.SamplesFor(bg.rate, now-maxBackgroundLag-due)
		bg.pending = nil
		bg.take(skip)
		due = now - maxBackgroundLag
	}
	for due <= now && !bg.dead {
		if err := r.conn.SendAudio(ctx, r.bgFrame(bg)); err != nil {
			// The line failed or the agent hung up: stop the scene,
			// and let the next step that needs the line say why.
			bg.dead = true
			r.logf("voicetest: stopped the background at %s: sending it to the %s adapter failed: %v", fmtOffset(now), r.adapter(), err)
			return
		}
		due += FrameDuration
	}
	bg.next = due
}
