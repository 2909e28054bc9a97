//go:build unix

package keepalive

import (
	"syscall"
	"time"
)

// wallClock returns the system's time of day, also inside a
// testing/synctest bubble, where time.Now reads the bubble's virtual
// clock (which starts in 2000): TLS checks certificates against it.
func wallClock() time.Time {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return time.Now()
	}
	return time.Unix(tv.Unix())
}
