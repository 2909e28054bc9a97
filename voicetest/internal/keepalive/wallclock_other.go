//go:build !unix

package keepalive

import "time"

// wallClock returns time.Now: on this system the time of day is not read
// past a testing/synctest bubble's virtual clock, so TLS inside a bubble
// checks certificates against the year 2000.
func wallClock() time.Time { return time.Now() }
