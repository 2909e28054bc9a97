package pcm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// DTMF (dual-tone multi-frequency) signalling after ITU-T Q.23 and Q.24:
// each key is the sum of one tone of the low group (697, 770, 852, 941 Hz)
// and one of the high group (1209, 1336, 1477, 1633 Hz).
//
//	        1209 1336 1477 1633
//	 697     1    2    3    A
//	 770     4    5    6    B
//	 852     7    8    9    C
//	 941     *    0    #    D

// dtmfLow and dtmfHigh are the Q.23 frequencies in Hz.
var (
	dtmfLow  = [4]float64{697, 770, 852, 941}
	dtmfHigh = [4]float64{1209, 1336, 1477, 1633}
)

// dtmfKeys maps a row (low tone) and a column (high tone) to the key.
const dtmfKeys = "123A456B789C*0#D"

// MinDTMFRate is the lowest sample rate GenerateDTMF and the DTMF detector
// accept: telephone-band audio at 8 kHz.
const MinDTMFRate = Rate8k

// ErrDTMFDigit reports a character that is not a DTMF key (0-9, *, #, A-D).
var ErrDTMFDigit = errors.New("pcm: not a DTMF digit")

// DTMFTones returns the low-group and high-group frequencies in Hz of the
// DTMF key d: one of 0-9, *, # and A-D (a-d are accepted as A-D). Any other
// character is ErrDTMFDigit.
func DTMFTones(d rune) (low, high float64, err error) {
	i := dtmfIndex(d)
	if i < 0 {
		return 0, 0, fmt.Errorf("%w: %q (use 0-9, *, #, A-D)", ErrDTMFDigit, d)
	}
	return dtmfLow[i/4], dtmfHigh[i%4], nil
}

// dtmfIndex returns the index of key d in dtmfKeys, or -1.
func dtmfIndex(d rune) int {
	if d >= 'a' && d <= 'd' {
		d -= 'a' - 'A'
	}
	if d > 0x7f {
		return -1
	}
	return strings.IndexByte(dtmfKeys, byte(d))
}

// DTMFConfig sets how GenerateDTMF renders digits.
type DTMFConfig struct {
	// Tone is how long each key sounds. Q.24 receivers must accept 40 ms;
	// 100 ms is the usual dialling pace. Must be positive and at most one
	// minute.
	Tone time.Duration
	// Gap is the silence between consecutive keys (none before the first or
	// after the last). Receivers need at least 40 ms to tell a repeated key
	// from one long press. Must be zero or positive, at most one minute.
	Gap time.Duration
	// LevelDBFS is the level of the low-group tone in dB relative to a
	// full-scale sine (so 0 means peak amplitude 32767). Must be below 0.
	LevelDBFS float64
	// TwistDB is how much louder the high-group tone is than the low-group
	// tone, in dB; negative makes it quieter. Telephones send +2 dB or so to
	// make up for line loss. The two tones together must not clip.
	TwistDB float64
}

// DefaultDTMFConfig returns 100 ms tones, 100 ms gaps, −10 dBFS per tone
// and no twist: the peak of the sum is −4 dBFS.
func DefaultDTMFConfig() DTMFConfig {
	return DTMFConfig{Tone: 100 * time.Millisecond, Gap: 100 * time.Millisecond, LevelDBFS: -10}
}

// Validate reports whether cfg can be rendered, and if not, what to change.
func (cfg DTMFConfig) Validate() error {
	switch {
	case cfg.Tone <= 0 || cfg.Tone > time.Minute:
		return fmt.Errorf("pcm: DTMF tone duration %v out of range (0, 1m]; try DefaultDTMFConfig().Tone = %v", cfg.Tone, DefaultDTMFConfig().Tone)
	case cfg.Gap < 0 || cfg.Gap > time.Minute:
		return fmt.Errorf("pcm: DTMF gap %v out of range [0, 1m]; try DefaultDTMFConfig().Gap = %v", cfg.Gap, DefaultDTMFConfig().Gap)
	case math.IsNaN(cfg.LevelDBFS) || cfg.LevelDBFS >= 0 || cfg.LevelDBFS < -90:
		return fmt.Errorf("pcm: DTMF level %v dBFS out of range [-90, 0); try %v", cfg.LevelDBFS, DefaultDTMFConfig().LevelDBFS)
	case math.IsNaN(cfg.TwistDB) || math.Abs(cfg.TwistDB) > 20:
		return fmt.Errorf("pcm: DTMF twist %v dB out of range [-20, 20]", cfg.TwistDB)
	}
	lo, hi := cfg.amplitudes()
	if lo+hi > 1 {
		return fmt.Errorf("pcm: DTMF level %v dBFS with twist %v dB clips (peak %.1f dBFS); lower LevelDBFS",
			cfg.LevelDBFS, cfg.TwistDB, 20*math.Log10(lo+hi))
	}
	return nil
}

