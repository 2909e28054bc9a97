// Package tour is the code of the README's five-minute tour: an agent
// written as a Go handler and the voicetest scenarios that test it. Its
// tests run as part of go test ./examples/..., so the tour stays true.
package tour
