package judges

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Rule is a deterministic judge: one criterion checked against the recorded
// conversation (transcript, timeline, tool calls, latencies) with no LLM.
// The constructors (Says, NeverSays, ToolCalled, Turns, HungUp,
// LatencyP95Under, EachTurnUnder, InterruptionHandled, SilenceHandled, …)
// return Rules; All and Any combine them with each other and with LLM
// judges.
//
// A Rule answers pass, fail or inconclusive, with reasoning that cites the
// evidence (turn, text, milliseconds). Asked in the middle of a
// conversation (a non-final JudgeRequest from Proceed), a Rule ends the
// conversation early only when its criterion is already broken for good
// (NeverSays heard the phrase, a turn was over its latency budget) or
// already met for good (Says heard the phrase); otherwise it reports what
// it knows so far with Decided false. Asked for a final verdict, or at a
// Checkpoint, it decides: a phrase not said by then is a failure.
//
// Rules are immutable values, safe to share between parallel tests.
type Rule struct {
	criterion string
	eval      func(st *voicetest.State, final bool) (outcome, error)
}

// outcome is a rule's answer. settled means later turns cannot change it;
// a failed outcome is always settled.
type outcome struct {
	status    voicetest.Status
	reasoning string
	settled   bool
}

func pass(settled bool, format string, args ...any) outcome {
	return outcome{status: voicetest.StatusPass, reasoning: fmt.Sprintf(format, args...), settled: settled}
}

func fail(format string, args ...any) outcome {
	return outcome{status: voicetest.StatusFail, reasoning: fmt.Sprintf(format, args...), settled: true}
}

func pending(format string, args ...any) outcome {
	return outcome{status: voicetest.StatusInconclusive, reasoning: fmt.Sprintf(format, args...)}
}

func inconclusive(format string, args ...any) outcome {
	return outcome{status: voicetest.StatusInconclusive, reasoning: fmt.Sprintf(format, args...), settled: true}
}

var _ voicetest.Judge = (*Rule)(nil)

// Criterion returns the rule's criterion as reports show it, e.g.
// `the agent says "table for two"`.
func (r *Rule) Criterion() string { return r.criterion }

// Criteria returns the rule's one criterion; All uses it to route the
// criteria of a Checkpoint to the judge that owns them.
func (r *Rule) Criteria() []string { return []string{r.criterion} }

// Named returns a copy of the rule reported under criterion instead of its
// generated name (for example "greets the caller by name").
func (r *Rule) Named(criterion string) *Rule {
	c := *r
	c.criterion = criterion
	return &c
}

// String returns the criterion.
func (r *Rule) String() string { return r.criterion }

// Evaluate implements voicetest.Judge. When req.Criteria is set (a
// Checkpoint), the rule answers those criteria: its own is evaluated as a
// final check, any other is inconclusive because a rule can check only
// its own criterion.
func (r *Rule) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	if r == nil || r.eval == nil {
		return voicetest.Judgment{}, errors.New("judges: the Rule is nil or zero; build rules with judges.Says, judges.ToolCalled, …")
	}
	if req.State == nil {
		return voicetest.Judgment{}, fmt.Errorf("judges: %s: JudgeRequest.State is nil; the runner passes the conversation in it", r.criterion)
	}
	if err := ctx.Err(); err != nil {
		return voicetest.Judgment{}, fmt.Errorf("judges: %s: %w", r.criterion, err)
	}
	forced := isForced(req)
	asked := req.Criteria
	if asked == nil {
		asked = []string{r.criterion}
	}
	var v voicetest.Judgment
	decided := forced
	for _, c := range asked {
		if c != r.criterion {
			v.Criteria = append(v.Criteria, notMine(c, r.Criteria()))
			continue
		}
		o, err := r.eval(req.State, forced)
		if err != nil {
			return voicetest.Judgment{}, fmt.Errorf("judges: %s: %w", r.criterion, err)
		}
		v.Criteria = append(v.Criteria, voicetest.CriterionResult{Criterion: c, Status: o.status, Reasoning: o.reasoning})
		if o.settled && o.status != voicetest.StatusInconclusive {
			decided = true
		}
		v.Reasoning = o.reasoning
	}
	v.Decided = decided
	return v, nil
}

