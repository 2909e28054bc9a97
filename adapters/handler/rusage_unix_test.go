//go:build unix

package handler_test

import (
	"syscall"
	"testing"
	"time"
)

// rusage is the process's CPU time and voluntary context switches so far.
type rusage struct {
	cpu   time.Duration
	nvcsw int64
}

func getRusage() rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return rusage{}
	}
	return rusage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nvcsw: int64(ru.Nvcsw)}
}

// reportRusage reports, per op, the CPU time the process used and the
// times one of its threads went to sleep (voluntary context switches: a
// hand-off between goroutines that found no running thread to take it)
// since from. On a shared, loaded machine these vary less than wall time.
func reportRusage(b *testing.B, from rusage) {
	to := getRusage()
	n := float64(b.N)
	b.ReportMetric(float64((to.cpu-from.cpu).Microseconds())/n, "cpu-µs/op")
	b.ReportMetric(float64(to.nvcsw-from.nvcsw)/n, "vcsw/op")
}
