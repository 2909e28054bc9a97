// Package voicetest is a Go test framework for voice AI agents.
//
// A scenario lets a simulated caller talk to the agent under test, in process
// or over the protocol the agent already speaks; it records audio, transcript
// and a timeline, measures latency, asks judges for verdicts, and compares the
// transcript and timeline with golden files.
//
// This package defines the runner and the interfaces (Agent, Conn, User,
// Judge, TTS, STT, LLM); concrete implementations live in the adapters,
// personas, judges, speech and llm packages.
//
// # Scenarios
//
// A test calls Scenario with a Config: the Agent, a User (the caller), a
// Judge, and a Script of steps:
//
//	res := voicetest.Scenario(t, voicetest.Config{
//		Agent:     bot,
//		UserVoice: tts, // speaks the user's lines to an audio agent
//		Judge:     judge,
//		Script: []voicetest.Step{
//			voicetest.AgentTurn(), // the greeting
//			voicetest.UserSays("A table for two at seven, please."),
//			voicetest.AgentTurn(),
//			voicetest.Interrupt("Sorry, make it eight.", voicetest.AfterWords(3)),
//			voicetest.AgentTurn(),
//			voicetest.Check(func(st *voicetest.State) error {
//				return st.Expect().ContainsToolCall("book", map[string]any{"party": 2}).Err()
//			}),
//			voicetest.Verdict(),
//		},
//	})
//
// Without a Script the User and the agent take turns (Proceed) until the
// judge decides or Config.MaxTurns is reached. Run does the same outside
// of tests.
//
// # Time
//
// Agents that run in process and block only on channels and timers (they
// implement VirtualTimer, as the fixtures fakes do) run inside a
// testing/synctest bubble: waits cost no wall time and the timeline is the
// same on every run. Where no bubble can be made (Run in a plain program,
// a scenario in a testing.B), an agent that takes its time from
// Session.Clock (Capabilities.SessionClock, as handler.New's agents do) runs
// on the runner's virtual Clock instead, with the same timeline. Remote
// agents run on the real clock, with times taken where audio crosses the
// Conn. Every time in a Result is an offset from the start of the
// scenario.
//
// # Turns
//
// An agent turn ends at the adapter's AgentTurnEnd marker, or after
// Timeouts.TailSilence of quiet once the agent's audio has played, or at
// Timeouts.MaxTurnAudio of audio. Agent events that arrive after a turn has
// ended (late audio, a greeting spoken over the user) belong to the next
// AgentTurn; they never enter a user's segment. Latency is the time from
// the end of the user's speech to the first audio of the agent's next
// stretch of speech.
//
// The caller speaks at the agent's turn end unless Config.TurnTaking says
// otherwise: an idle time the agent must be quiet for (each new stretch of
// speech restarts it and joins the agent's turn) and a TurnClassifier that
// may answer "not yet, check again in N"; its waits are user_wait events,
// counted in Metrics.Waits and bounded per turn. What the agent shows
// rather than says (data payloads, tool calls) reaches the caller through
// Config.DataView (DefaultDataView: XML), read with State.Shown.
//
// # Conversation quality
//
// Every Result has Metrics: the conversation measured as a caller hears
// it, from the timeline (exact on virtual time): talk-over, each party's
// and who gave way, and the time from a barge-in to the agent going quiet
// and to its next answer; pauses, the longest, the dead air of each turn
// and the silences the agent left unfilled; latency per turn with its
// percentiles (Latency has p50, p90, p95, p99 and max), the time to the
// first audio byte and to the first event, and the parts the agent
// reports (AgentTimings: speech to text, model, tools, text to speech);
// the agent's words a minute and words a turn, and, under
// Config.MeasureAgentWER, the word error rate of its audio against its own
// transcript; late audio; and the adapter's wire statistics
// (WireStatsReporter); and, under their own names, LayerCode Gym's
// numbers (Metrics.Gym: its TTFAB from the reply's first event to its
// first audio, turn durations and words per turn, mean and median).
// State.Metrics gives them mid-conversation, for
// judges; Result.Attrs publishes them as test attributes.
//
// # Reports
//
// A failing scenario saves its artifacts (Result.Save): the audio of every
// segment and of the whole conversation, the manifest, the transcript and
// timeline, and report.html (Result.HTMLReport), one self-contained page
// with the waveforms, events, talk-over and pauses on one time axis,
// transcript, latencies, conversation quality, verdict and audio players. A
// package whose TestMain calls Main gets a suite summary (scenarios, pass
// rate, latency percentiles, talk-over, pauses, speaking rate) after its
// tests under go test -v or -voicetest.summary.
package voicetest
