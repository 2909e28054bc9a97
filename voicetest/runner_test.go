package voicetest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// runVirtual runs cfg with Run inside a synctest bubble.
func runVirtual(t *testing.T, cfg voicetest.Config) (res *voicetest.Result, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		res, err = voicetest.Run(t.Context(), cfg)
	})
	return res, err
}

func TestScriptedTimelineIsExact(t *testing.T) {
	tts := &toneTTS{}
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.ScriptedAgent(
			fixtures.Reply{Text: "Hi how are you", Latency: 300 * time.Millisecond},
			fixtures.Reply{Text: "Great", Latency: 500 * time.Millisecond},
		),
		UserVoice: tts,
		Script: []voicetest.Step{
			voicetest.UserSays("Hello there"),
			voicetest.AgentTurn(),
			voicetest.UserSays("I am fine thanks"),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Success || res.Status != voicetest.StatusPass {
		t.Fatalf("Success = %v, Status = %v", res.Success, res.Status)
	}
	want := `      0ms turn 1 user_start_speaking
    800ms turn 1 user_stop_speaking
   1100ms turn 1 agent_start_speaking latency=300ms
   2700ms turn 1 agent_stop_speaking
   2700ms turn 2 user_start_speaking
   4300ms turn 2 user_stop_speaking
   4800ms turn 2 agent_start_speaking latency=500ms
   5200ms turn 2 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	wantTr := "user: Hello there\nagent: Hi how are you\nuser: I am fine thanks\nagent: Great\n"
	if got := res.TranscriptText(); got != wantTr {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, wantTr)
	}
	l := res.Latency
	if len(l.PerTurn) != 2 || l.PerTurn[0] != ms(300) || l.PerTurn[1] != ms(500) {
		t.Errorf("PerTurn = %v, want [300ms 500ms]", l.PerTurn)
	}
	if l.Mean != ms(400) || l.P50 != ms(400) || l.P95 != ms(500) || l.TTFB != ms(1100) {
		t.Errorf("Latency = %+v, want mean 400ms, p50 400ms, p95 500ms, ttfb 1.1s", l)
	}
	if res.Duration != ms(5200) || res.Turns != 2 {
		t.Errorf("Duration = %v, Turns = %d; want 5.2s, 2", res.Duration, res.Turns)
	}
	if n := tts.calls.Load(); n != 2 {
		t.Errorf("TTS called %d times, want 2", n)
	}
	segs := res.Recording.Segments
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4", len(segs))
	}
	if segs[1].Role != voicetest.RoleAgent || segs[1].AudioDuration() != ms(1600) || segs[1].Start != ms(1100) {
		t.Errorf("agent segment = %v %v at %v, want agent 1.6s at 1.1s", segs[1].Role, segs[1].AudioDuration(), segs[1].Start)
	}
	if mixed := res.Recording.Mixed(); mixed.Duration() != ms(5200) {
		t.Errorf("mixed recording lasts %v, want 5.2s", mixed.Duration())
	}
}

func TestLatencyPercentiles(t *testing.T) {
	for _, tc := range []struct {
		in            []int
		p50, p95, avg time.Duration
	}{
		{[]int{100}, ms(100), ms(100), ms(100)},
		{[]int{300, 100}, ms(200), ms(300), ms(200)},
		{[]int{500, 100, 300}, ms(300), ms(500), ms(300)},
		// n = 20: ceil(0.95*19) = 19 → the largest; median of 10 and 11.
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 10500 * time.Microsecond, ms(20), 10500 * time.Microsecond},
		// n = 21: ceil(0.95*20) = 19 → the 20th smallest.
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, ms(11), ms(20), ms(11)},
	} {
		var l voicetest.Latency
		for _, v := range tc.in {
			l.PerTurn = append(l.PerTurn, ms(v))
		}
		l.Summarize()
		if l.P50 != tc.p50 || l.P95 != tc.p95 || l.Mean != tc.avg {
			t.Errorf("Summarize(%v) = p50 %v p95 %v mean %v; want %v %v %v", tc.in, l.P50, l.P95, l.Mean, tc.p50, tc.p95, tc.avg)
		}
	}
}
