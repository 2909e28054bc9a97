package judges

import (
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Deterministic judges over the conversation-quality metrics
// (voicetest.Metrics, computed from the State the runner records), so
// that a suite can gate on how the call sounded without an LLM. Each
// cites its evidence: the turns, offsets and milliseconds.

// MaxTalkOver passes when the two parties spoke at once for at most d in
// all, whoever started (Metrics.TalkOver.Time). It fails, and ends a
// running conversation, as soon as the total is over d.
func MaxTalkOver(d time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent and the caller talk over each other for at most %s in all", ms(d)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if d < 0 {
			return outcome{}, fmt.Errorf("MaxTalkOver(%v): the limit must not be negative", d)
		}
		to := st.Metrics().TalkOver
		why := talkOverText(to.Spans, "")
		if to.Time > d {
			return fail("%s, over %s", why, ms(d)), nil
		}
		return pass(final, "%s", why), nil
	}}
}

// MaxAgentTalkOver passes when the agent started speaking over the caller
// for at most d in all (Metrics.TalkOver.ByAgent): an agent that answers
// before the caller has finished, or talks through them. The caller's
// barge-ins do not count. It fails as soon as the total is over d.
func MaxAgentTalkOver(d time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent talks over the caller for at most %s in all", ms(d)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if d < 0 {
			return outcome{}, fmt.Errorf("MaxAgentTalkOver(%v): the limit must not be negative", d)
		}
		to := st.Metrics().TalkOver
		why := talkOverText(to.Spans, voicetest.RoleAgent)
		if to.ByAgent.Time > d {
			return fail("%s, over %s", why, ms(d)), nil
		}
		return pass(final, "%s", why), nil
	}}
}

// talkOverText describes the talk-overs (those started by by, or all).
func talkOverText(spans []voicetest.TalkOver, by voicetest.Role) string {
	var parts []string
	var total time.Duration
	for _, s := range spans {
		if by != "" && s.By != by {
			continue
		}
		total += s.Duration()
		who := "both at once"
		if s.By != "" {
			who = "by the " + string(s.By)
		}
		gave := ""
		if s.Yielded != "" {
			gave = ", the " + string(s.Yielded) + " gave way"
		}
		parts = append(parts, fmt.Sprintf("turn %d at %s: %s %s%s", s.Turn, ms(s.Start), ms(s.Duration()), who, gave))
	}
	if len(parts) == 0 {
		return "no talk-over"
	}
	return fmt.Sprintf("%s of talk-over (%s)", ms(total), strings.Join(limitList(parts, 5), "; "))
}

// MaxPause passes when no silence between speech lasted longer than d
// (Metrics.Pauses.Longest: dead air, whoever was to speak). It fails as
// soon as one does.
func MaxPause(d time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("no pause in the conversation lasts more than %s", ms(d)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if d <= 0 {
			return outcome{}, fmt.Errorf("MaxPause(%v): the limit must be positive", d)
		}
		p := st.Metrics().Pauses
		if len(p.Spans) == 0 {
			return pass(final, "no pause between speech"), nil
		}
		why := fmt.Sprintf("longest pause %s at %s in turn %d, after the %s (%d pauses, %s of dead air)",
			ms(p.Longest.Duration()), ms(p.Longest.Start), p.Longest.Turn, p.Longest.After, len(p.Spans), ms(p.DeadAir))
		if p.Longest.Duration() > d {
			return fail("%s, over %s", why, ms(d)), nil
		}
		return pass(final, "%s", why), nil
	}}
}

// MaxUnfilledGap passes when the agent never left the caller waiting for
// more than d: no silence after the caller's words that the agent did not
// end by speaking (the caller spoke again, or the call ended) lasted
// longer (Pause.Unfilled). It fails as soon as one does.
func MaxUnfilledGap(d time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent never leaves the caller waiting unanswered for more than %s", ms(d)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if d <= 0 {
			return outcome{}, fmt.Errorf("MaxUnfilledGap(%v): the limit must be positive", d)
		}
		var bad, all []string
		for _, p := range st.Metrics().Pauses.Spans {
			if !p.Unfilled() {
				continue
			}
			s := fmt.Sprintf("turn %d: %s of silence from %s", p.Turn, ms(p.Duration()), ms(p.Start))
			all = append(all, s)
			if p.Duration() > d {
				bad = append(bad, s)
			}
		}
		switch {
		case len(bad) > 0:
			return fail("the agent left the caller unanswered: %s (limit %s)", strings.Join(limitList(bad, 5), "; "), ms(d)), nil
		case len(all) > 0:
			return pass(final, "unanswered silences within the limit: %s", strings.Join(limitList(all, 5), "; ")), nil
		}
		return pass(final, "the agent answered every time the caller stopped"), nil
	}}
}

