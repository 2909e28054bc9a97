// Package inproc lets the runner (package voicetest) and an in-process
// adapter of this module meet without the goroutine hand-offs that a
// Conn's blocking Recv costs.
//
// A method that takes a Token can be called, and implemented so that an
// interface of package voicetest matches it, only by packages of this
// module: Go lets no other module import an internal package. The runner
// calls such methods on its own goroutine, without the bound it puts
// around every call into code it does not control (voicetest/callee.go),
// so only code of this module, whose methods are known not to block, may
// implement them. (The handler adapter's Resume and StartClose run its
// handler's coroutine on the runner's goroutine: they bound it themselves,
// handing a handler that blocks to a goroutine of its own within a few
// milliseconds of real time.)
package inproc

import "time"

// Token is the type of the parameter that keeps the methods that take it
// to this module.
type Token struct{}

// Timer is a timer of the runner's Clock that an in-process agent of this
// module arms again and again (the handler agent's wake-up), instead of a
// Clock.AfterFunc, and its stop function, for each wait.
type Timer interface {
	// Reset arms the timer to call its function once the clock has
	// reached Now()+d, as a new AfterFunc would (at the same instant, it
	// fires after the timers armed before it), cancelling the call it
	// was armed for, if that is still to come.
	Reset(d time.Duration)
	// Stop cancels the call the timer is armed for and reports whether
	// it did (false: it has fired, or was not armed).
	Stop() bool
}

// PassSignal moves a signal pending on from, if there is one, to to
// without blocking (to has room for one signal, or already holds one):
// what a Conn's Notify does when it starts signalling the runner's
// channel instead of its own, so that a signal already given is not lost.
func PassSignal(from <-chan struct{}, to chan<- struct{}) {
	select {
	case <-from:
		select {
		case to <- struct{}{}:
		default:
		}
	default:
	}
}
