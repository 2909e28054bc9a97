// Package examples holds realistic voice agents and the voicetest suites that
// test them, with committed goldens and cache so that
// go test ./examples/... replays offline with no API key.
//
// examples/clinic is a dental practice's booking agent that says "one
// moment", looks the calendar up in the background and shows the free
// times on the caller's screen; its LLM caller waits through the lookup
// (voicetest.Config.TurnTaking) and answers from the screen
// (voicetest.Config.DataView), replayed from a committed cache.
//
// examples/restaurant is a table-booking agent served over Twilio Media
// Streams with its own speech stack, and the same dialogue in process
// through handler.New; its README (examples/README.md) says what each
// test shows and how the cache was recorded.
package examples
