// Package cassette records the conversations of an agent under test once
// and replays them offline, the way httprr and go-vcr do for HTTP: a suite
// against a deployed agent (over Twilio, OpenAI Realtime, Gemini Live,
// ElevenLabs, LayerCode, Pipecat, Vapi, LiveKit, WebRTC, a phone number or
// a plain WebSocket) runs in CI with no agent running and no key.
//
// A cassette is opt-in per test: wrap the agent.
//
//	res := voicetest.Scenario(t, voicetest.Config{
//		Agent:     cassette.New(t, twilio.New(os.Getenv("AGENT_URL"))),
//		UserVoice: tts,
//		AgentSTT:  stt,
//		Script:    script,
//	})
//
// An agent that runs beside its tests needs none: leave it unwrapped and
// the suite keeps talking to it live. In-process agents (adapters/handler)
// never need one.
//
// # One mechanism for every adapter
//
// A cassette records at the voicetest.Conn boundary, not on the wire: what
// the caller sent (its audio as a digest, its text, DTMF, interrupts and
// ends of utterance, and what each call returned), the adapter's
// Capabilities, and every result of Recv (the AgentEvents, with their audio,
// transcripts, tool calls and results, data, turn ends, interruptions and
// hang-up, and the errors), each timed from the caller's call it followed.
// So one mechanism serves every adapter, present and future, and a replay
// dials nothing: there is no handshake, authorisation call or signed URL
// to fake, and none of them, nor any header or key, ever reaches the
// cassette. What a replay does not exercise is the adapter's own encoding
// and decoding of the wire, which the adapters' tests cover against their
// protocol doubles; a wire capture (Config.Capture) is written only while
// recording.
//
// # Modes
//
// A cassette follows the cache's mode (voicetest/cache), chosen by the
// same flags and variables: -voicetest.cache=MODE or -voicetest.record,
// VOICETEST_CACHE=MODE or VOICETEST_RECORD=1, else record, or replay when
// CI is set. So a developer records locally and CI replays:
//
//   - replay: serve every conversation from the cassette; the agent is
//     never dialled; a missing cassette is a *MissError with the command
//     that records it;
//   - record: replay the cassette if it exists, else talk to the agent and
//     write the cassette when the test ends, if the test passed;
//   - refresh: talk to the agent and write the cassette again;
//   - off: talk to the agent, read and write nothing.
//
// cmd/voicetest-update records missing cassettes with the cache, reports
// them among the files it changed, and prunes the cassettes (and stale
// audio bodies) no test used; its -check fails on an unused cassette.
//
// # Files
//
// A test's cassette is a directory under its package's
// testdata/voicetest/cassettes/, named after the test as its golden files
// are (a subtest is a subdirectory): a readable index, cassette.json, and
// one WAV body per caller turn with the agent's audio of that turn,
// c<conversation>-t<turn>.<hash>.wav. The index lists, per Connect, the
// adapter's capabilities and the caller's turns (turn 0 is the connection;
// an "audio" turn is consecutive SendAudio calls, with their frame count,
// length and SHA-256), each followed by the agent's events on one line
// each: when (after_ms, from the start of the call or of the frame it
// followed), what kind, and its text, tool call, data or number of audio
// samples. Commit the directory with the test. Every file is written
// atomically (a temporary file renamed into place) and re-recording
// removes the bodies the new index does not name.
//
// Texts are scrubbed before they are written, with the Scrubber of
// voicetest/scrub that the cache and the adapters use too: the values of
// environment variables named like credentials (scrub.EnvName), URL
// passwords, credentials after "Bearer" or "Basic" and in parameters
// (?api_key=…), JSON members named like credentials, and then whatever
// WithScrub removes. The live run of a recording sees the agent's events unscrubbed;
// the replay sees what the cassette holds.
//
// # Replay
//
// A replay matches the caller's calls, in order, with the recorded ones:
// text, DTMF digits and kinds exactly, audio frame by frame (its length)
// and, at the end of each audio turn, by the SHA-256 of its samples, the
// canonical audio the runner sent. The agent's events come at their
// recorded times after the call or frame they followed, never before it:
// so the transcript, the tool calls, the interruptions, the hang-up and the
// verdict come out as recorded, and the timeline within the tolerance of a
// remote agent's golden files (voicetest.GoldenOptions). A call the
// cassette does not hold is a *DivergenceError, returned to the call and
// to Recv, that names the caller's turn, what was recorded, what was sent,
// and the command that records the cassette again. Once the recorded agent
// has hung up or closed the line, a further call fails as on a closed line,
// as it did live. A script that stops before the recording did passes
// (what ran matched), and the log says how many caller turns were left.
//
// A replay blocks only on channels and timers, so New's Agent reports
// VirtualTime when it replays and voicetest.Scenario runs the conversation
// in a testing/synctest bubble: a minute of phone call replays in
// milliseconds, and every replay gives the same timeline. Because the
// recording was made on the real clock, Scenario still compares its golden
// files within tolerance (voicetest.Replayer).
//
// With Config.AgentSTT, the agent's replayed audio is transcribed as it was
// while recording, from the same canonical audio, so the cache answers it
// too: a committed cache and cassette replay the whole scenario offline.
//
// A Conn's protocol extensions (realtime.Conn's SendEvent, say) are not
// recorded: use them unwrapped. Side effects of the test's own callbacks
// in an adapter (a Realtime OnToolCall handler) do not happen in a replay;
// their results do, as the recorded events.
package cassette