// Check evaluates the rule on the conversation so far as a final check
// and returns nil when it passes, else an error with the reasoning; use it
// in a Check step: voicetest.Check(judges.NeverSays("sorry").Check).
func (r *Rule) Check(st *voicetest.State) error {
	v, err := r.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
	if err != nil {
		return err
	}
	return judgmentError(v)
}

// judgmentError returns nil for a passing judgment, else an error listing
// the criteria that did not pass.
func judgmentError(v voicetest.Judgment) error {
	var parts []string
	for _, c := range v.Criteria {
		if c.Status != voicetest.StatusPass {
			parts = append(parts, fmt.Sprintf("criterion %q: %s: %s", c.Criterion, c.Status, c.Reasoning))
		}
	}
	if len(parts) == 0 && len(v.Criteria) > 0 {
		return nil
	}
	if len(parts) == 0 {
		return errors.New("judges: the judge answered no criteria")
	}
	return fmt.Errorf("%w: %s", ErrNotPassed, strings.Join(parts, "; "))
}

// ErrNotPassed is wrapped by the errors of Check methods when a criterion
// failed or was inconclusive.
var ErrNotPassed = errors.New("judges: criterion not passed")

func notMine(c string, mine []string) voicetest.CriterionResult {
	return voicetest.CriterionResult{Criterion: c, Status: voicetest.StatusInconclusive,
		Reasoning: fmt.Sprintf("this judge checks only %s; ask an LLM judge (judges.Criteria) about other criteria", quoteList(mine))}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// isForced reports whether req demands a decision: a final verdict, a
// checkpoint, or the last allowed turn.
func isForced(req voicetest.JudgeRequest) bool {
	return req.Final || req.Criteria != nil || (req.MaxTurns > 0 && req.Turn >= req.MaxTurns)
}

// agentMessages returns the agent's messages with known words.
func agentMessages(st *voicetest.State) []voicetest.Message {
	var out []voicetest.Message
	for _, m := range st.Transcript() {
		if m.Role == voicetest.RoleAgent && !m.AudioOnly && m.Text != "" {
			out = append(out, m)
		}
	}
	return out
}

func audioOnlyCount(st *voicetest.State) int {
	n := 0
	for _, m := range st.Transcript() {
		if m.Role == voicetest.RoleAgent && m.AudioOnly {
			n++
		}
	}
	return n
}

// Says passes when some agent message contains text, compared after
// voicetest.NormalizeText (the normalisation golden files use for
// speech-to-text): case, punctuation and spacing are ignored, English
// numbers match their digits ("twenty-one" is "21"), and words must match
// whole. So Says("party of two") matches "Party of 2!" but not "party of
// twenty" or "party of two hundred".
func Says(text string) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent says %q", text), eval: func(st *voicetest.State, final bool) (outcome, error) {
		want := voicetest.NormalizeText(text)
		if want == "" {
			return outcome{}, fmt.Errorf("Says(%q): nothing is left to match after normalising (only punctuation or spaces); give words to look for", text)
		}
		msgs := agentMessages(st)
		for _, m := range msgs {
			if containsWords(voicetest.NormalizeText(m.Text), want) {
				return pass(true, "turn %d: the agent said %q", m.Turn, clip(m.Text)), nil
			}
		}
		return notSaid(st, msgs, fmt.Sprintf("%q", text), final), nil
	}}
}

// SaysRegexp passes when some agent message matches the regular
// expression pattern (Go syntax, matched against the text as transcribed;
// prefix (?i) to ignore case). An invalid pattern is an error when the
// rule is evaluated.
func SaysRegexp(pattern string) *Rule {
	re, reErr := regexp.Compile(pattern)
	return &Rule{criterion: fmt.Sprintf("the agent says something matching /%s/", pattern), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if reErr != nil {
			return outcome{}, fmt.Errorf("SaysRegexp: invalid pattern: %w", reErr)
		}
		msgs := agentMessages(st)
		for _, m := range msgs {
			if loc := re.FindStringIndex(m.Text); loc != nil {
				return pass(true, "turn %d: the agent said %q (match %q)", m.Turn, clip(m.Text), m.Text[loc[0]:loc[1]]), nil
			}
		}
		return notSaid(st, msgs, "a match for /"+pattern+"/", final), nil
	}}
}

