package voicetest

// TakesEventsDirectly reports whether the runner takes c's events on its
// own goroutine (c is a queuedConn) rather than through a receive
// goroutine: for tests in package voicetest_test that hold a Conn of
// another package of this module.
func TakesEventsDirectly(c Conn) bool {
	_, ok := c.(queuedConn)
	return ok
}
