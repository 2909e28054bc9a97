package pcm

import (
	"fmt"
	"math"
	"time"
)

// VADConfig sets the energy voice activity detector. Start from
// DefaultVADConfig and change what you need; the zero VADConfig is invalid.
//
// The detector cuts audio into frames and measures each frame's energy. It
// tracks the noise floor as the minimum, over the last FloorWindow, of the
// frame energy averaged over five frames, so a steady background (hum,
// hiss, line noise) is learned and ignored. A frame is active when its energy
// is ThresholdDB above that floor and above MinLevelDBFS. Active frames
// separated by less than Hangover of inactive ones belong to one segment,
// and a segment counts as speech once it has MinSpeech of active frames.
//
// A segment's ends are then placed where the speech meets the background:
// the segment grows over the frames next to it (after its last active
// frame, and before its first) while they hold at least twice the power
// of the background noise, that is while the speech in them is at least
// as strong as the noise (see Segment). The background's power is the mean
// power of the frames outside segments.
type VADConfig struct {
	// Frame is the analysis frame. Segment boundaries are whole frames.
	// Default 10 ms; range [5 ms, 50 ms].
	Frame time.Duration
	// ThresholdDB is how far above the noise floor a frame's energy must
	// be to count as active. Lower finds quieter speech in noise but lets
	// noise bursts through. Default 6 dB; range [1, 40].
	ThresholdDB float64
	// MinLevelDBFS is the level, relative to a full-scale sine, below which
	// a frame is never active, however quiet the floor (digital silence has
	// no floor). Default −50 dBFS; range [−100, 0).
	MinLevelDBFS float64
	// MinSpeech is how much active audio a segment needs before it counts
	// as speech; shorter blips (clicks, pops) are dropped. Default 100 ms;
	// range [0, 5 s].
	MinSpeech time.Duration
	// Hangover is how long speech continues after the energy drops, so
	// that pauses between words do not split a segment. A pause of at least
	// Hangover ends the segment. Default 300 ms; range [0, 5 s].
	Hangover time.Duration
	// FloorWindow is how far back the noise floor looks. A floor that
	// drops is followed at once; one that rises (noise starting) is learned
	// within FloorWindow, and is treated as speech until then. Speech
	// longer than FloorWindow without a pause raises the floor into the
	// speech. Default 2 s; range [100 ms, 60 s].
	FloorWindow time.Duration
}

// DefaultVADConfig returns 10 ms frames, a 6 dB threshold over the noise
// floor, a −50 dBFS minimum level, 100 ms minimum speech, 300 ms hangover
// and a 2 s noise-floor window. These find speech at 10 dB SNR over white
// or pink noise and nothing in the noise alone.
func DefaultVADConfig() VADConfig {
	return VADConfig{
		Frame:        10 * time.Millisecond,
		ThresholdDB:  6,
		MinLevelDBFS: -50,
		MinSpeech:    100 * time.Millisecond,
		Hangover:     300 * time.Millisecond,
		FloorWindow:  2 * time.Second,
	}
}

// Validate reports whether cfg is usable, and if not, what to change.
func (cfg VADConfig) Validate() error {
	def := DefaultVADConfig()
	switch {
	case cfg.Frame < 5*time.Millisecond || cfg.Frame > 50*time.Millisecond:
		return fmt.Errorf("pcm: VAD Frame %v out of range [5ms, 50ms]; default %v (start from DefaultVADConfig())", cfg.Frame, def.Frame)
	case math.IsNaN(cfg.ThresholdDB) || cfg.ThresholdDB < 1 || cfg.ThresholdDB > 40:
		return fmt.Errorf("pcm: VAD ThresholdDB %v out of range [1, 40]; default %v", cfg.ThresholdDB, def.ThresholdDB)
	case math.IsNaN(cfg.MinLevelDBFS) || cfg.MinLevelDBFS >= 0 || cfg.MinLevelDBFS < -100:
		return fmt.Errorf("pcm: VAD MinLevelDBFS %v out of range [-100, 0); default %v", cfg.MinLevelDBFS, def.MinLevelDBFS)
	case cfg.MinSpeech < 0 || cfg.MinSpeech > 5*time.Second:
		return fmt.Errorf("pcm: VAD MinSpeech %v out of range [0, 5s]; default %v", cfg.MinSpeech, def.MinSpeech)
	case cfg.Hangover < 0 || cfg.Hangover > 5*time.Second:
		return fmt.Errorf("pcm: VAD Hangover %v out of range [0, 5s]; default %v", cfg.Hangover, def.Hangover)
	case cfg.FloorWindow < 100*time.Millisecond || cfg.FloorWindow > time.Minute:
		return fmt.Errorf("pcm: VAD FloorWindow %v out of range [100ms, 1m]; default %v", cfg.FloorWindow, def.FloorWindow)
	}
	return nil
}

