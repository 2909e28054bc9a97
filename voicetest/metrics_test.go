package voicetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// The conversation-quality metrics on virtual time, where every one of
// them is exact. The same metrics measured against remote loopback agents
// on the real clock, within a tolerance, are in the adapters' packages
// (adapters/realtime, adapters/twilio, adapters/composable).

// bargeInScenario: the agent greets (200–1000 ms), the user says "hi"
// (1000–1400), the agent answers after 300 ms (from 1700) and the user
// barges in after its second word (2100); the agent hears it and stops
// 150 ms later (2250): 150 ms of talk-over, started by the user, the
// agent giving way. Its next answer comes 200 ms after the barge-in
// ends (2900 → 3100–3900), and the user then stays silent for 2 s.
func bargeInScenario() voicetest.Config {
	return voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: 150 * time.Millisecond,
			Greeting: fixtures.Reply{Text: "Hello there", Latency: 200 * time.Millisecond},
			Replies: []fixtures.Reply{
				{Text: "one two three four five", Latency: 300 * time.Millisecond},
				{Text: "okay then", Latency: 200 * time.Millisecond},
			}}),
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("hi"),
			voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
			voicetest.Silence(2 * time.Second),
		},
	}
}

func TestMetricsBargeInIsExact(t *testing.T) {
	res, err := runVirtual(t, bargeInScenario())
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	want := voicetest.TalkOverMetrics{
		Spans:        []voicetest.TalkOver{{Start: ms(2100), End: ms(2250), Turn: 1, By: voicetest.RoleUser, Yielded: voicetest.RoleAgent}},
		Count:        1,
		Time:         ms(150),
		ByUser:       voicetest.TalkOverTotal{Count: 1, Time: ms(150)},
		AgentYielded: 1,
		BargeIns:     []voicetest.BargeIn{{At: ms(2100), Turn: 1, ToQuiet: ms(150), Quiet: true, ToAnswer: ms(1000), Answered: true}},
	}
	if diff := cmp.Diff(want, m.TalkOver); diff != "" {
		t.Errorf("talk-over (-want +got):\n%s", diff)
	}
	wantPauses := voicetest.PauseMetrics{
		Spans: []voicetest.Pause{
			{Start: ms(1400), End: ms(1700), Turn: 1, After: voicetest.RoleUser, Before: voicetest.RoleAgent},
			{Start: ms(2900), End: ms(3100), Turn: 2, After: voicetest.RoleUser, Before: voicetest.RoleAgent},
			// The Silence step: the agent does not re-prompt.
			{Start: ms(3900), End: ms(5900), Turn: 2, After: voicetest.RoleAgent},
		},
		Longest: voicetest.Pause{Start: ms(3900), End: ms(5900), Turn: 2, After: voicetest.RoleAgent},
		DeadAir: ms(2500),
		PerTurn: []voicetest.TurnDuration{{Turn: 1, Duration: ms(300)}, {Turn: 2, Duration: ms(2200)}},
	}
	if diff := cmp.Diff(wantPauses, m.Pauses); diff != "" {
		t.Errorf("pauses (-want +got):\n%s", diff)
	}
	wantTurns := []voicetest.TurnMetrics{
		{Turn: 0, TTFB: ms(200), HasTTFB: true, FirstEvent: ms(200), HasFirstEvent: true, AgentWords: 2},
		{Turn: 1, Latency: ms(300), HasLatency: true, TTFB: ms(300), HasTTFB: true, FirstEvent: ms(300), HasFirstEvent: true,
			DeadAir: ms(300), UserWords: 1, AgentWords: 2},
		{Turn: 2, Latency: ms(200), HasLatency: true, TTFB: ms(200), HasTTFB: true, FirstEvent: ms(200), HasFirstEvent: true,
			DeadAir: ms(2200), UserWords: 2, AgentWords: 2},
	}
	if diff := cmp.Diff(wantTurns, m.Turns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if want := (voicetest.Percentiles{N: 2, Mean: ms(250), P50: ms(250), P90: ms(300), P95: ms(300), P99: ms(300), Max: ms(300)}); m.Latency != want {
		t.Errorf("latency %+v, want %+v", m.Latency, want)
	}
	// Turn 0's first audio counts from the start of the call.
	if want := (voicetest.Percentiles{N: 3, Mean: 233333333, P50: ms(200), P90: ms(300), P95: ms(300), P99: ms(300), Max: ms(300)}); m.TTFB != want || m.FirstEvent != want {
		t.Errorf("TTFB %+v, first event %+v, want %+v", m.TTFB, m.FirstEvent, want)
	}
	// The interrupted reply ("one two", cut off) does not count for the
	// rate: 4 words in the 1.6 s of the other two.
	wantSpeech := voicetest.SpeechMetrics{AgentWords: 6, AgentTurns: 3, AgentWordsPerTurn: 2, AgentWPM: 150, AgentRatedWords: 4, AgentSpeech: ms(1600),
		UserWords: 3, UserTurns: 2, UserWordsPerTurn: 1.5}
	if diff := cmp.Diff(wantSpeech, m.Speech); diff != "" {
		t.Errorf("speech (-want +got):\n%s", diff)
	}
	if m.LateAudio != (voicetest.LateAudio{}) || m.Wire != nil || m.Parts != (voicetest.PartMetrics{}) {
		t.Errorf("late audio %+v, wire %+v, parts %+v: want none from this fake", m.LateAudio, m.Wire, m.Parts)
	}
	// Result.Latency agrees, with the new percentiles.
	if l := res.Latency; l.P90 != ms(300) || l.P99 != ms(300) || l.Max != ms(300) || l.P50 != ms(250) {
		t.Errorf("Result.Latency %+v", l)
	}
}

// TestMetricsAgentTalksOverTheUser: the user speaks first (0–1600 ms) and
// the greeting comes 200 ms in (200–1400): the agent talks over the user
// and stops first. The agent's answer to "are you there" (1600–2800)
// comes before the user has finished asking (1900–2700). Then the user
// stays silent for a second and speaks again: a pause the agent left
// unfilled.
func TestMetricsAgentTalksOverTheUser(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{
			Greeting: fixtures.Reply{Text: "Hello there friend", Latency: 200 * time.Millisecond},
			Replies:  []fixtures.Reply{{Text: "one two", Latency: 300 * time.Millisecond}}}),
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("a b c d"),
			voicetest.AgentTurn(),
			voicetest.UserSays("are you there"),
			voicetest.Silence(time.Second),
			voicetest.UserSays("hello"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	want := voicetest.TalkOverMetrics{
		Spans: []voicetest.TalkOver{
			{Start: ms(200), End: ms(1400), Turn: 1, By: voicetest.RoleAgent, Yielded: voicetest.RoleAgent},
			{Start: ms(1900), End: ms(2700), Turn: 2, By: voicetest.RoleAgent, Yielded: voicetest.RoleAgent},
		},
		Count: 2, Time: ms(2000), ByAgent: voicetest.TalkOverTotal{Count: 2, Time: ms(2000)}, AgentYielded: 2,
	}
	if diff := cmp.Diff(want, m.TalkOver); diff != "" {
		t.Errorf("talk-over (-want +got):\n%s", diff)
	}
	unfilled := voicetest.Pause{Start: ms(2800), End: ms(3800), Turn: 2, After: voicetest.RoleUser, Before: voicetest.RoleUser}
	wantPauses := voicetest.PauseMetrics{Spans: []voicetest.Pause{unfilled}, Longest: unfilled, DeadAir: ms(1000),
		PerTurn: []voicetest.TurnDuration{{Turn: 2, Duration: ms(1000)}}, Unfilled: 1, LongestUnfilled: ms(1000)}
	if diff := cmp.Diff(wantPauses, m.Pauses); diff != "" {
		t.Errorf("pauses (-want +got):\n%s", diff)
	}
	if !unfilled.Unfilled() || (voicetest.Pause{After: voicetest.RoleUser, Before: voicetest.RoleAgent}).Unfilled() {
		t.Error("Pause.Unfilled: a pause after the user is unfilled unless the agent speaks next")
	}
}

// mangleTTS is a test-double TTS that says a number wrong: fixtures'
// fake speech of the text with from replaced by to.
type mangleTTS struct{ from, to string }

func (m mangleTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	req.Text = strings.ReplaceAll(req.Text, m.from, m.to)
	return fixtures.FakeTTS().Synthesize(ctx, req)
}

// stallingAgent answers "A table for 17 at seven." in fake speech whose
// TTS says "70", stalls 300 ms, hands over to "booker" and says
// "Booked.", reporting the parts of its response time. It thinks 400 ms.
func stallingAgent() voicetest.Agent {
	return handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		if err := c.Timings(voicetest.Timings{STT: 100 * time.Millisecond, LLM: 250 * time.Millisecond, TTS: 80 * time.Millisecond}); err != nil {
			return err
		}
		if _, err := c.Tool("check", map[string]any{"party": 2}, func() (any, error) { return map[string]any{"free": true, "at": "19:00"}, nil }); err != nil {
			return err
		}
		if err := c.Say("A table for 17 at seven."); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond)
		if err := c.Handoff("host", "booker"); err != nil {
			return err
		}
		return c.Say("Booked.")
	}, handler.AudioMode(mangleTTS{"17", "70"}, fixtures.FakeSTT()), handler.WithThinkTime(400*time.Millisecond))
}

