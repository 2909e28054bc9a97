// Package judges provides verdicts for voicetest scenarios: an LLM criteria
// judge, a per-message intent judge, and deterministic checks (text, regex,
// tool calls, turn counts, hang-up, latency budgets, interruption and
// silence handling) that need no LLM. Every judge implements
// voicetest.Judge, so any of them, or a combination, goes in
// voicetest.Config.Judge.
//
// # LLM criteria judge
//
// In a test the common case is one line:
//
//	Judge: judges.ForTest(t, "The agent confirms party size and time before ending"),
//
// ForTest is Criteria(criteria...).WithLLM(llm.ForTest(t)): the model is
// called through the test package's record/replay cache
// (testdata/voicetest/cache), so a verdict is recorded once (with
// OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server,
// and VOICETEST_LLM_MODEL) and replayed offline afterwards: the same
// conversation, criteria and model make the same request and get the same
// cached verdict. Outside tests, build an *llm.Client with a cache and pass
// it to WithLLM.
//
// The judge forces a call of the function record_verdict, whose schema
// asks for one entry per criterion (by number) with pass, fail or
// inconclusive and a reasoning, plus a decision: "final" or, while the
// conversation goes on, "continue". The answer is validated (every
// criterion answered once, no unknown ids, valid statuses, no "continue"
// when a decision is due) and an invalid answer is sent back to the model
// once with what was wrong. Requests use temperature 0 and a fixed seed.
// The prompt holds the declared criteria and, as context for them, the
// scenario's description (Config.Description; WithoutDescription leaves
// it out), says that the agent's words come from speech-to-text and
// may contain mis-hearings and homophones, and shows the conversation with
// turn numbers and roles, "(audio only)" for untranscribed agent speech,
// and tool calls, tool results, key presses, silences and hang-ups as
// lines of text. Times are left out, so a remote agent's varying timings
// do not change the request.
//
// A judge that must judge timing or sound gets more on request:
// WithTimeline adds the timeline rendered for a model (RenderTimeline:
// who spoke when, silences and who was to speak, talk-overs and who gave
// way, barge-ins, latencies, tool calls and results, and a summary), so
// criteria such as "the agent let the caller finish" can be judged;
// WithAudio sends the whole call's audio, and WithTurnAudio chosen turns,
// as input audio to an audio-capable model (OpenAI's input_audio parts),
// for criteria about how the call sounded. Both requests are cached like
// any other: the audio counts in the key by its digest
// (cache.AudioDigest), so the same audio replays the same verdict. The transcript is bounded
// (WithMaxTranscript): a longer one keeps its start and its latest lines
// with a marker line "[… N lines cut (turns A–B) …]" between.
//
// Asked during a Proceed run the judge is continuous by default: it may
// answer "continue", and it ends the run early as soon as a criterion is
// clearly failed (or all are decided). An inconclusive criterion never
// ends a run early. FinalOnly skips the model until a decision is due. A
// Verdict step, a Checkpoint and the last allowed turn (Turn >= MaxTurns)
// always get a decision, and a criterion the transcript cannot settle is
// reported inconclusive, distinct from fail (voicetest reports such a
// scenario with status inconclusive).
//
// # Intent judge
//
// Intent(l, intent) asks an LLM whether one agent message carries an
// intent. It works in Check steps (judging the agent's last message), in
// ordered expectations through voicetest's MessageMatcher, and directly:
//
//	offers := judges.Intent(llm.ForTest(t), "offers to book a table")
//	voicetest.Check(offers.Check)
//	st.Expect().NextEvent().IsMessageMatching(ctx, voicetest.RoleAgent, offers).Err()
//	res, err := offers.Judge(ctx, "We can seat you at seven.")
//
// # Deterministic judges
//
// Says, SaysRegexp, NeverSays, NeverSaysRegexp, ToolCalled, ToolNotCalled,
// Turns, HungUp, LatencyP95Under, EachTurnUnder, InterruptionHandled and
// SilenceHandled return a *Rule, which reads the State the runner records
// (transcript, timeline, tool calls, latencies) and needs no LLM and no
// network. So do the judges over the conversation-quality metrics
// (voicetest.Metrics): MaxTalkOver and MaxAgentTalkOver (speech over
// speech), MaxPause (dead air), MaxUnfilledGap (the caller left waiting),
// LatencyUnder(p, d) (any percentile of the response latency, or the
// slowest), SpeakingRate(min, max) (words a minute) and MaxWER (the
// agent's audio against its own transcript, under
// Config.MeasureAgentWER). Each reports a readable criterion and reasoning that cites the
// evidence (turn, text, milliseconds). Text matching is normalised (case,
// punctuation, spacing, number words versus digits). A rule ends a running
// conversation early only when its outcome can no longer change; a final
// verdict or a Checkpoint always decides. Rule.Check fits a Check step.
//
// All and Any compose judges of any kind:
//
//	Judge: judges.All(
//		judges.ForTest(t, "The agent confirms the time"),
//		judges.NeverSays("as an AI"),
//		judges.ToolCalled("book", map[string]any{"party": 2}),
//		judges.Any(judges.Says("goodbye"), judges.HungUp()),
//		judges.EachTurnUnder(1500*time.Millisecond),
//	),
//
// # Reporting
//
// voicetest.Scenario reports every verdict for CI: one t.Log line per
// passing criterion with its evidence, failed and inconclusive criteria at
// the top of the failure's t.Error, and the attributes voicetest.verdict,
// voicetest.criteria_pass, voicetest.criteria_fail and
// voicetest.criteria_inconclusive, which gotestsum writes as JUnit
// properties. The reasoning of every judge here cites its evidence (turn,
// text, milliseconds) so those lines are worth reading.
package judges