// Segment is a stretch of speech, from the start of the audio.
//
// Its ends are where the speech rises out of the background and sinks back
// into it: Start is the start of the first frame, and End the end of the
// last frame, in which the speech is at least as strong as the background
// noise (the frame holds at least twice the noise's mean power), or, in
// digital silence, above MinLevelDBFS. Speech that fades below the noise
// cannot be told from it, so a fading last word ends where it reaches the
// noise level. The hangover, the pause the detector waits out before it
// reports the end, is not part of the segment. Ends are whole frames, so
// they are accurate to a frame (10 ms by default).
type Segment struct {
	// Start is where the speech begins.
	Start time.Duration
	// End is where the speech ends (not where the end was reported).
	End time.Duration
}

// Duration returns End − Start.
func (s Segment) Duration() time.Duration { return s.End - s.Start }

// VADEventType says whether a VADEvent starts or ends speech.
type VADEventType int

// The two kinds of VADEvent.
const (
	// SpeechStart: speech began at the event's time.
	SpeechStart VADEventType = iota + 1
	// SpeechEnd: speech ended at the event's time.
	SpeechEnd
)

// String returns "speech start" or "speech end".
func (t VADEventType) String() string {
	switch t {
	case SpeechStart:
		return "speech start"
	case SpeechEnd:
		return "speech end"
	}
	return fmt.Sprintf("VADEventType(%d)", int(t))
}

// VADEvent is a change between silence and speech in a stream.
//
// Events are reported late, with their true time: a start once the segment
// has MinSpeech of active audio, an end once Hangover has passed without
// speech. Sample and At say where in the stream the change happened (the
// Start or End of the Segment, as Segment defines them), not when it was
// reported.
type VADEvent struct {
	// Type is SpeechStart or SpeechEnd.
	Type VADEventType
	// Sample is the offset of the change from the start of the stream, in
	// samples: the first sample of speech, or the first sample after it.
	Sample int64
	// At is Sample as a time from the start of the stream.
	At time.Duration
}

// String formats e as, for example, "speech start at 1.25s".
func (e VADEvent) String() string { return fmt.Sprintf("%v at %v", e.Type, e.At) }

// vadHighPass is the cutoff in Hz of the second-order high-pass filter the
// VAD measures energy through. Speech has little energy below it; hum, DC
// offset, rumble and the slow swings of pink noise have much, and would
// otherwise make the frame energy of steady noise fluctuate. A frame's
// energy is the smaller of its raw and its high-passed energy, so that the
// filter's ringing after an abrupt stop does not count as sound.
const vadHighPass = 100

// MinVADRate is the lowest sample rate NewVAD accepts.
const MinVADRate = Rate8k

// vadSmooth is how many frames the noise-floor estimate averages before
// taking the minimum: it steadies the floor without delaying decisions,
// which use each frame's own energy.
const vadSmooth = 5

// vadNoiseFrames is the time constant, in frames, of the background's mean
// power that places segment ends (see Segment).
const vadNoiseFrames = 32