// TestMetricsSpeechWERPartsAndLateAudio: the agent's own transcript says
// 17, its audio says 70: one substitution in seven words, heard by
// Config.AgentSTT under MeasureAgentWER. Its 300 ms stall mid-reply is
// late audio; the parts it reported are the turn's.
func TestMetricsSpeechWERPartsAndLateAudio(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: stallingAgent(), UserVoice: fixtures.FakeTTS(), AgentSTT: fixtures.FakeSTT(), MeasureAgentWER: true,
		Script: []voicetest.Step{voicetest.UserSays("A table please"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	var agent voicetest.Message
	for _, msg := range res.Transcript {
		if msg.Role == voicetest.RoleAgent {
			agent = msg
		}
	}
	wantHeard := &voicetest.Hearing{Text: "A table for 70 at seven. Booked.", Errors: voicetest.WordErrors{Substitutions: 1, Words: 7}}
	if agent.Text != "A table for 17 at seven. Booked." || !cmp.Equal(agent.Heard, wantHeard) {
		t.Errorf("agent message %q heard %+v, want heard %+v", agent.Text, agent.Heard, wantHeard)
	}
	if w := m.Speech.WER; w == nil || w.Rate != 1.0/7 || w.Messages != 1 || w.Errors != wantHeard.Errors || w.Worst.Text != agent.Text {
		t.Errorf("WER %+v, want 1/7 over one message", w)
	}
	// The user's 3 words took 1.235 s of fake speech; the agent's 7 words
	// from 1.635 s to 4.670 s: 2.735 s of audio and its 300 ms stall (3.730 s to 4.030 s).
	if s := m.Speech; s.AgentWords != 7 || s.AgentSpeech != ms(2735) || s.AgentWPM != 7*float64(time.Minute)/float64(ms(2735)) || s.UserWordsPerTurn != 3 {
		t.Errorf("speech %+v", s)
	}
	if m.LateAudio != (voicetest.LateAudio{Count: 1, Gap: ms(300)}) {
		t.Errorf("late audio %+v, want one stall of 300 ms", m.LateAudio)
	}
	// The stall is dead air too: the caller hears nothing for 300 ms.
	stall := voicetest.Pause{Start: ms(3730), End: ms(4030), Turn: 1, After: voicetest.RoleAgent, Before: voicetest.RoleAgent}
	if p := m.Pauses; len(p.Spans) != 2 || p.Spans[1] != stall || p.DeadAir != ms(700) {
		t.Errorf("pauses %+v, want the 400 ms wait and the stall %+v", p, stall)
	}
	wantParts := &voicetest.Timings{STT: ms(100), LLM: ms(250), TTS: ms(80)}
	if len(m.Turns) != 1 || !cmp.Equal(m.Turns[0].Parts, wantParts) || m.Turns[0].Latency != ms(400) || m.Turns[0].TTFB != ms(400) {
		t.Fatalf("turns %+v", m.Turns)
	}
	if p := m.Parts; p.STT.P50 != ms(100) || p.LLM.Max != ms(250) || p.TTS.N != 1 || p.Tools.N != 0 {
		t.Errorf("parts %+v", p)
	}
	// The tool call is the reply's first event; it comes with the think
	// time, as the audio does.
	if m.Turns[0].FirstEvent != ms(400) {
		t.Errorf("first event %v", m.Turns[0].FirstEvent)
	}
	// The handoff and the tool's result are conversation items, in order.
	err = res.State.Expect().
		NextEvent().IsToolCall("check", map[string]any{"party": 2}).
		NextEvent().IsToolResultOf("check", map[string]any{"free": true}).
		NextEvent().IsMessageContaining(voicetest.RoleAgent, "table for 17").
		NextEvent().IsHandoff("booker").
		NoMoreEvents().
		ContainsToolCallWithResult("check", map[string]any{"party": 2}, map[string]any{"at": "19:00"}).
		ContainsToolResult("check", nil).
		ContainsHandoff("booker").
		Err()
	if err != nil {
		t.Error(err)
	}
	if !strings.Contains(res.TimelineText(), `handoff "booker"`) {
		t.Errorf("the timeline lacks the handoff:\n%s", res.TimelineText())
	}
}

// TestMetricsWERNeedsTheSTT: MeasureAgentWER without AgentSTT is a
// configuration error that says what to set.
func TestMetricsWERNeedsTheSTT(t *testing.T) {
	_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.EchoAgent(), MeasureAgentWER: true})
	if err == nil || !strings.Contains(err.Error(), "MeasureAgentWER needs Config.AgentSTT") {
		t.Errorf("err = %v", err)
	}
}