// amplitudes returns the peak amplitudes of the low and high tone as
// fractions of full scale.
func (cfg DTMFConfig) amplitudes() (lo, hi float64) {
	lo = math.Pow(10, cfg.LevelDBFS/20)
	return lo, lo * math.Pow(10, cfg.TwistDB/20)
}

// dtmfRamp is the raised-cosine fade at each end of a generated tone; it
// keeps the tone's spectrum narrow (no click) without shortening it.
const dtmfRamp = 2 * time.Millisecond

// GenerateDTMF renders digits as DTMF tones at rate: for each key, cfg.Tone
// of its two tones, then cfg.Gap of silence before the next key. The result
// lasts len(digits)·Tone + (len(digits)−1)·Gap. Digits are 0-9, *, #, A-D
// (a-d are accepted as A-D); any other character, or an empty string, is an
// error naming it. rate must be at least MinDTMFRate.
func GenerateDTMF(digits string, rate int, cfg DTMFConfig) (Chunk, error) {
	if err := checkDTMFRate(rate); err != nil {
		return Chunk{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Chunk{}, err
	}
	if digits == "" {
		return Chunk{}, fmt.Errorf("%w: empty digit string (give at least one of 0-9, *, #, A-D)", ErrDTMFDigit)
	}
	n := 0
	for pos, d := range digits {
		if dtmfIndex(d) < 0 {
			return Chunk{}, fmt.Errorf("%w: %q at byte %d of %q (use 0-9, *, #, A-D)", ErrDTMFDigit, d, pos, digits)
		}
		n++
	}
	tone, gap := SamplesFor(rate, cfg.Tone), SamplesFor(rate, cfg.Gap)
	if tone < 1 {
		return Chunk{}, fmt.Errorf("pcm: DTMF tone %v is shorter than one sample at %d Hz", cfg.Tone, rate)
	}
	out := make([]int16, n*tone+(n-1)*gap)
	ramp := min(SamplesFor(rate, dtmfRamp), tone/4)
	aLo, aHi := cfg.amplitudes()
	aLo, aHi = aLo*32767, aHi*32767
	at := 0
	for _, d := range digits {
		lo, hi, _ := DTMFTones(d)
		wLo, wHi := 2*math.Pi*lo/float64(rate), 2*math.Pi*hi/float64(rate)
		seg := out[at : at+tone]
		for i := range seg {
			v := aLo*math.Sin(wLo*float64(i)) + aHi*math.Sin(wHi*float64(i))
			if j := min(i, tone-1-i); j < ramp {
				v *= 0.5 - 0.5*math.Cos(math.Pi*(float64(j)+0.5)/float64(ramp))
			}
			seg[i] = clamp16(int32(math.Round(v)))
		}
		at += tone + gap
	}
	return Chunk{Rate: rate, Samples: out}, nil
}

// checkDTMFRate reports whether rate is usable for DTMF.
func checkDTMFRate(rate int) error {
	if rate <= 0 {
		return fmt.Errorf("%w: got %d", ErrBadRate, rate)
	}
	if rate < MinDTMFRate {
		return fmt.Errorf("pcm: DTMF needs a sample rate of at least %d Hz, got %d (resample first)", MinDTMFRate, rate)
	}
	return nil
}

// DTMFDigit is a key detected in audio.
type DTMFDigit struct {
	// Digit is the key: '0'-'9', '*', '#' or 'A'-'D'.
	Digit rune
	// Start and End are the estimated start and end of the key's tone from
	// the start of the stream, accurate to within about 5 ms for a clean
	// key (less than one 6.4 ms analysis step), and to about 10 ms in noise.
	Start, End time.Duration
}

// Duration returns how long the key was held, End − Start.
func (d DTMFDigit) Duration() time.Duration { return d.End - d.Start }

// String formats d as, for example, "5@1.2s-1.3s".
func (d DTMFDigit) String() string {
	return fmt.Sprintf("%c@%v-%v", d.Digit, d.Start, d.End)
}

// DTMFString returns the keys of digits in order, for example "123#".
func DTMFString(digits []DTMFDigit) string {
	var b strings.Builder
	for _, d := range digits {
		b.WriteRune(d.Digit)
	}
	return b.String()
}

// DTMFDetectConfig sets the DTMF detector's acceptance tests. The defaults
// follow the usual telephone-receiver practice (Q.24, Bellcore).
type DTMFDetectConfig struct {
	// MinLevelDBFS is the weakest tone accepted, per tone, in dB relative to
	// a full-scale sine. Default −36 dBFS. Range [−90, 0).
	MinLevelDBFS float64
	// NormalTwistDB is how much louder the high-group tone may be than the
	// low-group tone. Default 8 dB. Range [0, 20].
	NormalTwistDB float64
	// ReverseTwistDB is how much louder the low-group tone may be than the
	// high-group tone. Default 4 dB. Range [0, 20].
	ReverseTwistDB float64
	// MinTone is the shortest key press accepted. Q.24 asks receivers to
	// accept 40 ms and reject 20 ms or less. Default 40 ms; range
	// [20 ms, 1 s].
	MinTone time.Duration
}

// DefaultDTMFDetectConfig returns MinLevelDBFS −36, NormalTwistDB 8,
// ReverseTwistDB 4 and MinTone 40 ms.
func DefaultDTMFDetectConfig() DTMFDetectConfig {
	return DTMFDetectConfig{MinLevelDBFS: -36, NormalTwistDB: 8, ReverseTwistDB: 4, MinTone: 40 * time.Millisecond}
}

// Validate reports whether cfg is usable, and if not, what to change.
func (cfg DTMFDetectConfig) Validate() error {
	def := DefaultDTMFDetectConfig()
	switch {
	case math.IsNaN(cfg.MinLevelDBFS) || cfg.MinLevelDBFS >= 0 || cfg.MinLevelDBFS < -90:
		return fmt.Errorf("pcm: DTMF MinLevelDBFS %v out of range [-90, 0); default %v", cfg.MinLevelDBFS, def.MinLevelDBFS)
	case math.IsNaN(cfg.NormalTwistDB) || cfg.NormalTwistDB < 0 || cfg.NormalTwistDB > 20:
		return fmt.Errorf("pcm: DTMF NormalTwistDB %v out of range [0, 20]; default %v", cfg.NormalTwistDB, def.NormalTwistDB)
	case math.IsNaN(cfg.ReverseTwistDB) || cfg.ReverseTwistDB < 0 || cfg.ReverseTwistDB > 20:
		return fmt.Errorf("pcm: DTMF ReverseTwistDB %v out of range [0, 20]; default %v", cfg.ReverseTwistDB, def.ReverseTwistDB)
	case cfg.MinTone < 20*time.Millisecond || cfg.MinTone > time.Second:
		return fmt.Errorf("pcm: DTMF MinTone %v out of range [20ms, 1s]; default %v", cfg.MinTone, def.MinTone)
	}
	return nil
}

// Fixed acceptance tests of the DTMF detector, besides DTMFDetectConfig.
const (
	// dtmfBlock is the analysis block: 205 samples at 8 kHz, the classic
	// choice, which resolves 39 Hz — half the 73 Hz between the closest
	// DTMF tones. The block is Hann-windowed and analysed every quarter
	// block.
	dtmfBlock = 25625 * time.Microsecond
	// dtmfRelPeak: within each group, the chosen tone must exceed each
	// other tone of the group by this power ratio (10 dB).
	dtmfRelPeak = 10.0
	// dtmfToneFraction: the two tones must carry at least this fraction of
	// the block's power. Speech and noise spread their power; a key does
	// not.
	dtmfToneFraction = 0.6
	// dtmfHarmonic: each tone's second harmonic must be weaker than the
	// tone by this power ratio (15 dB), which rejects voices and music
	// whose harmonics happen to fall on DTMF frequencies.
	dtmfHarmonic = 31.622776601683793
	// dtmfRelease is how many consecutive analysis steps without the key
	// end a key press: a single dropped step (6.4 ms) does not split one
	// long press into two digits.
	dtmfRelease = 2
)

// DTMFDetector finds DTMF keys in a stream of samples at one rate, with
// Goertzel filters over a Hann-windowed 25.6 ms block analysed every 6.4 ms.
// A step counts as a key when both its tones are above MinLevelDBFS, the
// twist is within limits, each tone dominates its group, the two tones carry
// most of the power, and neither has a strong second harmonic. Consecutive
// steps with the same key make one key press (debounce), which is reported
// once it ends if it lasted at least MinTone.
//
// A DTMFDetector is not safe for concurrent use. After construction it does
// not allocate, except to grow the dst slices it is given.
type DTMFDetector struct {
	rate     int
	n, hop   int
	minLevel float64 // linear power (mean square) per tone
	normTw   float64 // max high/low power ratio
	revTw    float64 // max low/high power ratio
	minLen   int64   // shortest estimated key length accepted, in samples

	win   []float64 // Hann window, n
	work  []float64 // windowed block, n
	buf   []int16   // pending samples, up to n
	wPow  float64   // Σw²/n: mean-square gain of the window
	toneK float64   // converts |X|² to tone mean-square power
	coeff [8]float64
	harmC [8]float64 // coefficients of the second harmonics (0 if ≥ Nyquist)
	// noLowHarm[lo][hi] is set when the low tone's second harmonic lies
	// within two bins of the high tone (keys 2, 6 and C), whose leakage
	// would swamp the harmonic test; that key skips it.
	noLowHarm [4][4]bool
	powers    [8]float64

	next   int64 // index of the next analysis step
	pushed int64 // samples received in this stream

	cur    rune  // key of the current run, 0 if none
	first  int64 // first step of the run
	last   int64 // last step of the run that had the key
	misses int   // consecutive steps since last without the key
}

// NewDTMFDetector returns a detector for audio at rate, which must be at
// least MinDTMFRate, with the acceptance tests of cfg.
func NewDTMFDetector(rate int, cfg DTMFDetectConfig) (*DTMFDetector, error) {
	if err := checkDTMFRate(rate); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := SamplesFor(rate, dtmfBlock)
	hop := (n + 2) / 4
	d := &DTMFDetector{
		rate:     rate,
		n:        n,
		hop:      hop,
		minLevel: math.Pow(10, cfg.MinLevelDBFS/10) * fullScaleSinePower,
		normTw:   math.Pow(10, cfg.NormalTwistDB/10),
		revTw:    math.Pow(10, cfg.ReverseTwistDB/10),
		win:      make([]float64, n),
		work:     make([]float64, n),
		buf:      make([]int16, n),
	}
	var sumW, sumW2 float64
	for i := range d.win {
		w := 0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/float64(n))
		d.win[i] = w
		sumW += w
		sumW2 += w * w
	}
	d.wPow = sumW2 / float64(n)
	// A sine of amplitude A at a filter's frequency gives |X| = A·Σw/2,
	// and its mean-square power is A²/2.
	d.toneK = 2 / (sumW * sumW)
	for i := range 4 {
		d.coeff[i] = goertzelCoeff(dtmfLow[i], rate)
		d.coeff[4+i] = goertzelCoeff(dtmfHigh[i], rate)
		if 2*dtmfLow[i] < float64(rate)/2 {
			d.harmC[i] = goertzelCoeff(2*dtmfLow[i], rate)
		}
		if 2*dtmfHigh[i] < float64(rate)/2 {
			d.harmC[4+i] = goertzelCoeff(2*dtmfHigh[i], rate)
		}
		for j, fh := range dtmfHigh {
			d.noLowHarm[i][j] = math.Abs(2*dtmfLow[i]-fh) < 2*float64(rate)/float64(n)
		}
	}
	d.Reset()
	// finish estimates a key's length to within half a step; accept a run
	// whose estimate is within half a step of MinTone.
	d.minLen = int64(SamplesFor(rate, cfg.MinTone) - hop/2)
	return d, nil
}

