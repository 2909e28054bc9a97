// Package examples holds realistic voice agents and the voicetest suites that
// test them, with committed goldens and cache so that
// go test ./examples/... replays offline with no API key.
package examples