func notSaid(st *voicetest.State, msgs []voicetest.Message, what string, final bool) outcome {
	why := fmt.Sprintf("no agent message contains %s (%s", what, plural(len(msgs), "agent message"))
	if n := audioOnlyCount(st); n > 0 {
		why += fmt.Sprintf("; %d more are audio only, set Config.AgentSTT to transcribe them", n)
	}
	why += ")"
	if len(msgs) > 0 {
		why += "; last: " + fmt.Sprintf("turn %d %q", msgs[len(msgs)-1].Turn, clip(msgs[len(msgs)-1].Text))
	}
	if !final {
		return pending("so far %s", why)
	}
	return fail("%s", why)
}

// NeverSays passes when no agent message contains text, compared after
// the normalisation Says uses. It fails, and ends a running conversation,
// as soon as the agent says it.
func NeverSays(text string) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent never says %q", text), eval: func(st *voicetest.State, final bool) (outcome, error) {
		want := voicetest.NormalizeText(text)
		if want == "" {
			return outcome{}, fmt.Errorf("NeverSays(%q): nothing is left to match after normalising (only punctuation or spaces); give words to look for", text)
		}
		msgs := agentMessages(st)
		for _, m := range msgs {
			if containsWords(voicetest.NormalizeText(m.Text), want) {
				return fail("turn %d: the agent said %q", m.Turn, clip(m.Text)), nil
			}
		}
		return neverSaid(st, msgs, fmt.Sprintf("%q", text)), nil
	}}
}

// NeverSaysRegexp passes when no agent message matches pattern (see
// SaysRegexp).
func NeverSaysRegexp(pattern string) *Rule {
	re, reErr := regexp.Compile(pattern)
	return &Rule{criterion: fmt.Sprintf("the agent never says anything matching /%s/", pattern), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if reErr != nil {
			return outcome{}, fmt.Errorf("NeverSaysRegexp: invalid pattern: %w", reErr)
		}
		msgs := agentMessages(st)
		for _, m := range msgs {
			if loc := re.FindStringIndex(m.Text); loc != nil {
				return fail("turn %d: the agent said %q (match %q)", m.Turn, clip(m.Text), m.Text[loc[0]:loc[1]]), nil
			}
		}
		return neverSaid(st, msgs, "a match for /"+pattern+"/"), nil
	}}
}

func neverSaid(st *voicetest.State, msgs []voicetest.Message, what string) outcome {
	if n := audioOnlyCount(st); n > 0 {
		// Words we cannot see might hold the phrase.
		return pending("no transcribed agent message contains %s (%s checked), but %d more are audio only; set Config.AgentSTT to transcribe them", what, plural(len(msgs), "agent message"), n)
	}
	return pass(false, "no agent message contains %s (%s checked)", what, plural(len(msgs), "agent message"))
}

// ToolCalled passes when the agent called the named tool with arguments
// that contain args: every key of args must be present with an equal
// value, compared as JSON (2 matches 2.0), nested objects as subsets too.
// Nil args matches any arguments.
func ToolCalled(name string, args map[string]any) *Rule {
	crit := fmt.Sprintf("the agent calls tool %q", name)
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			crit += fmt.Sprintf(" with %v", args)
		} else {
			crit += " with " + string(b)
		}
	}
	return &Rule{criterion: crit, eval: func(st *voicetest.State, final bool) (outcome, error) {
		var want any
		if args != nil {
			b, err := json.Marshal(args)
			if err != nil {
				return outcome{}, fmt.Errorf("ToolCalled(%q): the expected arguments cannot be encoded as JSON: %w", name, err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				return outcome{}, fmt.Errorf("ToolCalled(%q): decoding the expected arguments: %w", name, err)
			}
		}
		var mismatches, others []string
		for _, e := range st.Events() {
			if e.Type != voicetest.EventToolCall || e.Tool == nil {
				continue
			}
			if e.Tool.Name != name {
				others = append(others, e.Tool.Name)
				continue
			}
			if want == nil {
				return pass(true, "turn %d: the agent called %s %s", e.Turn, name, argText(e.Tool.Arguments)), nil
			}
			got, err := decodeArgs(e.Tool.Arguments)
			if err != nil {
				mismatches = append(mismatches, fmt.Sprintf("turn %d: arguments are not valid JSON (%v): %s", e.Turn, err, clip(string(e.Tool.Arguments))))
				continue
			}
			if path, ok := jsonSubset(want, got, "$"); !ok {
				mismatches = append(mismatches, fmt.Sprintf("turn %d: %s %s differs at %s", e.Turn, name, argText(e.Tool.Arguments), path))
				continue
			}
			return pass(true, "turn %d: the agent called %s %s", e.Turn, name, argText(e.Tool.Arguments)), nil
		}
		var why string
		switch {
		case len(mismatches) > 0:
			why = fmt.Sprintf("no call of %s has the arguments: %s", name, strings.Join(mismatches, "; "))
		case len(others) > 0:
			why = fmt.Sprintf("the agent never called %s (it called %s)", name, strings.Join(others, ", "))
		default:
			why = "the agent called no tools"
		}
		if !final {
			return pending("so far %s", why), nil
		}
		return fail("%s", why), nil
	}}
}

