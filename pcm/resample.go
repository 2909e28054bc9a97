package pcm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Resampler design. The filter is a Kaiser-windowed sinc low-pass run as a
// polyphase bank (rational L/M conversion): its gain is within 0.1 dB of
// unity up to 0.9 × the lower Nyquist frequency, and it attenuates
// everything at or above the lower Nyquist frequency by at least 90 dB.
const (
	// resampleAtten is the design stop-band attenuation in dB. Kaiser's
	// formulas are approximate, so it is well above the 90 dB promised;
	// TestResamplerFilterResponse measures the result (92.4 dB or more).
	resampleAtten = 93.5
	// resamplePass is the Kaiser design's pass-band edge, where the
	// deviation from unity is as small as the stop-band ripple, as a
	// fraction of the lower of the two Nyquist frequencies. The cut-off
	// sits halfway between it and the Nyquist frequency (0.9425), and the
	// gain is still within 0.1 dB of unity at 0.9 (about −0.07 dB).
	resamplePass = 0.885
	// maxExactPhases is the largest interpolation factor L that gets an
	// exact polyphase bank; larger ones (rate pairs such as 44100↔44101) use
	// approxPhases phases with linear interpolation between neighbours.
	maxExactPhases = 1024
	// approxPhases is the phase resolution of the interpolated bank.
	approxPhases = 512
	// maxCoefficients bounds the coefficient table (4 bytes each), so that a
	// pathological ratio is an error rather than a huge allocation.
	maxCoefficients = 1 << 22
	// resampleBlock is how many input samples Process converts at a time;
	// it bounds the Resampler's working buffer.
	resampleBlock = 4096
	// maxResampleRate bounds the rates a Resampler accepts, which keeps
	// its position arithmetic far from int64 overflow.
	maxResampleRate = 1 << 24
)

// ErrResampleRatio reports a pair of rates whose conversion filter would be
// unreasonably large (one rate thousands of times the other).
var ErrResampleRatio = errors.New("pcm: resampling ratio too extreme")

// Resample converts c to rate with an anti-aliasing low-pass filter and
// returns a new Chunk of round(len·rate/c.Rate) samples, time-aligned with c
// (the filter's delay is compensated). The same rate returns a copy.
// See Resampler for the filter's specification.
func Resample(c Chunk, rate int) (Chunk, error) {
	if err := c.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: resample from invalid chunk: %w", err)
	}
	if rate <= 0 {
		return Chunk{}, fmt.Errorf("pcm: resample to %d Hz: %w", rate, ErrBadRate)
	}
	if rate == c.Rate {
		return c.Clone(), nil
	}
	r, err := NewResampler(c.Rate, rate)
	if err != nil {
		return Chunk{}, err
	}
	out := make([]int16, 0, r.MaxOut(len(c.Samples)))
	out = r.Process(out, c.Samples)
	out = r.Flush(out)
	return Chunk{Rate: rate, Samples: out}, nil
}