// VAD is a streaming energy voice activity detector for audio at one rate;
// see VADConfig for how it decides. Feed it samples with Process in pieces
// of any size; it reports SpeechStart and SpeechEnd events with
// sample-accurate positions (frame boundaries counted from the first
// sample).
//
// A VAD is not safe for concurrent use. After NewVAD it does not allocate,
// except to grow the dst slices it is given.
type VAD struct {
	rate      int
	frame     int     // samples per frame
	minLevel  float64 // mean-square power
	ratio     float64 // threshold as a power ratio
	minActive int     // frames
	hangover  int64   // samples

	// High-pass biquad (see vadHighPass) and its state.
	hb0, hb1, hb2, ha1, ha2 float64
	hx1, hx2, hy1, hy2      float64

	// Frame being accumulated: high-passed and raw sums of squares.
	sum  float64
	raw  float64
	fill int
	pos  int64 // samples consumed, including the frame being accumulated

	// Noise floor: moving average of the last vadSmooth frame powers, and
	// a monotonic deque of those averages over the last window frames.
	recent    [vadSmooth]float64
	nRecent   int
	frames    int64 // frames seen
	window    int64
	dqVal     []float64
	dqIdx     []int64
	dqHead    int
	dqLen     int
	lastFloor float64

	// Background: the mean power of the frames outside segments, as an
	// exponential average over about vadNoiseFrames frames; noiseN counts
	// the frames it has seen (0: none yet, the floor stands in).
	noiseMean float64
	noiseN    int64

	// Powers of the last len(hist) frames, for looking back when a
	// segment opens.
	hist []float64

	// Segment state.
	boundary int64 // segments may not reach back before this sample
	inSeg    bool  // a segment (confirmed or not) is open
	speaking bool  // the open segment is confirmed speech
	segStart int64 // first sample of the open segment
	lastEnd  int64 // end of the last active frame
	tailEnd  int64 // end of the speech: lastEnd and the tail frames after it
	active   int   // active frames in the open segment
}

// NewVAD returns a detector for audio at rate, at least MinVADRate, with
// cfg.
func NewVAD(rate int, cfg VADConfig) (*VAD, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("%w: got %d", ErrBadRate, rate)
	}
	if rate < MinVADRate {
		return nil, fmt.Errorf("pcm: VAD needs a sample rate of at least %d Hz, got %d (resample first)", MinVADRate, rate)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	frame := SamplesFor(rate, cfg.Frame)
	window := max(int64(cfg.FloorWindow/cfg.Frame), 1)
	v := &VAD{
		rate:      rate,
		frame:     frame,
		minLevel:  math.Pow(10, cfg.MinLevelDBFS/10) * fullScaleSinePower,
		ratio:     math.Pow(10, cfg.ThresholdDB/10),
		minActive: max(int((cfg.MinSpeech+cfg.Frame-1)/cfg.Frame), 1),
		hangover:  int64(SamplesFor(rate, cfg.Hangover)),
		window:    window,
		dqVal:     make([]float64, window),
		dqIdx:     make([]int64, window),
		hist:      make([]float64, window),
	}
	// RBJ cookbook high-pass, Q = 1/√2 (Butterworth).
	w0 := 2 * math.Pi * vadHighPass / float64(rate)
	cw, alpha := math.Cos(w0), math.Sin(w0)/math.Sqrt2
	a0 := 1 + alpha
	v.hb0 = (1 + cw) / 2 / a0
	v.hb1 = -(1 + cw) / a0
	v.hb2 = v.hb0
	v.ha1 = -2 * cw / a0
	v.ha2 = (1 - alpha) / a0
	return v, nil
}

// Rate returns the sample rate the detector was built for.
func (v *VAD) Rate() int { return v.rate }

// Speaking reports whether the detector is inside confirmed speech: a
// SpeechStart has been reported and its SpeechEnd has not.
func (v *VAD) Speaking() bool { return v.speaking }

// OpenSpeech reports the speech the detector is inside (Speaking): the
// sample at which it starts, and the end of the speech heard so far (its
// last active frame and the tail frames after it that still stand out
// from the background), before the hangover has run out and SpeechEnd is
// reported. ok is false when the detector is not inside speech.
func (v *VAD) OpenSpeech() (start, end int64, ok bool) {
	if !v.speaking {
		return 0, 0, false
	}
	return v.segStart, v.tailEnd, true
}

// NoiseFloorDBFS returns the current noise-floor estimate in dB relative to
// a full-scale sine, or −Inf before the first frame or in digital silence.
func (v *VAD) NoiseFloorDBFS() float64 {
	return 10 * math.Log10(v.lastFloor/fullScaleSinePower)
}

