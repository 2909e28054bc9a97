// Package restaurant is a table-booking voice agent, "Bella Vista", and
// the voicetest suite that tests it: deployed as a Twilio Media Streams
// server with its own speech stack (Server), and the same dialogue in
// process through adapters/handler (Agent). Its tests call it over the
// phone line, in process, through a cassette and with an LLM caller; the
// README beside it (examples/README.md) says what each test shows.
package restaurant