// Resampler converts a stream of samples from one rate to another. It keeps
// its filter state between calls, so feeding audio in frames of any size
// gives the same samples as one call with all of it.
//
// The filter is a Kaiser-windowed sinc low-pass run as a polyphase bank
// (rational L/M conversion, L/M = to/from in lowest terms): its gain is
// within 0.1 dB of unity up to 0.9 of the lower Nyquist frequency (flat to
// 0.001 dB up to 0.85), and the stop band, from the lower Nyquist frequency
// up, is attenuated by at least 90 dB, so nothing aliases into the pass band
// or the transition band. (sox's rate -v is flat to 0.95.) For pairs whose
// L exceeds 1024 (such as 44100↔44101 Hz) the bank has 512 phases and
// interpolates linearly between neighbouring phases.
//
// The filter is linear-phase and its group delay is compensated: output
// sample m is the signal at time m/to, exactly where input sample m·from/to
// was, so a tone keeps its phase. The price is latency: Process holds back
// Delay() worth of input until later input, or Flush, completes the filter
// window. After Flush the stream has round(n·to/from) output samples for n
// input samples in all.
//
// Process and Flush append to dst and never allocate when dst has room
// (see MaxOut). A Resampler is not safe for concurrent use; use one per
// stream.
type Resampler struct {
	from, to int
	l, m     int64 // to/g and from/g
	exact    bool
	phases   int // L when exact, approxPhases otherwise
	k        int // taps per phase
	coef     []float32
	centre   int64 // filter centre, in 1/phases input samples

	// Stream state.
	buf  []float32 // input history; buf[0] is input sample number base
	base int64
	nIn  int64 // input samples received
	nOut int64 // output samples produced
	// lastLoud is the number of the last non-zero input sample (before
	// the first input while there is none). An output whose window starts
	// after it sees only zeros, and its value is 0 whatever the filter:
	// every product is ±0, so is their sum, and ±0 rounds to 0. produce
	// writes those zeros without filtering (the trailing silence of a
	// caller's turn is much of the audio a voice test resamples).
	lastLoud int64
	// quiet enables that shortcut; NewResampler sets it, and tests clear
	// it to get the filtered output to compare with.
	quiet bool
	// Position of the next output sample: nOut·M = pi·L + pr (approximate
	// bank) or nOut·M + centre = pi·L + pr (exact bank).
	pi, pr int64
	mi, mr int64 // M / L and M % L

	// kern selects the kernel that runs the exact bank (see polyRun); all
	// kernels give bit-identical output.
	kern polyKernel
}