// Reset forgets the stream, the noise floor included: the next sample is at
// time zero again.
func (v *VAD) Reset() {
	v.sum, v.raw, v.fill, v.pos = 0, 0, 0, 0
	v.hx1, v.hx2, v.hy1, v.hy2 = 0, 0, 0, 0
	v.recent, v.nRecent, v.frames = [vadSmooth]float64{}, 0, 0
	v.dqHead, v.dqLen, v.lastFloor = 0, 0, 0
	v.noiseMean, v.noiseN = 0, 0
	v.inSeg, v.speaking, v.segStart, v.lastEnd, v.tailEnd, v.active = false, false, 0, 0, 0, 0
	v.boundary = 0
}

// Process analyses samples, which continue the stream, and appends to dst
// the events they complete.
func (v *VAD) Process(dst []VADEvent, samples []int16) []VADEvent {
	for len(samples) > 0 {
		k := min(v.frame-v.fill, len(samples))
		b0, b1, b2, a1, a2 := v.hb0, v.hb1, v.hb2, v.ha1, v.ha2
		x1, x2, y1, y2 := v.hx1, v.hx2, v.hy1, v.hy2
		var e, raw float64
		for _, s := range samples[:k] {
			x := float64(s)
			y := b0*x + b1*x1 + b2*x2 - a1*y1 - a2*y2
			x2, x1, y2, y1 = x1, x, y1, y
			e += y * y
			raw += x * x
		}
		v.hx1, v.hx2, v.hy1, v.hy2 = x1, x2, y1, y2
		v.sum += e
		v.raw += raw
		v.fill += k
		v.pos += int64(k)
		samples = samples[k:]
		if v.fill == v.frame {
			dst = v.onFrame(dst, min(v.sum, v.raw)/float64(v.frame))
			v.sum, v.raw, v.fill = 0, 0, 0
		}
	}
	return dst
}

// Flush ends the stream: it analyses any partial last frame, reports the
// end of speech still going on (where it ends, as Segment says, at the end
// of the stream at the latest), drops a segment too short to be speech,
// and resets the detector.
func (v *VAD) Flush(dst []VADEvent) []VADEvent {
	if v.fill > 0 {
		dst = v.onFrame(dst, min(v.sum, v.raw)/float64(v.fill))
	}
	if v.speaking {
		dst = append(dst, v.event(SpeechEnd, v.tailEnd))
	}
	v.Reset()
	return dst
}

// onFrame handles the frame that ends at v.pos with mean-square power p.
func (v *VAD) onFrame(dst []VADEvent, p float64) []VADEvent {
	floor := v.updateFloor(p)
	i := v.frames - 1 // this frame's index
	v.hist[i%int64(len(v.hist))] = p
	end := v.pos
	start := end - int64(v.fill)
	thr := max(v.minLevel, floor*v.ratio)
	tail := v.tailThreshold(floor)
	if p >= thr {
		if !v.inSeg {
			v.inSeg, v.segStart, v.active = true, start, 0
			v.lookBack(i, thr, tail)
		}
		v.lastEnd, v.tailEnd = end, end
		v.active++
		if !v.speaking && v.active >= v.minActive {
			v.speaking = true
			dst = append(dst, v.event(SpeechStart, v.segStart))
		}
		return dst
	}
	if !v.inSeg {
		v.addNoise(p)
		return dst
	}
	// Speech fading out: the frames right after it that still stand out
	// from the background belong to it.
	if v.tailEnd == start && p >= tail {
		v.tailEnd = end
	}
	if end-v.lastEnd >= v.hangover {
		if v.speaking {
			dst = append(dst, v.event(SpeechEnd, v.tailEnd))
		}
		v.inSeg, v.speaking, v.active = false, false, 0
		v.boundary = v.tailEnd
	}
	return dst
}

// tailThreshold returns the power a frame next to a segment needs to
// belong to it: twice the background's (speech at least as strong as the
// noise), or MinLevelDBFS in digital silence. The background is the mean
// power of the frames outside segments, or the noise floor if that is
// higher: the floor is seen first when noise gets louder (the mean is not
// updated inside a segment), and stands in before any frame outside speech.
func (v *VAD) tailThreshold(floor float64) float64 {
	bg := floor
	if v.noiseN > 0 {
		bg = max(bg, v.noiseMean)
	}
	return max(v.minLevel, 2*bg)
}

