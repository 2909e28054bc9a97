package voicetest

import (
	"strconv"
	"time"
)

// Attr is one metric as a test attribute: a stable key under the
// voicetest. prefix and its value as text.
type Attr struct {
	Key, Value string
}

// Attrs returns the scenario's metrics as test attributes, in a fixed
// order; Scenario publishes them with t.Attr (gotestsum writes them as
// JUnit properties). A metric is present only when it was measured (no
// latency attributes without a measured reply, no wire attributes for an
// adapter that reports none). Durations are whole milliseconds, rates
// and ratios decimals. The keys are stable:
//
//	voicetest.verdict, voicetest.turns              outcome and user turns
//	voicetest.latency_{mean,p50,p90,p95,p99,max}_ms response latency
//	voicetest.first_audio_ms                        start of the call to the agent's first audio
//	voicetest.ttfb_{p50,p95,max}_ms                 per turn: end of the user's speech to the first audio byte
//	voicetest.{stt,llm,tools,tts}_{p50,max}_ms      the parts the agent reported
//	voicetest.talk_over_count, voicetest.talk_over_ms
//	voicetest.user_talk_over_{count,ms}             the user spoke over the agent (barge-ins)
//	voicetest.agent_talk_over_{count,ms}            the agent spoke over the user
//	voicetest.agent_yielded_count, voicetest.user_yielded_count
//	voicetest.barge_in_quiet_max_ms                 barge-in to the agent going quiet, slowest
//	voicetest.barge_in_answer_max_ms                barge-in to the agent's next speech, slowest
//	voicetest.longest_pause_ms, voicetest.dead_air_ms
//	voicetest.unfilled_gap_count, voicetest.longest_unfilled_gap_ms
//	voicetest.agent_wpm, voicetest.agent_words_per_turn, voicetest.user_words_per_turn
//	voicetest.agent_wer, voicetest.agent_wer_words  (under Config.MeasureAgentWER)
//	voicetest.late_audio_count, voicetest.late_audio_ms
//	voicetest.gym_ttfab_{mean,p50}_ms               Gym's TTFAB: the reply's first event to its first audio (Metrics.Gym)
//	voicetest.gym_{user,agent}_turn_{mean,p50}_ms   Gym's turn durations
//	voicetest.gym_{user,agent}_words                Gym's word totals
//	voicetest.gym_{user,agent}_words_{mean,p50}     words per turn
//	voicetest.user_waits, voicetest.user_wait_ms    the caller's waits under Config.TurnTaking
//	voicetest.user_wait_limits                      turns in which it stopped waiting at the bound
//	voicetest.wire_frames_in, voicetest.wire_frames_out, voicetest.wire_bytes_in, voicetest.wire_bytes_out
//	voicetest.wire_marks_received, voicetest.wire_marks_echoed, voicetest.wire_mark_delay_max_ms,
//	voicetest.wire_marks_sent, voicetest.wire_clears, voicetest.wire_cancels, voicetest.wire_dropped_frames
//	voicetest.pass_rate                             under Repeat: the fraction of runs that passed (PassRate)
//	voicetest.criteria_{pass,fail,inconclusive}     criteria the judge answered (Passed, …), when a final verdict was asked
//
// Under Repeat, latency is over all runs and the rest is the reported
// run's.
func (res *Result) Attrs() []Attr {
	a := make(attrs, 0, 48)
	a.str("voicetest.verdict", string(res.Status))
	a.int("voicetest.turns", int64(res.Turns))
	l := res.Latency
	if len(l.PerTurn) > 0 {
		a.ms("voicetest.latency_mean_ms", l.Mean)
		a.ms("voicetest.latency_p50_ms", l.P50)
		a.ms("voicetest.latency_p90_ms", l.P90)
		a.ms("voicetest.latency_p95_ms", l.P95)
		a.ms("voicetest.latency_p99_ms", l.P99)
		a.ms("voicetest.latency_max_ms", l.Max)
	}
	m := res.Metrics
	if l.TTFB > 0 {
		a.ms("voicetest.first_audio_ms", l.TTFB)
	}
	if m.TTFB.N > 0 {
		a.ms("voicetest.ttfb_p50_ms", m.TTFB.P50)
		a.ms("voicetest.ttfb_p95_ms", m.TTFB.P95)
		a.ms("voicetest.ttfb_max_ms", m.TTFB.Max)
	}
	for _, p := range []struct {
		p50, max string
		p        Percentiles
	}{
		{"voicetest.stt_p50_ms", "voicetest.stt_max_ms", m.Parts.STT},
		{"voicetest.llm_p50_ms", "voicetest.llm_max_ms", m.Parts.LLM},
		{"voicetest.tools_p50_ms", "voicetest.tools_max_ms", m.Parts.Tools},
		{"voicetest.tts_p50_ms", "voicetest.tts_max_ms", m.Parts.TTS},
	} {
		if p.p.N > 0 {
			a.ms(p.p50, p.p.P50)
			a.ms(p.max, p.p.Max)
		}
	}
	if len(res.Transcript) > 0 {
		to := m.TalkOver
		a.int("voicetest.talk_over_count", int64(to.Count))
		a.ms("voicetest.talk_over_ms", to.Time)
		a.int("voicetest.user_talk_over_count", int64(to.ByUser.Count))
		a.ms("voicetest.user_talk_over_ms", to.ByUser.Time)
		a.int("voicetest.agent_talk_over_count", int64(to.ByAgent.Count))
		a.ms("voicetest.agent_talk_over_ms", to.ByAgent.Time)
		a.int("voicetest.agent_yielded_count", int64(to.AgentYielded))
		a.int("voicetest.user_yielded_count", int64(to.UserYielded))
		var quiet, answer time.Duration
		var quiets, answers int
		for _, b := range to.BargeIns {
			if b.Quiet {
				quiets++
				quiet = max(quiet, b.ToQuiet)
			}
			if b.Answered {
				answers++
				answer = max(answer, b.ToAnswer)
			}
		}
		if quiets > 0 {
			a.ms("voicetest.barge_in_quiet_max_ms", quiet)
		}
		if answers > 0 {
			a.ms("voicetest.barge_in_answer_max_ms", answer)
		}
		p := m.Pauses
		a.ms("voicetest.longest_pause_ms", p.Longest.Duration())
		a.ms("voicetest.dead_air_ms", p.DeadAir)
		a.int("voicetest.unfilled_gap_count", int64(p.Unfilled))
		a.ms("voicetest.longest_unfilled_gap_ms", p.LongestUnfilled)
	}
	sp := m.Speech
	if sp.AgentSpeech > 0 {
		a.float("voicetest.agent_wpm", sp.AgentWPM, 0)
	}
	if sp.AgentTurns > 0 {
		a.float("voicetest.agent_words_per_turn", sp.AgentWordsPerTurn, 1)
	}
	if sp.UserTurns > 0 {
		a.float("voicetest.user_words_per_turn", sp.UserWordsPerTurn, 1)
	}
	if w := sp.WER; w != nil {
		a.float("voicetest.agent_wer", w.Rate, 3)
		a.int("voicetest.agent_wer_words", int64(w.Errors.Words))
	}
	a.int("voicetest.late_audio_count", int64(m.LateAudio.Count))
	a.ms("voicetest.late_audio_ms", m.LateAudio.Gap)
	a.gym(m.Gym)
	if w := m.Waits; w.Count > 0 || w.GaveUp > 0 {
		a.int("voicetest.user_waits", int64(w.Count))
		a.ms("voicetest.user_wait_ms", w.Time)
		a.int("voicetest.user_wait_limits", int64(w.GaveUp))
	}
	if w := m.Wire; w != nil {
		a.int("voicetest.wire_frames_in", w.FramesIn)
		a.int("voicetest.wire_frames_out", w.FramesOut)
		a.int("voicetest.wire_bytes_in", w.BytesIn)
		a.int("voicetest.wire_bytes_out", w.BytesOut)
		a.int("voicetest.wire_marks_received", w.MarksReceived)
		a.int("voicetest.wire_marks_echoed", w.MarksEchoed)
		if w.MarkDelay.N > 0 {
			a.ms("voicetest.wire_mark_delay_max_ms", w.MarkDelay.Max)
		}
		a.int("voicetest.wire_marks_sent", w.MarksSent)
		a.int("voicetest.wire_clears", w.Clears)
		a.int("voicetest.wire_cancels", w.Cancels)
		a.int("voicetest.wire_dropped_frames", w.DroppedFrames)
	}
	if res.Runs != nil {
		a.str("voicetest.pass_rate", strconv.FormatFloat(res.PassRate, 'f', 2, 64))
	}
	if res.Verdict != nil {
		a.int("voicetest.criteria_pass", int64(len(res.Passed)))
		a.int("voicetest.criteria_fail", int64(len(res.Failed)))
		a.int("voicetest.criteria_inconclusive", int64(len(res.Inconclusive)))
	}
	return a
}

type attrs []Attr

func (a *attrs) str(k, v string)       { *a = append(*a, Attr{k, v}) }
func (a *attrs) int(k string, v int64) { a.str(k, strconv.FormatInt(v, 10)) }
func (a *attrs) ms(k string, d time.Duration) {
	a.int(k, d.Milliseconds())
}
func (a *attrs) float(k string, v float64, prec int) { a.str(k, strconv.FormatFloat(v, 'f', prec, 64)) }
