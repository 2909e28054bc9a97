package voicetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// holdOnAgent is a text-only fake that answers the first message with
// "One moment please" (1.2 s of speech, 300 ms after the question), is
// silent for pause, then says "Seven is free" (1.2 s); and answers the
// second message "Booked".
func holdOnAgent(pause time.Duration) *fixtures.FakeAgent {
	return fixtures.TextAgent(
		fixtures.Reply{Text: "One moment please", Latency: 300 * time.Millisecond,
			Then: &fixtures.Reply{Text: "Seven is free", Latency: pause}},
		fixtures.Reply{Text: "Booked", Latency: 300 * time.Millisecond},
	)
}

// holdOnScript asks a question, drains the reply, and lets the User take
// its turn.
var holdOnScript = []voicetest.Step{
	voicetest.UserSays("Book a table"), // 0–1.2 s
	voicetest.AgentTurn(),              // "One moment please" 1.5–2.7 s
	voicetest.UserTurn(),
	voicetest.AgentTurn(),
}

type msg struct {
	Turn       int
	Role       voicetest.Role
	Text       string
	Start, End time.Duration
}

func messages(res *voicetest.Result) []msg {
	var out []msg
	for _, m := range res.Transcript {
		out = append(out, msg{m.Turn, m.Role, m.Text, m.Start, m.End})
	}
	return out
}

func eventsOf(res *voicetest.Result, types ...voicetest.EventType) []voicetest.Event {
	var out []voicetest.Event
	for _, e := range res.Timeline {
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
			}
		}
	}
	return out
}

// Without a policy, the caller speaks at the agent's first turn end and
// talks into its pause; with an idle timeout it waits, and each new
// speech restarts the wait.
func TestTurnTakingIdleTimeoutRestartsOnNewSpeech(t *testing.T) {
	const user, agent = voicetest.RoleUser, voicetest.RoleAgent
	for _, tc := range []struct {
		name string
		tt   voicetest.TurnTaking
		want []msg
	}{
		{"none", voicetest.TurnTaking{}, []msg{
			{1, user, "Book a table", 0, ms(1200)},
			{1, agent, "One moment please", ms(1500), ms(2700)},
			// The caller answers at once, 2.7–3.5 s, into the agent's
			// pause, and the agent's reply to it ends the script before
			// "Seven is free" (4.7 s) is ever heard.
			{2, user, "Seven please", ms(2700), ms(3500)},
			{2, agent, "Booked", ms(3800), ms(4200)},
		}},
		{"idle 1.5s, shorter than the pause", voicetest.TurnTaking{Idle: 1500 * time.Millisecond}, []msg{
			{1, user, "Book a table", 0, ms(1200)},
			{1, agent, "One moment please", ms(1500), ms(2700)},
			// Quiet since 2.7 s: the caller speaks at 4.2 s, and the
			// agent's answer at 4.7 s talks over it.
			{2, user, "Seven please", ms(4200), ms(5000)},
			{2, agent, "Seven is free", ms(4700), ms(5900)},
			{2, agent, "Booked", ms(5900), ms(6300)},
		}},
		{"idle 3s, restarted by the agent's answer", voicetest.TurnTaking{Idle: 3 * time.Second}, []msg{
			{1, user, "Book a table", 0, ms(1200)},
			{1, agent, "One moment please", ms(1500), ms(2700)},
			// The answer at 4.7 s (before 2.7+3 s) restarts the wait:
			// it ends at 5.9 s, so the caller speaks at 8.9 s.
			{1, agent, "Seven is free", ms(4700), ms(5900)},
			{2, user, "Seven please", ms(8900), ms(9700)},
			{2, agent, "Booked", ms(10000), ms(10400)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: holdOnAgent(2 * time.Second), User: lines("Seven please"),
				TurnTaking: tc.tt, Script: holdOnScript,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, messages(res)); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
			if n := len(eventsOf(res, voicetest.EventUserWait, voicetest.EventUserWaitLimit)); n != 0 {
				t.Errorf("%d wait events: the idle timeout alone is no counted wait", n)
			}
		})
	}
}

// holdRule is a rule classifier: while the agent's last words ask the
// caller to hold, check again in a second.
func holdRule(calls *[]time.Duration) voicetest.TurnClassifier {
	return voicetest.TurnClassifierFunc(func(ctx context.Context, st *voicetest.State) (voicetest.TurnDecision, error) {
		m, _ := st.LastMessage(voicetest.RoleAgent)
		*calls = append(*calls, m.End)
		if strings.Contains(strings.ToLower(m.Text), "one moment") {
			return voicetest.TurnDecision{Wait: time.Second, Reason: "the agent asked me to hold"}, nil
		}
		return voicetest.TurnDecision{}, nil
	})
}

