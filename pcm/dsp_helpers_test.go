package pcm

import (
	"math"
	"math/cmplx"
	"testing"
)

// tone returns n samples of amp·sin(2π·freq·t + phase) at rate.
func tone(rate int, freq, amp, phase float64, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)+phase)))
	}
	return out
}

// toneFit is the least-squares fit of a·sin(2π·f·t + φ) + dc to samples.
type toneFit struct {
	amp, phase float64
	snrDB      float64 // fitted tone power over residual power
}

// fitTone fits a tone of frequency freq to s[skip:len(s)-skip] (indexes
// keep their place in s, so the phase is relative to sample 0).
func fitTone(t testing.TB, s []int16, rate int, freq float64, skip int) toneFit {
	t.Helper()
	if len(s) <= 2*skip+8 {
		t.Fatalf("fitTone: %d samples, skip %d: too short", len(s), skip)
	}
	// Normal equations for the basis sin, cos, 1.
	var m [3][3]float64
	var v [3]float64
	basis := func(i int) [3]float64 {
		w := 2 * math.Pi * freq * float64(i) / float64(rate)
		return [3]float64{math.Sin(w), math.Cos(w), 1}
	}
	for i := skip; i < len(s)-skip; i++ {
		b := basis(i)
		for r := range 3 {
			for c := range 3 {
				m[r][c] += b[r] * b[c]
			}
			v[r] += b[r] * float64(s[i])
		}
	}
	x := solve3(m, v)
	var res, n float64
	for i := skip; i < len(s)-skip; i++ {
		b := basis(i)
		d := float64(s[i]) - (x[0]*b[0] + x[1]*b[1] + x[2]*b[2])
		res += d * d
		n++
	}
	amp := math.Hypot(x[0], x[1])
	// a·sin(w+φ) = a·cosφ·sin w + a·sinφ·cos w.
	phase := math.Atan2(x[1], x[0])
	return toneFit{amp: amp, phase: phase, snrDB: 10 * math.Log10((amp*amp/2)/(res/n))}
}

func solve3(m [3][3]float64, v [3]float64) [3]float64 {
	for c := range 3 {
		p := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		v[c], v[p] = v[p], v[c]
		for r := range 3 {
			if r == c {
				continue
			}
			f := m[r][c] / m[c][c]
			for k := range 3 {
				m[r][k] -= f * m[c][k]
			}
			v[r] -= f * v[c]
		}
	}
	return [3]float64{v[0] / m[0][0], v[1] / m[1][1], v[2] / m[2][2]}
}

// phaseDiff returns a−b wrapped to (−π, π].
func phaseDiff(a, b float64) float64 {
	d := math.Mod(a-b, 2*math.Pi)
	if d > math.Pi {
		d -= 2 * math.Pi
	}
	if d <= -math.Pi {
		d += 2 * math.Pi
	}
	return d
}

// rmsOf returns the RMS of s in sample units.
func rmsOf(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// fft is an in-place radix-2 FFT; len(x) must be a power of two.
func fft(x []complex128) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		w := cmplx.Exp(complex(0, -2*math.Pi/float64(size)))
		for start := 0; start < n; start += size {
			wk := complex(1, 0)
			for k := 0; k < size/2; k++ {
				a, b := x[start+k], x[start+k+size/2]*wk
				x[start+k], x[start+k+size/2] = a+b, a-b
				wk *= w
			}
		}
	}
}

// powerSpectrum returns the Welch estimate (Hann window, segments of n, half
// overlap) of s's power per FFT bin, bins 0..n/2.
func powerSpectrum(s []int16, n int) []float64 {
	out := make([]float64, n/2+1)
	win := make([]float64, n)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
	}
	buf := make([]complex128, n)
	segs := 0
	for start := 0; start+n <= len(s); start += n / 2 {
		for i := range buf {
			buf[i] = complex(float64(s[start+i])*win[i], 0)
		}
		fft(buf)
		for i := range out {
			a := cmplx.Abs(buf[i])
			out[i] += a * a
		}
		segs++
	}
	for i := range out {
		out[i] /= float64(segs)
	}
	return out
}

// bandPowerDB returns the mean power, in dB, of spectrum bins between lo
// and hi Hz for a spectrum of FFT size n at rate.
func bandPowerDB(spec []float64, n, rate int, lo, hi float64) float64 {
	var sum float64
	cnt := 0
	for i, p := range spec {
		f := float64(i) * float64(rate) / float64(n)
		if f >= lo && f < hi {
			sum += p
			cnt++
		}
	}
	return 10 * math.Log10(sum/float64(cnt))
}
