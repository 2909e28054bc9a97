//go:build linux

package pcm

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used. Benchmarks
// lock their goroutine to its thread and report work per CPU-second too,
// a figure that, unlike wall time, holds on a busy shared machine.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
