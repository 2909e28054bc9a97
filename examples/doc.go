// Package examples holds realistic voice agents and the voicetest suites that
// test them, with committed goldens and cache so that
// go test ./examples/... replays offline with no API key.
//
// examples/restaurant is a table-booking agent served over Twilio Media
// Streams with its own speech stack, and the same dialogue in process
// through handler.New; its README (examples/README.md) says what each
// test shows and how the cache was recorded.
package examples