// ToolNotCalled passes when the agent never called the named tool; it
// fails, and ends a running conversation, at the first call.
func ToolNotCalled(name string) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent never calls tool %q", name), eval: func(st *voicetest.State, final bool) (outcome, error) {
		n := 0
		for _, e := range st.Events() {
			if e.Type != voicetest.EventToolCall || e.Tool == nil {
				continue
			}
			n++
			if e.Tool.Name == name {
				return fail("turn %d: the agent called %s %s", e.Turn, name, argText(e.Tool.Arguments)), nil
			}
		}
		return pass(false, "no call of %s among the agent's %s", name, plural(n, "tool call")), nil
	}}
}

func decodeArgs(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func argText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return clip(string(raw))
}

// jsonSubset reports whether want is contained in got (objects by key
// subset, everything else by equality) and, if not, the path of the first
// difference.
func jsonSubset(want, got any, path string) (string, bool) {
	wm, ok := want.(map[string]any)
	if !ok {
		return path, reflect.DeepEqual(want, got)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return path, false
	}
	for _, k := range sortedKeys(wm) {
		gv, ok := gm[k]
		if !ok {
			return path + "." + k + " (missing)", false
		}
		if p, ok := jsonSubset(wm[k], gv, path+"."+k); !ok {
			return p, false
		}
	}
	return "", true
}

// Turns passes when the conversation took at least min and at most max
// user turns; max 0 means no upper bound. It fails as soon as the count
// exceeds max.
func Turns(min, max int) *Rule {
	crit := fmt.Sprintf("the conversation takes %d to %d user turns", min, max)
	if max == 0 {
		crit = fmt.Sprintf("the conversation takes at least %d user turns", min)
	}
	return &Rule{criterion: crit, eval: func(st *voicetest.State, final bool) (outcome, error) {
		if min < 0 || max < 0 || (max > 0 && max < min) {
			return outcome{}, fmt.Errorf("Turns(%d, %d): want 0 <= min <= max (or max 0 for no upper bound)", min, max)
		}
		n := st.Turn()
		turns := plural(n, "user turn")
		switch {
		case max > 0 && n > max:
			return fail("%s, more than %d", turns, max), nil
		case n < min && !final:
			return pending("%s so far, fewer than %d", turns, min), nil
		case n < min:
			return fail("%s, fewer than %d", turns, min), nil
		}
		return pass(final, "%s", turns), nil
	}}
}

// HungUp passes when the agent hung up.
func HungUp() *Rule {
	return &Rule{criterion: "the agent hangs up", eval: func(st *voicetest.State, final bool) (outcome, error) {
		for _, e := range st.Timeline() {
			if e.Type == voicetest.EventAgentHangUp {
				why := fmt.Sprintf("turn %d: the agent hung up at %s", e.Turn, ms(e.At))
				if e.Text != "" {
					why += fmt.Sprintf(" (%s)", e.Text)
				}
				return pass(true, "%s", why), nil
			}
		}
		if !final {
			return pending("the agent has not hung up yet (turn %d)", st.Turn()), nil
		}
		return fail("the agent did not hang up (the conversation had %d user turns)", st.Turn()), nil
	}}
}

// turnLatency is one measured agent response time.
type turnLatency struct {
	turn int
	at   time.Duration
	d    time.Duration
}

// latencies returns the response times the runner recorded on
// agent_start_speaking events.
func latencies(st *voicetest.State) []turnLatency {
	var out []turnLatency
	for _, e := range st.Timeline() {
		if e.Type == voicetest.EventAgentStartSpeaking && e.Latency > 0 {
			out = append(out, turnLatency{turn: e.Turn, at: e.At, d: e.Latency})
		}
	}
	return out
}