// LatencyUnder passes when the p-th percentile of the agent's response
// latency is at most d: p is 50, 90, 95, 99, or 100 for the slowest
// reply, and the percentile is voicetest's (see voicetest.Percentiles).
// Latency is the runner's: end of the user's speech to the agent's first
// speech. Over the budget in the middle of a conversation it waits (later
// replies may bring the percentile down), except for p 100, which can
// only grow and so fails at once. With no measured reply the result is
// inconclusive.
func LatencyUnder(p float64, d time.Duration) *Rule {
	name := fmt.Sprintf("p%g", p)
	if p == 100 {
		name = "the slowest"
	}
	return &Rule{criterion: fmt.Sprintf("%s agent response latency is at most %s", name, ms(d)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if d <= 0 {
			return outcome{}, fmt.Errorf("LatencyUnder(%g, %v): the budget must be positive", p, d)
		}
		m := st.Metrics()
		got, ok := m.Latency.At(p)
		if !ok {
			return outcome{}, fmt.Errorf("LatencyUnder(%g, %v): the percentile must be 50, 90, 95, 99 or 100 (the slowest reply)", p, d)
		}
		if m.Latency.N == 0 {
			if final {
				return inconclusive("no agent reply to user speech was measured"), nil
			}
			return pending("no agent reply to user speech measured yet"), nil
		}
		why := fmt.Sprintf("%s %s over %d replies (p50 %s, max %s in turn %d)", name, ms(got), m.Latency.N, ms(m.Latency.P50), ms(m.Latency.Max), slowestTurn(m))
		switch {
		case got > d && (final || p == 100):
			return fail("%s, over the %s budget", why, ms(d)), nil
		case got > d:
			return pending("so far %s, over the %s budget", why, ms(d)), nil
		}
		return pass(final, "%s", why), nil
	}}
}

func slowestTurn(m voicetest.Metrics) int {
	turn := -1
	var worst time.Duration
	for _, t := range m.Turns {
		if t.HasLatency && (turn < 0 || t.Latency > worst) {
			turn, worst = t.Turn, t.Latency
		}
	}
	return turn
}

// SpeakingRate passes when the agent's speaking rate is within [min, max]
// words per minute (Metrics.Speech.AgentWPM: the words of its messages
// over their length, interrupted ones left out). It decides only at the
// end; with no measured speech (a text-only agent with no speech time,
// words unknown) the result is inconclusive.
func SpeakingRate(min, max float64) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent speaks at %g to %g words a minute", min, max), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if min < 0 || max < min || max == 0 {
			return outcome{}, fmt.Errorf("SpeakingRate(%g, %g): want 0 <= min <= max, max > 0", min, max)
		}
		sp := st.Metrics().Speech
		if sp.AgentSpeech == 0 {
			if final {
				return inconclusive("no agent speech with known words and length was measured"), nil
			}
			return pending("no agent speech measured yet"), nil
		}
		why := fmt.Sprintf("%.0f words a minute (%d words in %s of speech, %.1f words a turn)", sp.AgentWPM, sp.AgentRatedWords, ms(sp.AgentSpeech), sp.AgentWordsPerTurn)
		if !final {
			return pending("so far %s", why), nil
		}
		if sp.AgentWPM < min || sp.AgentWPM > max {
			return fail("%s, outside %g to %g", why, min, max), nil
		}
		return pass(true, "%s", why), nil
	}}
}

// MaxWER passes when the word error rate of the agent's speech against
// the text it claims to have said is at most rate (0.05 is 5%): what
// Config.AgentSTT heard in its audio against its own transcript, over the
// messages checked under Config.MeasureAgentWER. It decides at the end,
// citing the worst message; without MeasureAgentWER the result is
// inconclusive and says how to turn it on.
func MaxWER(rate float64) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent's audio says what its transcript says, word error rate at most %g%%", 100*rate), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if rate < 0 {
			return outcome{}, fmt.Errorf("MaxWER(%g): the rate must not be negative", rate)
		}
		w := st.Metrics().Speech.WER
		if w == nil {
			why := "no agent speech was checked against its transcript: set Config.MeasureAgentWER and Config.AgentSTT (for an agent that streams its transcript)"
			if final {
				return inconclusive("%s", why), nil
			}
			return pending("%s", why), nil
		}
		why := fmt.Sprintf("word error rate %.1f%% (%d edits in %d words of %d messages)", 100*w.Rate, w.Errors.Edits(), w.Errors.Words, w.Messages)
		if h := w.Worst.Heard; h != nil && h.Errors.Edits() > 0 {
			why += fmt.Sprintf("; worst turn %d: it said %q, its audio says %q", w.Worst.Turn, clip(w.Worst.Text), clip(h.Text))
		}
		if !final {
			return pending("so far %s", why), nil
		}
		if w.Rate > rate {
			return fail("%s, over %g%%", why, 100*rate), nil
		}
		return pass(true, "%s", why), nil
	}}
}

// limitList keeps the first n items and says how many more there were.
func limitList(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("and %d more", len(items)-n))
}