// The classifier's "not yet, check again in 1 s" is counted, shown on the
// timeline with how long the caller really waited, and ends early when
// the agent speaks again.
func TestTurnTakingClassifierWaitsAreCountedAndShown(t *testing.T) {
	var seen []time.Duration
	res, err := runVirtual(t, voicetest.Config{
		Agent: holdOnAgent(2300 * time.Millisecond), User: lines("Seven please"),
		TurnTaking: voicetest.TurnTaking{Idle: 500 * time.Millisecond, Classifier: holdRule(&seen)},
		Script:     holdOnScript,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Quiet from 2.7 s; idle at 3.2 s: wait 1 s; at 4.2 s still "one
	// moment": wait again, cut short at 5.0 s by "Seven is free"
	// (5.0–6.2 s); idle at 6.7 s, and the classifier says speak.
	wantWaits := []voicetest.Event{
		{At: ms(3200), Type: voicetest.EventUserWait, Turn: 1, Role: voicetest.RoleUser, Text: "the agent asked me to hold", Duration: time.Second},
		{At: ms(4200), Type: voicetest.EventUserWait, Turn: 1, Role: voicetest.RoleUser, Text: "the agent asked me to hold", Duration: ms(800)},
	}
	if diff := cmp.Diff(wantWaits, eventsOf(res, voicetest.EventUserWait, voicetest.EventUserWaitLimit)); diff != "" {
		t.Errorf("wait events (-want +got):\n%s", diff)
	}
	if want := []time.Duration{ms(2700), ms(2700), ms(6200)}; !cmp.Equal(want, seen) {
		t.Errorf("the classifier saw the agent's last message end at %v, want %v", seen, want)
	}
	want := []msg{
		{1, voicetest.RoleUser, "Book a table", 0, ms(1200)},
		{1, voicetest.RoleAgent, "One moment please", ms(1500), ms(2700)},
		{1, voicetest.RoleAgent, "Seven is free", ms(5000), ms(6200)},
		{2, voicetest.RoleUser, "Seven please", ms(6700), ms(7500)},
		{2, voicetest.RoleAgent, "Booked", ms(7800), ms(8200)},
	}
	if diff := cmp.Diff(want, messages(res)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if got, want := res.Metrics.Waits, (voicetest.WaitMetrics{Count: 2, Time: ms(1800), Longest: time.Second}); got != want {
		t.Errorf("Metrics.Waits = %+v, want %+v", got, want)
	}
}

// A classifier that never lets the caller speak is stopped at
// TurnTaking.MaxWaits: the caller speaks, and the timeline says why.
func TestTurnTakingWaitsAreBounded(t *testing.T) {
	never := voicetest.TurnClassifierFunc(func(context.Context, *voicetest.State) (voicetest.TurnDecision, error) {
		return voicetest.TurnDecision{Wait: 700 * time.Millisecond, Reason: "not yet"}, nil
	})
	for _, tc := range []struct {
		name  string
		tt    voicetest.TurnTaking
		waits []time.Duration // durations of the user_wait events
		limit string
		speak time.Duration
	}{
		{"MaxWaits", voicetest.TurnTaking{Classifier: never, MaxWaits: 3},
			[]time.Duration{ms(700), ms(700), ms(700)}, "stopped waiting after 3 waits (TurnTaking.MaxWaits)", ms(4800)},
		{"MaxWait", voicetest.TurnTaking{Classifier: never, MaxWait: 1500 * time.Millisecond},
			[]time.Duration{ms(700), ms(700), ms(100)}, "stopped waiting after 1.5s (TurnTaking.MaxWait)", ms(4200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				// The answer comes 10 s after "One moment please": too late.
				Agent: holdOnAgent(10 * time.Second), User: lines("Seven please"),
				TurnTaking: tc.tt,
				Script:     holdOnScript[:3],
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			at := ms(2700)
			for _, e := range eventsOf(res, voicetest.EventUserWait) {
				if e.At != at || e.Text != "not yet" {
					t.Errorf("wait %+v: want one at %v", e, at)
				}
				got = append(got, e.Duration)
				at += e.Duration
			}
			if !cmp.Equal(tc.waits, got) {
				t.Errorf("waits %v, want %v", got, tc.waits)
			}
			lim := eventsOf(res, voicetest.EventUserWaitLimit)
			if len(lim) != 1 || lim[0].Text != tc.limit || lim[0].At != at {
				t.Errorf("limit events %+v, want one at %v: %q", lim, at, tc.limit)
			}
			if m, ok := res.State.LastMessage(voicetest.RoleUser); !ok || m.Start != tc.speak || m.Text != "Seven please" {
				t.Errorf("the caller's line %+v, want it at %v", m, tc.speak)
			}
			if w := res.Metrics.Waits; w.Count != len(tc.waits) || w.GaveUp != 1 {
				t.Errorf("Metrics.Waits = %+v", w)
			}
		})
	}
}

// A User that answers with a wait and nothing to say (as an LLM persona's
// wait tool does) is, under TurnTaking, a counted wait after which it is
// asked again; the agent's answer meanwhile stays in the agent's turn.
func TestTurnTakingUserWaitIsCountedAndAskedAgain(t *testing.T) {
	var asked []time.Duration
	var shownLast string
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		m, _ := st.LastMessage(voicetest.RoleAgent)
		asked = append(asked, m.End)
		if m.Text == "One moment please" {
			return voicetest.Utterance{Wait: 5 * time.Second}, nil
		}
		shownLast = m.Text
		return voicetest.Utterance{Text: "Seven please"}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: holdOnAgent(2 * time.Second), User: user,
		TurnTaking: voicetest.TurnTaking{Idle: 200 * time.Millisecond},
		Script:     holdOnScript,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []voicetest.Event{{At: ms(2900), Type: voicetest.EventUserWait, Turn: 1, Role: voicetest.RoleUser,
		Text: "the caller chose to wait", Duration: ms(1800)}}
	if diff := cmp.Diff(want, eventsOf(res, voicetest.EventUserWait, voicetest.EventUserWaitLimit)); diff != "" {
		t.Errorf("wait events (-want +got):\n%s", diff)
	}
	if !cmp.Equal([]time.Duration{ms(2700), ms(5900)}, asked) || shownLast != "Seven is free" {
		t.Errorf("the User was asked after agent messages ending %v, last %q", asked, shownLast)
	}
	if m, _ := res.State.LastMessage(voicetest.RoleUser); m.Start != ms(6100) {
		t.Errorf("the caller spoke at %v, want 6.1 s (idle 200 ms after 5.9 s)", m.Start)
	}
}

func TestTurnTakingRejectsBadBounds(t *testing.T) {
	for _, tt := range []voicetest.TurnTaking{{Idle: -1}, {MaxWaits: -1}, {MaxWait: -time.Second}} {
		_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), TurnTaking: tt})
		if err == nil || !strings.Contains(err.Error(), "Config.TurnTaking.") {
			t.Errorf("%+v: err = %v, want one naming the field", tt, err)
		}
	}
	neg := voicetest.TurnClassifierFunc(func(context.Context, *voicetest.State) (voicetest.TurnDecision, error) {
		return voicetest.TurnDecision{Wait: -time.Second}, nil
	})
	_, err := runVirtual(t, voicetest.Config{Agent: holdOnAgent(time.Second), User: lines("x"),
		TurnTaking: voicetest.TurnTaking{Classifier: neg}, Script: holdOnScript})
	if err == nil || !strings.Contains(err.Error(), "negative wait") {
		t.Errorf("a negative wait: err = %v", err)
	}
}