// NewResampler returns a Resampler from rate from to rate to. A rate ≤ 0 is
// ErrBadRate; a rate above 16777216 Hz, or a pair needing an enormous
// filter (over 4M coefficients, which only extreme ratios such as
// 1000003 → 1 Hz do), is ErrResampleRatio. from == to is allowed and still
// filters (at the common Nyquist frequency).
func NewResampler(from, to int) (*Resampler, error) {
	if from <= 0 || to <= 0 {
		return nil, fmt.Errorf("pcm: resampler %d Hz → %d Hz: %w", from, to, ErrBadRate)
	}
	if from > maxResampleRate || to > maxResampleRate {
		return nil, fmt.Errorf("%w: %d Hz → %d Hz: rates above %d Hz are not supported", ErrResampleRatio, from, to, maxResampleRate)
	}
	g := gcd(from, to)
	r := &Resampler{from: from, to: to, l: int64(to / g), m: int64(from / g)}
	r.exact = r.l <= maxExactPhases
	r.phases = approxPhases
	if r.exact {
		r.phases = int(r.l)
	}
	u := r.phases
	stop := float64(min(from, to)) / 2 // lower Nyquist frequency, Hz
	pass := resamplePass * stop
	upRate := float64(u) * float64(from) // rate the prototype runs at
	taps := kaiserTaps(resampleAtten, (stop-pass)/upRate)
	r.k = (taps + u - 1) / u
	r.k = (r.k + 15) &^ 15 // whole 16-tap blocks for the vector kernels
	total := r.k * u
	if int64(r.k)*int64(u+1) > maxCoefficients {
		return nil, fmt.Errorf("%w: %d Hz → %d Hz needs %d filter taps (limit %d); resample in two steps through an intermediate rate",
			ErrResampleRatio, from, to, int64(r.k)*int64(u+1), maxCoefficients)
	}
	n := total
	if n%2 == 0 {
		n-- // odd length: the centre falls on a whole tap
	}
	proto := newSincLowPass(n, (pass+stop)/2/upRate, resampleAtten)
	r.centre = int64(n-1) / 2
	// Phase p tap j (j = 0..k-1) multiplies input sample i-(k-1)+j, so it is
	// prototype tap p + (k-1-j)·u. The approximate bank has one extra phase
	// (p = u) to interpolate towards.
	nph := u
	if !r.exact {
		nph = u + 1
	}
	r.coef = make([]float32, nph*r.k)
	// The prototype is symmetric (tap t equals tap n-1-t, bit for bit), so
	// each value is computed once for both; taps n to k·u-1 stay 0.
	set := func(t int, v float32) { r.coef[t%u*r.k+r.k-1-t/u] = v }
	for t := 0; t <= (n-1)/2; t++ {
		v := float32(float64(u) * proto.at(t))
		set(t, v)
		set(n-1-t, v)
	}
	if !r.exact {
		// Phase u is phase 0 one tap later: tap j is prototype tap
		// (k-j)·u, which is phase 0's tap j-1 (and 0 for j = 0).
		copy(r.coef[u*r.k+1:], r.coef[:r.k-1])
	}
	r.mi, r.mr = r.m/r.l, r.m%r.l
	r.buf = make([]float32, 0, 2*r.k+resampleBlock+int(r.mi)+8)
	r.kern = bestKernel()
	r.quiet = true
	r.Reset()
	return r, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Reset clears the stream state, so the Resampler can start a new stream.
func (r *Resampler) Reset() {
	r.buf = r.buf[:r.k-1]
	clear(r.buf)
	r.base = -int64(r.k - 1)
	r.nIn, r.nOut = 0, 0
	r.lastLoud = r.base - 1
	if r.exact {
		r.pi, r.pr = r.centre/r.l, r.centre%r.l
	} else {
		r.pi, r.pr = 0, 0
	}
}

// From returns the input rate.
func (r *Resampler) From() int { return r.from }

// To returns the output rate.
func (r *Resampler) To() int { return r.to }

// Delay returns the resampler's latency: how much input Process holds back
// before the output that depends on it can be computed. It is about half the
// filter length; the output itself is time-aligned with the input.
func (r *Resampler) Delay() time.Duration {
	return time.Duration(float64(r.centre) / float64(r.phases) * float64(time.Second) / float64(r.from))
}

// Taps returns the number of filter taps applied per output sample.
func (r *Resampler) Taps() int { return r.k }

// target returns how many output samples n input samples make in all.
func (r *Resampler) target(n int64) int64 {
	return (2*n*r.l + r.m) / (2 * r.m)
}

// MaxOut returns how many samples Process with n more input samples and
// then Flush would append in all; Process alone appends at most that many.
// Size dst with it to avoid allocation.
func (r *Resampler) MaxOut(n int) int {
	return int(r.target(r.nIn+int64(n)) - r.nOut)
}

// Process filters src, appends every output sample it completes to dst and
// returns the extended slice. Output that needs input not yet seen waits for
// the next call or Flush.
func (r *Resampler) Process(dst, src []int16) []int16 {
	for len(src) > 0 {
		n := min(len(src), resampleBlock)
		widen(r.extend(n), src[:n])
		if i := lastNonZero(src[:n]); i >= 0 {
			r.lastLoud = r.nIn + int64(i)
		}
		src = src[n:]
		r.nIn += int64(n)
		dst = r.produce(dst, r.target(r.nIn))
	}
	return dst
}

// Flush completes the stream as if it were followed by silence, appends the
// remaining output samples to dst so that the stream's total is
// round(n·to/from), and resets the Resampler for a new stream.
func (r *Resampler) Flush(dst []int16) []int16 {
	want := r.target(r.nIn)
	for r.nOut < want {
		clear(r.extend(resampleBlock))
		dst = r.produce(dst, want)
	}
	r.Reset()
	return dst
}

// extend lengthens buf by n samples and returns them. Its capacity is
// sized at construction for the steady state, so this allocates only if a
// stream needs more history than planned.
func (r *Resampler) extend(n int) []float32 {
	off := len(r.buf)
	if cap(r.buf)-off < n {
		nb := make([]float32, off, 2*(off+n))
		copy(nb, r.buf)
		r.buf = nb
	}
	r.buf = r.buf[:off+n]
	return r.buf[off:]
}

// produce computes output samples until want are done or the input in buf
// runs out, then drops history no later output needs.
func (r *Resampler) produce(dst []int16, want int64) []int16 {
	k := int64(r.k)
	avail := r.base + int64(len(r.buf)) // one past the last input sample held
	if r.exact {
		if r.nOut < want && r.pi < avail {
			// Output j from here is at input pi_j = pi + ⌊(pr + j·M)/L⌋,
			// phase (pr + j·M) mod L; it can be computed while pi_j <
			// avail, that is for j·M < (avail-pi)·L - pr. Both products
			// are small: avail-pi is at most one block plus the
			// filter's history, and L ≤ maxExactPhases.
			d := (avail-r.pi)*r.l - r.pr
			n := min(want-r.nOut, (d+r.m-1)/r.m)
			// The first loud outputs are filtered, the rest are 0.
			loud := n
			if r.quiet {
				loud = r.loudOutputs(n)
			}
			o := len(dst)
			dst = slices.Grow(dst, int(n))[:o+int(n)]
			polyRun(r.kern, dst[o:o+int(loud)], r.coef, r.buf, int(r.pi-(k-1)-r.base), int(r.pr), r.k, int(r.l), int(r.mi), int(r.mr))
			clear(dst[o+int(loud):])
			t := r.pr + n*r.m
			r.pi += t / r.l
			r.pr = t % r.l
			r.nOut += n
		}
	} else {
		u := float64(r.phases)
		for r.nOut < want {
			pos := float64(r.pr)*u/float64(r.l) + float64(r.centre)
			whole := math.Floor(pos / u)
			frac := pos - whole*u
			q := int64(frac)
			a := float32(frac - float64(q))
			i := r.pi + int64(whole)
			if i >= avail {
				break
			}
			if start := i - (k - 1); r.quiet && start > r.lastLoud {
				dst = append(dst, 0) // only zeros in the window (see lastLoud)
			} else {
				x := r.buf[start-r.base : start-r.base+k]
				y0 := dot(r.coef[q*k:(q+1)*k], x)
				y1 := dot(r.coef[(q+1)*k:(q+2)*k], x)
				// float32(…) rounds the product first: no fused
				// multiply-add on any machine, so the output is the same
				// everywhere.
				dst = append(dst, round16(y0+float32(a*(y1-y0))))
			}
			r.nOut++
			r.pr += r.mr
			r.pi += r.mi
			if r.pr >= r.l {
				r.pr -= r.l
				r.pi++
			}
		}
	}
	// Keep history from the first sample the next output can need.
	drop := min(max(r.pi-(k-1)-r.base, 0), int64(len(r.buf)))
	if drop > 0 {
		n := copy(r.buf, r.buf[drop:])
		r.buf = r.buf[:n]
		r.base += drop
	}
	return dst
}

// loudOutputs returns how many of the next n outputs of the exact bank
// have a non-zero input sample in their window. Output j (from nOut on) is
// at input pi_j = pi + ⌊(pr + j·M)/L⌋ and its window starts at
// pi_j - (k-1), after lastLoud when pi_j ≥ lastLoud + k, that is when
// j·M ≥ (lastLoud+k-pi)·L - pr. Windows only move forward, so the loud
// outputs come first.
func (r *Resampler) loudOutputs(n int64) int64 {
	z := (r.lastLoud+int64(r.k)-r.pi)*r.l - r.pr
	return min(n, max(0, (z+r.m-1)/r.m))
}

// polyKernel names an implementation of the exact bank's inner loop.
type polyKernel uint8

// kernGo is polyRunGo, available on every architecture.
const kernGo polyKernel = 0

// polyRunGo is the portable kernel for the exact bank: it sets each dst[j]
// to output j, round16 of the inner product of filter row ph and the input
// window x[xo:xo+k], then steps to the next output (phase ph+mr, window
// xo+mi, carrying one sample when the phase wraps past l). Every other
// kernel must give exactly its results.
func polyRunGo(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int) {
	for j := range dst {
		dst[j] = round16(dotGo(coef[ph*k:(ph+1)*k], x[xo:xo+k]))
		ph += mr
		xo += mi
		if ph >= l {
			ph -= l
			xo++
		}
	}
}

// dotGo returns the inner product of h and x[:len(h)] in portable Go.
//
// It adds in exactly the order of the amd64 SSE kernel (sixteen lanes in
// four vectors, the same pairwise reduction, then a scalar tail), and rounds
// every product to float32 explicitly so that no compiler fuses it into a
// multiply-add. The result is therefore bit-identical on every
// architecture, which keeps resampled audio, and the cache keys made from
// its hash, the same on every machine.
func dotGo(h, x []float32) float32 {
	x = x[:len(h)]
	// aVL: vector V, lane L (tap 16b+4V+L). Sixteen scalars rather than
	// an array, so that the compiler keeps them in registers.
	var a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33 float32
	i := 0
	for ; i+16 <= len(h); i += 16 {
		hh := h[i : i+16 : i+16]
		xx := x[i : i+16 : i+16]
		a00 += float32(hh[0] * xx[0])
		a01 += float32(hh[1] * xx[1])
		a02 += float32(hh[2] * xx[2])
		a03 += float32(hh[3] * xx[3])
		a10 += float32(hh[4] * xx[4])
		a11 += float32(hh[5] * xx[5])
		a12 += float32(hh[6] * xx[6])
		a13 += float32(hh[7] * xx[7])
		a20 += float32(hh[8] * xx[8])
		a21 += float32(hh[9] * xx[9])
		a22 += float32(hh[10] * xx[10])
		a23 += float32(hh[11] * xx[11])
		a30 += float32(hh[12] * xx[12])
		a31 += float32(hh[13] * xx[13])
		a32 += float32(hh[14] * xx[14])
		a33 += float32(hh[15] * xx[15])
	}
	for ; i+4 <= len(h); i += 4 {
		hh := h[i : i+4 : i+4]
		xx := x[i : i+4 : i+4]
		a00 += float32(hh[0] * xx[0])
		a01 += float32(hh[1] * xx[1])
		a02 += float32(hh[2] * xx[2])
		a03 += float32(hh[3] * xx[3])
	}
	r0 := (a00 + a10) + (a20 + a30)
	r1 := (a01 + a11) + (a21 + a31)
	r2 := (a02 + a12) + (a22 + a32)
	r3 := (a03 + a13) + (a23 + a33)
	s := (r0 + r2) + (r1 + r3)
	for ; i < len(h); i++ {
		s += float32(h[i] * x[i])
	}
	return s
}

// lastNonZero returns the index of the last non-zero sample of s, or -1
// if s is all zeros.
func lastNonZero(s []int16) int {
	i := len(s)
	// Eight samples a time while they are all zero (silence is the case
	// that scans far), then one by one.
	for ; i >= 8; i -= 8 {
		q := s[i-8 : i : i]
		if q[0]|q[1]|q[2]|q[3]|q[4]|q[5]|q[6]|q[7] != 0 {
			break
		}
	}
	for i--; i >= 0; i-- {
		if s[i] != 0 {
			return i
		}
	}
	return -1
}

// widenGo sets dst[i] = float32(src[i]) for every i < len(src) (exact).
func widenGo(dst []float32, src []int16) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(v)
	}
}

// round16 rounds v to the nearest int16, saturating.
func round16(v float32) int16 {
	switch {
	case v >= 32767:
		return 32767
	case v <= -32768:
		return -32768
	case v >= 0:
		return int16(v + 0.5)
	default:
		return int16(v - 0.5)
	}
}