// LatencyP95Under passes when the 95th percentile of the agent's response
// times is at most budget. Response time is the time from the end of the
// user's speech to the agent's first audio, as the runner measures it, and
// the percentile is voicetest's: sorted[min(n-1, ceil(0.95*(n-1)))] (so
// for fewer than 21 replies it is the slowest). With no measured reply
// the result is inconclusive.
func LatencyP95Under(budget time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("p95 agent response latency is at most %s", ms(budget)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if budget <= 0 {
			return outcome{}, fmt.Errorf("LatencyP95Under(%v): the budget must be positive", budget)
		}
		ls := latencies(st)
		if len(ls) == 0 {
			if final {
				return inconclusive("no agent reply to user speech was measured"), nil
			}
			return pending("no agent reply to user speech measured yet"), nil
		}
		l := voicetest.Latency{}
		slowest := ls[0]
		for _, x := range ls {
			l.PerTurn = append(l.PerTurn, x.d)
			if x.d > slowest.d {
				slowest = x
			}
		}
		l.Summarize()
		why := fmt.Sprintf("p95 %s over %d replies (p50 %s; slowest %s in turn %d)", ms(l.P95), len(ls), ms(l.P50), ms(slowest.d), slowest.turn)
		switch {
		case !final && l.P95 > budget:
			return pending("so far %s, over the %s budget", why, ms(budget)), nil
		case !final:
			return pass(false, "so far %s", why), nil
		case l.P95 > budget:
			return fail("%s, over the %s budget", why, ms(budget)), nil
		}
		return pass(true, "%s", why), nil
	}}
}

// EachTurnUnder passes when every agent response time (see
// LatencyP95Under) is at most budget. It fails, and ends a running
// conversation, at the first slower reply. With no measured reply the
// result is inconclusive.
func EachTurnUnder(budget time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("every agent response latency is at most %s", ms(budget)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if budget <= 0 {
			return outcome{}, fmt.Errorf("EachTurnUnder(%v): the budget must be positive", budget)
		}
		ls := latencies(st)
		var slow []string
		var slowest time.Duration
		for _, x := range ls {
			slowest = max(slowest, x.d)
			if x.d > budget {
				slow = append(slow, fmt.Sprintf("turn %d took %s", x.turn, ms(x.d)))
			}
		}
		switch {
		case len(slow) > 0:
			return fail("%s, over the %s budget", strings.Join(slow, ", "), ms(budget)), nil
		case len(ls) == 0 && final:
			return inconclusive("no agent reply to user speech was measured"), nil
		case len(ls) == 0:
			return pending("no agent reply to user speech measured yet"), nil
		}
		return pass(final, "all %d replies within budget (slowest %s)", len(ls), ms(slowest)), nil
	}}
}

// InterruptionHandled passes when, after every barge-in (an Interrupt
// step), the agent stopped speaking within the given time. The response
// time is the runner's (Result.Latency.InterruptResponse): from the
// barge-in to the agent's own "interrupted" report when it sent one, else
// to the end of its audio. With no barge-in in the conversation
// the result is inconclusive.
func InterruptionHandled(within time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent stops speaking within %s of a barge-in", ms(within)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if within <= 0 {
			return outcome{}, fmt.Errorf("InterruptionHandled(%v): the limit must be positive", within)
		}
		tl := st.Timeline()
		var ok []string
		var bad []string
		n := 0
		for i, e := range tl {
			if e.Type != voicetest.EventUserInterrupt {
				continue
			}
			n++
			resp, found := interruptResponse(tl[i+1:], e.At)
			if !found {
				bad = append(bad, fmt.Sprintf("turn %d: no record of the agent stopping after the barge-in at %s", e.Turn, ms(e.At)))
				continue
			}
			if resp > within {
				bad = append(bad, fmt.Sprintf("turn %d: the agent stopped %s after the barge-in at %s", e.Turn, ms(resp), ms(e.At)))
			} else {
				ok = append(ok, fmt.Sprintf("turn %d: %s", e.Turn, ms(resp)))
			}
		}
		switch {
		case len(bad) > 0:
			return fail("%s (limit %s)", strings.Join(bad, "; "), ms(within)), nil
		case n == 0 && final:
			return inconclusive("the user never barged in; add an Interrupt step to test this"), nil
		case n == 0:
			return pending("the user has not barged in yet"), nil
		}
		return pass(final, "the agent stopped in time after every barge-in (%s)", strings.Join(ok, ", ")), nil
	}}
}