// fullScaleSinePower is the mean-square power of a full-scale int16 sine.
const fullScaleSinePower = 32767.0 * 32767.0 / 2

// Rate returns the sample rate the detector was built for.
func (d *DTMFDetector) Rate() int { return d.rate }

// Reset forgets the stream: the next sample is at time zero again.
func (d *DTMFDetector) Reset() {
	// Start with all but one step of silence in the block, so that the
	// first analysis steps look at the stream's start the way later ones
	// look at any key's start.
	d.buf = d.buf[:d.n-d.hop]
	clear(d.buf)
	d.next, d.pushed = 0, 0
	d.cur, d.first, d.last, d.misses = 0, 0, 0, 0
}

// Process analyses samples, which continue the stream, and appends to dst
// the keys whose press ended within them. A key is reported about 20 ms
// after its tones stop, so the last key of a stream may only come out of
// Flush.
func (d *DTMFDetector) Process(dst []DTMFDigit, samples []int16) []DTMFDigit {
	d.pushed += int64(len(samples))
	for len(samples) > 0 {
		k := min(d.n-len(d.buf), len(samples))
		d.buf = append(d.buf, samples[:k]...)
		samples = samples[k:]
		if len(d.buf) == d.n {
			dst = d.step(dst, d.classify())
			d.buf = d.buf[:copy(d.buf, d.buf[d.hop:])]
		}
	}
	return dst
}