// addNoise adds frame power p, outside any segment, to the background's
// mean power.
func (v *VAD) addNoise(p float64) {
	v.noiseN++
	w := 1 / float64(min(v.noiseN, vadNoiseFrames))
	v.noiseMean += w * (p - v.noiseMean)
}

// lookBack extends a segment opening at frame i backwards over earlier
// frames that are above the current threshold thr, bridging pauses shorter
// than the hangover, and then over the frames just before it that are
// above tail (the speech rising out of the background; see Segment). The
// first part matters when the floor has just dropped: at the start of a
// stream the floor is the quietest audio so far, so speech from the first
// sample is only seen as speech once a pause has shown the real floor.
func (v *VAD) lookBack(i int64, thr, tail float64) {
	n := int64(len(v.hist))
	f := int64(v.frame)
	var gap int64
	first := i // the earliest active frame
	for j := i - 1; j >= 0 && j > i-n && j*f >= v.boundary; j-- {
		if v.hist[j%n] >= thr {
			v.segStart = j * f
			v.active++
			first, gap = j, 0
			continue
		}
		gap += f
		if gap >= v.hangover {
			break
		}
	}
	for j := first - 1; j >= 0 && j > i-n && j*f >= v.boundary && v.hist[j%n] >= tail; j-- {
		v.segStart = j * f
	}
}

// updateFloor adds frame power p to the floor estimate and returns the
// floor: the minimum of the vadSmooth-frame moving average over the last
// window frames.
func (v *VAD) updateFloor(p float64) float64 {
	v.recent[v.frames%vadSmooth] = p
	v.nRecent = min(v.nRecent+1, vadSmooth)
	var avg float64
	for _, r := range v.recent[:v.nRecent] {
		avg += r
	}
	avg /= float64(v.nRecent)
	i := v.frames
	v.frames++

	w := int(v.window)
	// Drop larger-or-equal values from the back; they can never be the
	// minimum again.
	for v.dqLen > 0 {
		back := (v.dqHead + v.dqLen - 1) % w
		if v.dqVal[back] < avg {
			break
		}
		v.dqLen--
	}
	// Drop expired values from the front.
	for v.dqLen > 0 && v.dqIdx[v.dqHead] <= i-v.window {
		v.dqHead = (v.dqHead + 1) % w
		v.dqLen--
	}
	if v.dqLen == w { // cannot happen: expired entries were dropped
		v.dqHead = (v.dqHead + 1) % w
		v.dqLen--
	}
	at := (v.dqHead + v.dqLen) % w
	v.dqVal[at], v.dqIdx[at] = avg, i
	v.dqLen++
	v.lastFloor = v.dqVal[v.dqHead]
	return v.lastFloor
}

// event returns an event of type t at stream sample s.
func (v *VAD) event(t VADEventType, s int64) VADEvent {
	return VADEvent{Type: t, Sample: s, At: DurationOf(int(s), v.rate)}
}

// DetectSpeech returns the speech segments in c, in order, found by a VAD
// with cfg. It fails if c's rate is not positive or cfg is invalid.
func DetectSpeech(c Chunk, cfg VADConfig) ([]Segment, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	v, err := NewVAD(c.Rate, cfg)
	if err != nil {
		return nil, err
	}
	events := v.Flush(v.Process(nil, c.Samples))
	return SegmentsOf(events), nil
}

// SegmentsOf pairs SpeechStart and SpeechEnd events, as one VAD reports
// them, into segments. A trailing start without an end (a stream not yet
// flushed) is left out.
func SegmentsOf(events []VADEvent) []Segment {
	var out []Segment
	var open *VADEvent
	for i := range events {
		e := &events[i]
		switch e.Type {
		case SpeechStart:
			open = e
		case SpeechEnd:
			if open != nil {
				out = append(out, Segment{Start: open.At, End: e.At})
				open = nil
			}
		}
	}
	return out
}