// A User that keeps waiting is stopped at the bound with an error that
// says what to do, never a silent turn or a hang.
func TestTurnTakingUserThatNeverSpeaks(t *testing.T) {
	always := voicetest.UserFunc(func(context.Context, *voicetest.State) (voicetest.Utterance, error) {
		return voicetest.Utterance{Wait: time.Second, WaitReason: "thinking"}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: holdOnAgent(10 * time.Second), User: always,
		TurnTaking: voicetest.TurnTaking{MaxWaits: 2},
		Script:     holdOnScript[:3],
	})
	if err == nil || !strings.Contains(err.Error(), "Config.User asked to wait again before turn 2 after 2 waits (2s in all), past Config.TurnTaking's bound (MaxWaits 2, MaxWait 30s)") {
		t.Fatalf("err = %v\n%s\n%s", err, res.TranscriptText(), res.TimelineText())
	}
	want := []voicetest.Event{
		{At: ms(2700), Type: voicetest.EventUserWait, Turn: 1, Role: voicetest.RoleUser, Text: "thinking", Duration: time.Second},
		{At: ms(3700), Type: voicetest.EventUserWait, Turn: 1, Role: voicetest.RoleUser, Text: "thinking", Duration: time.Second},
		{At: ms(4700), Type: voicetest.EventUserWaitLimit, Turn: 1, Role: voicetest.RoleUser, Text: "stopped waiting after 2 waits (TurnTaking.MaxWaits)"},
	}
	if diff := cmp.Diff(want, eventsOf(res, voicetest.EventUserWait, voicetest.EventUserWaitLimit)); diff != "" {
		t.Errorf("wait events (-want +got):\n%s", diff)
	}
}