// Flush ends the stream: it analyses the samples still buffered (padding
// with silence), appends any key still being pressed to dst, and resets the
// detector for a new stream.
func (d *DTMFDetector) Flush(dst []DTMFDigit) []DTMFDigit {
	// Analyse until a step's centre passes the last real sample.
	for d.pushed > 0 && d.stepStart(d.next)+int64(d.n/2) < d.pushed {
		for len(d.buf) < d.n {
			d.buf = append(d.buf, 0)
		}
		dst = d.step(dst, d.classify())
		d.buf = d.buf[:copy(d.buf, d.buf[d.hop:])]
	}
	dst = d.finish(dst)
	d.Reset()
	return dst
}

// step advances the key-press state machine by one analysis step whose
// classification is key (0 for none).
func (d *DTMFDetector) step(dst []DTMFDigit, key rune) []DTMFDigit {
	k := d.next
	d.next++
	if d.cur != 0 {
		if key == d.cur {
			d.last, d.misses = k, 0
			return dst
		}
		d.misses++
		if key == 0 && d.misses < dtmfRelease {
			return dst
		}
		dst = d.finish(dst)
	}
	if key != 0 {
		d.cur, d.first, d.last, d.misses = key, k, k, 0
	}
	return dst
}

// finish reports the current run, if any and long enough, and clears it.
func (d *DTMFDetector) finish(dst []DTMFDigit) []DTMFDigit {
	if d.cur == 0 {
		return dst
	}
	// The steps that see a key are those whose window's centre half is
	// inside the tone, so the tone runs from about a quarter block before
	// the first such step's centre to a quarter block after the last one's.
	n := int64(d.n)
	start := d.stepStart(d.first) + n/2 - n/4
	end := d.stepStart(d.last) + n/2 + n/4
	// A key cut by the stream's start or end is judged on what was heard.
	start, end = max(start, 0), min(end, d.pushed)
	if end-start >= d.minLen {
		dst = append(dst, DTMFDigit{Digit: d.cur, Start: DurationOf(int(start), d.rate), End: DurationOf(int(end), d.rate)})
	}
	d.cur, d.misses = 0, 0
	return dst
}

