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
// implement them.
package inproc

// Token is the type of the parameter that keeps the methods that take it
// to this module.
type Token struct{}