// TestMetricsWithoutWERLeaveTheAudioAlone: without MeasureAgentWER an
// agent that streams its transcript is not transcribed (no STT call, no
// Heard), as before.
func TestMetricsWithoutWERLeaveTheAudioAlone(t *testing.T) {
	stt := &countingSTT{STT: fixtures.FakeSTT()}
	res, err := runVirtual(t, voicetest.Config{
		Agent: stallingAgent(), UserVoice: fixtures.FakeTTS(), AgentSTT: stt,
		Script: []voicetest.Step{voicetest.UserSays("A table please"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := stt.calls.Load(); n != 0 || res.Metrics.Speech.WER != nil {
		t.Errorf("%d STT calls, WER %+v; want none", n, res.Metrics.Speech.WER)
	}
}

func TestExpectationsOnResultsAndHandoffs(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: stallingAgent(), UserVoice: fixtures.FakeTTS(),
		Script: []voicetest.Step{voicetest.UserSays("A table please"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		x    func(*voicetest.Expectation) *voicetest.Expectation
		want string
	}{
		{"result of another tool", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.Skip(1).NextEvent().IsToolResultOf("book", nil)
		}, `item 1: expected a successful result of tool "book", got tool_result check {"at":"19:00","free":true}`},
		{"result differs", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.Skip(1).NextEvent().IsToolResultOf("check", map[string]any{"free": false})
		}, `item 1: result of tool "check": output {"at":"19:00","free":true} does not contain {"free":false} (first difference at $.free)`},
		{"handoff elsewhere", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.Skip(3).NextEvent().IsHandoff("billing")
		}, `item 3: expected a handoff to "billing", got handoff to "booker"`},
		{"not a handoff", func(x *voicetest.Expectation) *voicetest.Expectation { return x.NextEvent().IsHandoff("") },
			`item 0: expected a handoff, got tool_call check {"party":2}`},
		{"no such handoff", func(x *voicetest.Expectation) *voicetest.Expectation { return x.ContainsHandoff("billing") },
			`no handoff to "billing" (handoffs to "booker")`},
		{"no such result", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.ContainsToolResult("check", map[string]any{"at": "20:00"})
		}, `no result of tool "check" matches: output {"at":"19:00","free":true} does not contain {"at":"20:00"} (first difference at $.at)`},
		{"call with another result", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.ContainsToolCallWithResult("check", map[string]any{"party": 2}, map[string]any{"free": false})
		}, `no call of tool "check" with a matching result: item 0: the call's result (item 1): output`},
		{"call with other arguments", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.ContainsToolCallWithResult("check", map[string]any{"party": 3}, nil)
		}, `no call of tool "check" with a matching result: item 0: arguments {"party":2} do not contain {"party":3}`},
		{"no call", func(x *voicetest.Expectation) *voicetest.Expectation {
			return x.ContainsToolCallWithResult("book", nil, nil)
		}, `no call of tool "book"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.x(res.State.Expect()).Err()
			if !errors.Is(err, voicetest.ErrExpectation) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestMetricsAttrs: the metrics reach the test as attributes with stable
// keys and exact values.
func TestMetricsAttrs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ftb := newFakeTB(t)
		cfg := bargeInScenario()
		cfg.Golden.Disable = true
		res := voicetest.Scenario(ftb, cfg)
		if !res.Success {
			t.Fatalf("errors: %v", ftb.errs)
		}
		want := map[string]string{
			"voicetest.verdict": "pass", "voicetest.turns": "2",
			"voicetest.latency_mean_ms": "250", "voicetest.latency_p50_ms": "250", "voicetest.latency_p90_ms": "300",
			"voicetest.latency_p95_ms": "300", "voicetest.latency_p99_ms": "300", "voicetest.latency_max_ms": "300",
			"voicetest.first_audio_ms": "200",
			"voicetest.ttfb_p50_ms":    "200", "voicetest.ttfb_p95_ms": "300", "voicetest.ttfb_max_ms": "300",
			"voicetest.talk_over_count": "1", "voicetest.talk_over_ms": "150",
			"voicetest.user_talk_over_count": "1", "voicetest.user_talk_over_ms": "150",
			"voicetest.agent_talk_over_count": "0", "voicetest.agent_talk_over_ms": "0",
			"voicetest.agent_yielded_count": "1", "voicetest.user_yielded_count": "0",
			"voicetest.barge_in_quiet_max_ms": "150", "voicetest.barge_in_answer_max_ms": "1000",
			"voicetest.longest_pause_ms": "2000", "voicetest.dead_air_ms": "2500",
			"voicetest.unfilled_gap_count": "0", "voicetest.longest_unfilled_gap_ms": "0",
			"voicetest.agent_wpm": "150", "voicetest.agent_words_per_turn": "2.0", "voicetest.user_words_per_turn": "1.5",
			"voicetest.late_audio_count": "0", "voicetest.late_audio_ms": "0",
			// Gym's numbers: the fake sends each reply's text with its
			// first audio, so Gym's TTFAB is 0 where ours is 200–300 ms;
			// agent turns 800, 550 (cut at 2.25 s) and 800 ms.
			"voicetest.gym_ttfab_mean_ms": "0", "voicetest.gym_ttfab_p50_ms": "0",
			"voicetest.gym_user_turn_mean_ms": "600", "voicetest.gym_user_turn_p50_ms": "600",
			"voicetest.gym_agent_turn_mean_ms": "716", "voicetest.gym_agent_turn_p50_ms": "800",
			"voicetest.gym_user_words": "3", "voicetest.gym_user_words_mean": "1.5", "voicetest.gym_user_words_p50": "1.5",
			"voicetest.gym_agent_words": "6", "voicetest.gym_agent_words_mean": "2.0", "voicetest.gym_agent_words_p50": "2.0",
		}
		if diff := cmp.Diff(want, ftb.attrs); diff != "" {
			t.Errorf("attributes (-want +got):\n%s", diff)
		}
		// Result.Attrs is the same list, in a fixed order.
		var keys []string
		for _, a := range res.Attrs() {
			keys = append(keys, a.Key)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(want)), slices.Sorted(slices.Values(keys))) || keys[0] != "voicetest.verdict" {
			t.Errorf("Attrs keys %v", keys)
		}
	})
}

// TestStateMetricsDuringTheConversation: a Check step reads the metrics
// of the conversation so far.
func TestStateMetricsDuringTheConversation(t *testing.T) {
	cfg := bargeInScenario()
	var seen voicetest.Metrics
	cfg.Script = append(cfg.Script[:3], voicetest.Check(func(st *voicetest.State) error {
		seen = st.Metrics()
		return nil
	}))
	if _, err := runVirtual(t, cfg); err != nil {
		t.Fatal(err)
	}
	if seen.TalkOver.Count != 1 || seen.Latency.N != 1 || seen.Wire != nil {
		t.Errorf("metrics after the barge-in: talk-over %d, latencies %d, wire %v", seen.TalkOver.Count, seen.Latency.N, seen.Wire)
	}
}

func TestCompareWords(t *testing.T) {
	for _, tc := range []struct {
		ref, hyp string
		want     voicetest.WordErrors
	}{
		{"", "", voicetest.WordErrors{}},
		{"A table for two", "a table for 2!", voicetest.WordErrors{Words: 4}},
		{"table for seventeen", "table for seventy", voicetest.WordErrors{Substitutions: 1, Words: 3}},
		{"one two three", "one three", voicetest.WordErrors{Deletions: 1, Words: 3}},
		{"one three", "one two three", voicetest.WordErrors{Insertions: 1, Words: 2}},
		{"", "uh", voicetest.WordErrors{Insertions: 1}},
		{"book it now", "", voicetest.WordErrors{Deletions: 3, Words: 3}},
	} {
		got := voicetest.CompareWords(tc.ref, tc.hyp)
		if got != tc.want {
			t.Errorf("CompareWords(%q, %q) = %+v, want %+v", tc.ref, tc.hyp, got, tc.want)
		}
	}
	if r := (voicetest.WordErrors{Insertions: 1}).Rate(); r != 1 {
		t.Errorf("rate with no reference = %v", r)
	}
	if r := (voicetest.WordErrors{Substitutions: 1, Deletions: 1, Words: 4}).Rate(); r != 0.5 {
		t.Errorf("rate = %v", r)
	}
}

func TestSummarizeDurations(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, ms(i))
	}
	p := voicetest.SummarizeDurations(ds)
	// sorted[ceil(q·99)]: index 90 (91 ms), 95 (96 ms), 99 (100 ms).
	want := voicetest.Percentiles{N: 100, Mean: 50500 * time.Microsecond, P50: 50500 * time.Microsecond, P90: ms(91), P95: ms(96), P99: ms(100), Max: ms(100)}
	if p != want {
		t.Errorf("%+v, want %+v", p, want)
	}
	if (voicetest.SummarizeDurations(nil) != voicetest.Percentiles{}) {
		t.Error("no durations must give the zero Percentiles")
	}
	if d, ok := p.At(90); !ok || d != ms(91) {
		t.Errorf("At(90) = %v, %v", d, ok)
	}
	if _, ok := p.At(42); ok {
		t.Error("At(42) is not a percentile it keeps")
	}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"p99":100000000`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// countingSTT counts the calls of the STT it wraps.
type countingSTT struct {
	voicetest.STT
	calls atomic.Int32
}

func (c *countingSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	c.calls.Add(1)
	return c.STT.Transcribe(ctx, req)
}