// classify returns the key heard in the buffered block, or 0.
func (d *DTMFDetector) classify() rune {
	var e float64
	for i, s := range d.buf {
		v := float64(s) * d.win[i]
		d.work[i] = v
		e += v * v
	}
	total := e / float64(d.n) / d.wPow // mean-square power of the block
	if total < 2*d.minLevel {
		return 0
	}
	goertzelBank8(d.work, &d.coeff, &d.powers)
	p := &d.powers
	for i := range p {
		p[i] *= d.toneK
	}
	lo, hi := argmax4(p[0:4]), 4+argmax4(p[4:8])
	pl, ph := p[lo], p[hi]
	if pl < d.minLevel || ph < d.minLevel {
		return 0
	}
	if ph > pl*d.normTw || pl > ph*d.revTw {
		return 0
	}
	for i := range 4 {
		if i != lo && p[i]*dtmfRelPeak > pl {
			return 0
		}
		if 4+i != hi && p[4+i]*dtmfRelPeak > ph {
			return 0
		}
	}
	if pl+ph < dtmfToneFraction*total {
		return 0
	}
	if c := d.harmC[lo]; c != 0 && !d.noLowHarm[lo][hi-4] && goertzelPower(d.work, c)*d.toneK*dtmfHarmonic > pl {
		return 0
	}
	if c := d.harmC[hi]; c != 0 && goertzelPower(d.work, c)*d.toneK*dtmfHarmonic > ph {
		return 0
	}
	return rune(dtmfKeys[lo*4+(hi-4)])
}

// argmax4 returns the index of the largest of four values.
func argmax4(p []float64) int {
	best := 0
	for i := 1; i < 4; i++ {
		if p[i] > p[best] {
			best = i
		}
	}
	return best
}

// stepStart returns the stream position of the first sample of analysis
// step k's block; the first blocks start before the stream (see Reset).
func (d *DTMFDetector) stepStart(k int64) int64 {
	return k*int64(d.hop) - int64(d.n-d.hop)
}

// DetectDTMF returns the DTMF keys in c, in order, with their times. c's
// rate must be at least MinDTMFRate. See DTMFDetector for the tests a key
// must pass.
func DetectDTMF(c Chunk, cfg DTMFDetectConfig) ([]DTMFDigit, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d, err := NewDTMFDetector(c.Rate, cfg)
	if err != nil {
		return nil, err
	}
	out := d.Process(nil, c.Samples)
	return d.Flush(out), nil
}