// interruptResponse returns the interrupt response time of the barge-in at
// at, from the events after it (up to the next barge-in), as the runner
// measures it: the agent's own "interrupted" report when it sent one, else
// the end of its audio.
func interruptResponse(after []voicetest.Event, at time.Duration) (time.Duration, bool) {
	stop := -1
	for j, f := range after {
		if f.Type == voicetest.EventUserInterrupt {
			break
		}
		if f.Type == voicetest.EventAgentInterrupted {
			if f.Latency > 0 {
				return f.Latency, true
			}
			return f.At - at, true
		}
		if f.Type == voicetest.EventAgentStopSpeaking && stop < 0 {
			stop = j
		}
	}
	if stop < 0 {
		return 0, false
	}
	if l := after[stop].Latency; l > 0 {
		return l, true
	}
	return after[stop].At - at, true
}

// SilenceHandled passes when, after every Silence step, the agent started
// speaking (a re-prompt such as "Are you still there?") within the given
// time of the silence's start. A silence after which the user spoke again
// before the time was up, or after which the conversation was recorded for
// less than that time, is inconclusive; make the Silence step at least as
// long as the limit. With no Silence step the result is inconclusive.
func SilenceHandled(within time.Duration) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent re-prompts within %s of the user falling silent", ms(within)), eval: func(st *voicetest.State, final bool) (outcome, error) {
		if within <= 0 {
			return outcome{}, fmt.Errorf("SilenceHandled(%v): the limit must be positive", within)
		}
		tl := st.Timeline()
		var end time.Duration
		for _, e := range tl {
			end = max(end, e.At+e.Duration)
		}
		var ok, bad, unsure []string
		n := 0
		for i, e := range tl {
			if e.Type != voicetest.EventSilence {
				continue
			}
			n++
			deadline := e.At + within
			spoke, userAt := time.Duration(-1), time.Duration(-1)
			for _, f := range tl[i+1:] {
				if f.At > deadline {
					break
				}
				if f.Type == voicetest.EventAgentStartSpeaking {
					spoke = f.At
					break
				}
				if f.Type == voicetest.EventUserStartSpeaking || f.Type == voicetest.EventUserInterrupt || f.Type == voicetest.EventDTMF {
					userAt = f.At
					break
				}
			}
			switch {
			case spoke >= 0:
				ok = append(ok, fmt.Sprintf("turn %d: %s", e.Turn, ms(spoke-e.At)))
			case userAt >= 0:
				unsure = append(unsure, fmt.Sprintf("turn %d: the user spoke again %s after falling silent at %s, before the %s limit", e.Turn, ms(userAt-e.At), ms(e.At), ms(within)))
			case end >= deadline:
				bad = append(bad, fmt.Sprintf("turn %d: the agent said nothing for %s after the user fell silent at %s", e.Turn, ms(within), ms(e.At)))
			default:
				unsure = append(unsure, fmt.Sprintf("turn %d: the conversation was recorded only %s past the silence at %s, less than the %s limit; make the Silence step at least that long", e.Turn, ms(end-e.At), ms(e.At), ms(within)))
			}
		}
		switch {
		case len(bad) > 0:
			return fail("%s", strings.Join(bad, "; ")), nil
		case n == 0 && final:
			return inconclusive("the user never fell silent; add a Silence step to test this"), nil
		case n == 0:
			return pending("the user has not fallen silent yet"), nil
		case len(unsure) > 0 && final:
			return inconclusive("%s", strings.Join(unsure, "; ")), nil
		case len(unsure) > 0:
			return pending("%s", strings.Join(unsure, "; ")), nil
		}
		return pass(final, "the agent re-prompted in time after every silence (%s)", strings.Join(ok, ", ")), nil
	}}
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// ms formats d in milliseconds, the unit reports use; a duration that is
// not a whole number of milliseconds keeps its precision.
func ms(d time.Duration) string {
	if d%time.Millisecond != 0 {
		return d.String()
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// clip shortens s for reasoning text.
func clip(s string) string {
	const max = 160
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
