// Package personas provides simulated callers for voicetest scenarios:
// scripted lines, recorded audio files, LLM-played personas with a library of
// ready caller profiles, and red-team attackers. Each is a voicetest.User.
//
// # Scripted and recorded callers
//
// Scripted(lines...) says its lines in order, one per user turn, then reports
// Done (the conversation ends as if the user hung up). Files(paths...) plays
// audio files the same way: WAV directly, other formats (MP3, OGG, FLAC, …)
// decoded by ffmpeg when it is installed (pcm.ReadAudioFile), with an error
// naming the Debian package (ffmpeg) when it is not. Both take a
// persona's sound with As (its effects; its voice once Engine names the TTS
// engine).
//
// # LLM callers
//
// LLM(persona, goal) is a caller played by a model. The model is told it is
// the caller and sees the conversation with the roles reversed: the agent's
// turns are user messages, its own past lines assistant messages (models are
// trained to speak as the assistant; this keeps them from drifting into
// helping). The agent's tool calls, tool results and data payloads, where the
// adapter exposes them, appear among the agent's turns as bracketed lines
// (RenderPayload; Payloads changes or hides them), or, when the scenario
// sets voicetest.Config.DataView (such as voicetest.XMLView("screen")),
// as that view shows them, with a line in the system prompt telling the
// model it can see them on its screen. Each turn the model calls one of
// three tools:
//
//   - say(text): the next line, short and spoken;
//   - wait(seconds, reason): stay silent while the agent works ("one
//     moment"), the seconds clamped to [1 s, MaxWait]; after MaxWaits waits
//     in a row the wait tool is withdrawn, so the caller must speak or hang up;
//   - hang_up(text, reason): say goodbye and end the call.
//
// Under voicetest.Config.TurnTaking a wait is the caller's "not yet": the
// runner records it as a user_wait event (with the model's reason),
// records what the agent says meanwhile, and asks the model again.
//
// An unusable answer (empty, no decision, a withdrawn tool) is asked for
// again once with a reminder; a second one fails the turn with
// ErrEmptyAnswer instead of ending the run silently. Requests use
// temperature 0 and a seed.
//
// # Where the model comes from, and caching
//
// In a test, give a persona its model in one line:
//
//	user := personas.LLM(personas.Rushed, "Book a table for two tonight, fast.").With(llm.ForTest(t))
//
// llm.ForTest caches every completion under the test package's
// testdata/voicetest/cache: go test replays it offline with no key, and a
// miss names the test and the command that records it. A persona built
// without With (as in a table of cases declared outside any test) builds its
// client on first use from the environment with llm.New (OPENAI_BASE_URL,
// OPENAI_API_KEY, VOICETEST_LLM_MODEL); under go test that client uses the
// same cache directory and mode (-voicetest.cache, VOICETEST_CACHE). So both
//
//	{"rushed", personas.LLM(personas.Rushed, "Book a table for two tonight, fast.")}
//
// and the With form replay the same committed entries. Everything a request
// holds comes from the conversation's text, the persona, the goal and the
// seed, so a replayed run asks the same questions and gets the same answers.
//
// Recording inside voicetest.Scenario with an in-process agent (a synctest
// bubble): llm clients keep no idle connection inside a bubble by default
// (they keep connections alive only outside one), so they work there. An
// HTTP client of your own (llm.WithHTTPClient) must do the same (an
// http.Transport with DisableKeepAlives), or the goroutines of its idle
// connections keep the bubble from ever advancing its clock. Replaying needs
// no network and is unaffected.
//
// Scripted, Files and LLM users may serve several conversations at once
// (parallel subtests) and one after another (Config.Repeat): they keep their
// per-conversation memory (the next line, the waits) apart, keyed by the
// conversation's State.
//
// # When the caller speaks
//
// voicetest.Config.TurnTaking makes any caller wait until the agent has
// been quiet for a while, and takes a Classifier that may say "not yet,
// check again in N": HoldOn(wait) is a rule (the agent's last words ask the
// caller to hold: "one moment", "let me check", …), LLMTurns(model) a
// model that calls a take_turn tool through the cache.
//
// # The persona library
//
// A Persona carries a description and speaking style for the model, a voice
// per TTS engine (Voice; Engine picks the engine's name for it, since voice
// names are not portable), a speaking Speed, audio Effects (pcm effects with
// fixed seeds, so deterministic) and an Interruption profile. The ready
// values are Patient, Rushed, Confused, Elderly (slow, telephone band),
// NonNative (an espeak voice of another language for an accent), NoisyStreet
// (crowd babble from an embedded recording of four flite voices at 12 dB SNR
// plus brown-noise traffic at 18 dB), BadPhoneLine (telephone band, 6%
// packet loss, line hiss, clipping) and Interrupter (barges in on half of
// the agent's turns, 0.5–2 s into them). Library lists them.
//
// The runner acts on both: a persona's Speed reaches the TTS through
// Utterance.Speed, and an LLM persona's interruption settings make Proceed
// barge in (LLMUser implements voicetest.Interrupter: a repeatable per-turn
// decision of whether, and after how long, to interrupt the agent).
//
// # Red team
//
// RedTeam(target, strategy) is an adversarial caller. Crescendo escalates by
// phases over the turn budget (rapport, probing, escalation, direct); each
// turn a technique from the catalogue (Techniques: role-play, hypotheticals,
// authority claims, emotional pressure, piecemeal extraction, spelled and
// encoded answers, false prior context, instruction override) is suggested
// by a random source seeded from Seed. The attacker model keeps a private
// history (the agent's replies as user messages with [SCORE] and [HINT]
// notes, its own attacks as assistant messages); the target never sees it.
// Every reply is scored 0–10: flat refusals by a fast pattern (IsHardRefusal),
// the rest by an LLM scorer through a forced tool call, failing closed when
// the scorer gives no score. After a flat refusal the attacker backtracks, at
// most MaxBacktracks times: the refused attack leaves its history with a
// [BACKTRACKED] note and the refused technique is not suggested next. (A
// voice agent's own memory cannot be rolled back, so the agent still
// remembers it.) Once ConfirmTurns replies in a row score at least
// SuccessScore, or the budget is spent, it hangs up; Outcome reports the
// attempts, scores and verdict for a judge or a report.
//
// A RedTeamUser is single-use: a second conversation fails with
// ErrSingleUse, since its history and scores belong to the first. Build one
// per run (its builder methods return fresh copies).
package personas
