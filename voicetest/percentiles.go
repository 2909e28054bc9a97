package voicetest

import (
	"math"
	"slices"
	"time"
)

// Percentiles summarises a set of durations: how many, their mean, the
// median, the 90th, 95th and 99th percentiles and the largest. A
// percentile p other than the median is sorted[min(n-1, ceil(p·(n-1)))],
// so for fewer than 11 values p90 is the largest, as for p95 below 21 and
// p99 below 101; the median of an even count is the mean of the two
// middle values. The zero value (N == 0) means nothing was measured.
type Percentiles struct {
	N    int           `json:"n"`
	Mean time.Duration `json:"mean"`
	P50  time.Duration `json:"p50"`
	P90  time.Duration `json:"p90"`
	P95  time.Duration `json:"p95"`
	P99  time.Duration `json:"p99"`
	Max  time.Duration `json:"max"`
}

// SummarizeDurations returns the Percentiles of ds (which it does not
// modify).
func SummarizeDurations(ds []time.Duration) Percentiles {
	n := len(ds)
	if n == 0 {
		return Percentiles{}
	}
	// A copy to sort: on the stack for the few durations of a scenario.
	var buf [32]time.Duration
	s := append(buf[:0], ds...)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	p := Percentiles{N: n, Mean: sum / time.Duration(n), Max: s[n-1],
		P90: rank(s, 0.90), P95: rank(s, 0.95), P99: rank(s, 0.99)}
	if n%2 == 1 {
		p.P50 = s[n/2]
	} else {
		p.P50 = (s[n/2-1] + s[n/2]) / 2
	}
	return p
}

// At returns the percentile p (50, 90, 95, 99 or 100 for the largest) and
// true, or false for another p.
func (p Percentiles) At(pct float64) (time.Duration, bool) {
	switch pct {
	case 50:
		return p.P50, true
	case 90:
		return p.P90, true
	case 95:
		return p.P95, true
	case 99:
		return p.P99, true
	case 100:
		return p.Max, true
	}
	return 0, false
}

// rank returns sorted[min(n-1, ceil(q·(n-1)))].
func rank(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	return sorted[min(n-1, int(math.Ceil(q*float64(n-1))))]
}
