package adaptertest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

func TestSameTimeline(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rec := []voicetest.Event{
		{At: ms(0), Type: voicetest.EventUserStartSpeaking, Turn: 1},
		{At: ms(300), Type: voicetest.EventUserStopSpeaking, Turn: 1},
		{At: ms(302), Type: voicetest.EventAgentStartSpeaking, Turn: 1},
		{At: ms(303), Type: voicetest.EventData, Turn: 1, Text: "ui", Data: []byte(`{"n":1}`)},
		{At: ms(900), Type: voicetest.EventAgentStopSpeaking, Turn: 1},
	}
	edit := func(f func(evs []voicetest.Event) []voicetest.Event) []voicetest.Event {
		return f(slices.Clone(rec))
	}
	for _, tc := range []struct {
		name string
		rep  []voicetest.Event
		want string // "" for no difference
	}{
		{"same", rec, ""},
		{"a little earlier", edit(func(e []voicetest.Event) []voicetest.Event {
			for i := range e {
				e[i].At -= ms(2)
			}
			return e
		}), ""},
		{"events a millisecond apart swapped", edit(func(e []voicetest.Event) []voicetest.Event {
			e[2], e[3] = e[3], e[2]
			return e
		}), ""},
		{"events far apart swapped", edit(func(e []voicetest.Event) []voicetest.Event {
			e[1].At, e[2].At = ms(320), ms(280)
			return e
		}), "before an event recorded earlier"},
		{"agent events far apart swapped", edit(func(e []voicetest.Event) []voicetest.Event {
			e[2].At, e[3].At = ms(330), ms(310)
			return e
		}), "before an event recorded earlier"},
		{"the user's lines swapped", edit(func(e []voicetest.Event) []voicetest.Event {
			e[0].At, e[1].At = ms(200), ms(180)
			return e
		}), "before an event recorded earlier"},
		{"too late", edit(func(e []voicetest.Event) []voicetest.Event {
			e[4].At += ms(400)
			return e
		}), "replayed at 1.3s, recorded at 900ms"},
		{"other payload", edit(func(e []voicetest.Event) []voicetest.Event {
			e[3].Data = []byte(`{"n":2}`)
			return e
		}), "is not in the replay"},
		{"other turn", edit(func(e []voicetest.Event) []voicetest.Event {
			e[4].Turn = 2
			return e
		}), "is not in the replay"},
		{"missing", rec[:4], "4 events, recorded 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sameTimeline(rec, tc.rep, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected difference: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if err := sameTimeline(rec, rec[:4], []voicetest.EventType{voicetest.EventAgentStopSpeaking}); err != nil {
		t.Errorf("an ignored type still compared: %v", err)
	}
}

// Live, the runner's own steps take time (more under load); on virtual
// time they take none, while the agent's messages replay at their recorded
// times. So a line of the user that started 10 ms after an agent's state
// message live may start before it on replay (TestLiveKitCassette failed
// so under load), but an agent event may not come ahead of the user's.
func TestSameTimelineRunnerAhead(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rec := []voicetest.Event{
		{At: ms(12), Type: voicetest.EventAgentLog, Turn: 0, Text: "agent state: listening"},
		{At: ms(22), Type: voicetest.EventUserStartSpeaking, Turn: 1},
		{At: ms(330), Type: voicetest.EventUserStopSpeaking, Turn: 1},
		{At: ms(340), Type: voicetest.EventAgentStartSpeaking, Turn: 1},
	}
	rep := slices.Clone(rec)
	rep[1].At, rep[2].At = ms(1), ms(301)
	if err := sameTimeline(rec, rep, nil); err != nil {
		t.Errorf("the runner's line replayed 21 ms earlier, ahead of the agent's state: %v", err)
	}
	rep = slices.Clone(rec)
	rep[3].At = ms(320)
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), "before an event recorded earlier") {
		t.Errorf("an agent event replayed before a user line recorded before it: error %v", err)
	}
	rep = slices.Clone(rec)
	rep[1].At, rep[2].At = ms(200), ms(180)
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), "before an event recorded earlier") {
		t.Errorf("the user's stop replayed before the user's start: error %v", err)
	}
}

// An agent event that came at the same instant as the user's start of a
// turn (live, it was seen before the start, in the turn before) may be
// replayed in the turn next to it, but not further, and an event far from
// a turn's start may not change turns (TestSameTimeline's "other turn").
func TestSameTimelineAtATurnsStart(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rec := []voicetest.Event{
		{At: ms(433), Type: voicetest.EventAgentLog, Turn: 0, Text: "agent state: (none) → initializing"},
		{At: ms(433), Type: voicetest.EventUserStartSpeaking, Turn: 1},
		{At: ms(900), Type: voicetest.EventUserStopSpeaking, Turn: 1},
	}
	rep := slices.Clone(rec)
	rep[0], rep[1] = rep[1], rep[0]
	rep[0].At, rep[1].At, rep[1].Turn = ms(431), ms(433), 1
	if err := sameTimeline(rec, rep, nil); err != nil {
		t.Errorf("the event at the turn's start, replayed in the turn: %v", err)
	}
	rep[1].Turn = 2
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), "is not in the replay") {
		t.Errorf("the event replayed two turns on: %v, want it not found", err)
	}
	rep[1].Turn = 1
	rec[0].At, rep[1].At = ms(400), ms(400)
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), "is not in the replay") {
		t.Errorf("an event 33 ms before the turn's start, replayed in the turn: %v, want it not found", err)
	}
}

// timeline parses lines "<ms> <turn> <type> [text]" into events.
func timeline(t *testing.T, text string) []voicetest.Event {
	t.Helper()
	var evs []voicetest.Event
	for line := range strings.Lines(text) {
		f := strings.SplitN(strings.TrimSpace(line), " ", 4)
		if len(f) < 3 {
			continue
		}
		ms, err1 := strconv.Atoi(f[0])
		turn, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad timeline line %q", line)
		}
		e := voicetest.Event{At: time.Duration(ms) * time.Millisecond, Turn: turn, Type: voicetest.EventType(f[2])}
		if len(f) == 4 {
			e.Text = f[3]
		}
		evs = append(evs, e)
	}
	return evs
}

// TestLiveKitCassette's recordings under load (lk8's -count runs, load
// ~30): live, the runner sent each utterance 0.26-0.5 s slower than its
// length and once started its second line 0.65 s after the agent's turn
// ended (on virtual time, at once), while every agent event came as long
// after the caller's step before it as recorded. The check from the start
// of the call failed both (user_stop_speaking 0.50 s off, tolerance 0.36 s;
// user_start_speaking 0.91 s off, tolerance 0.39 s); they are what the
// cassette promises. The same timelines with an agent event moved, or the
// runner slower than live, still fail.
func TestSameTimelineRunnerLateLive(t *testing.T) {
	rec1 := timeline(t, `
		614 1 user_start_speaking
		614 1 agent_log agent state: (none) → initializing
		624 1 agent_log agent state: initializing → listening
		2050 1 user_stop_speaking
		2361 1 agent_log agent state: listening → thinking
		2361 1 agent_log agent state: thinking → speaking
		2363 1 user_transcript a table for two
		2483 1 agent_start_speaking
		4374 1 agent_log agent state: speaking → listening
		4586 1 agent_stop_speaking
		4588 2 user_start_speaking
		5596 2 user_stop_speaking
		5967 2 agent_log agent state: listening → thinking
		5967 2 agent_log agent state: thinking → speaking
		5974 2 user_transcript thanks
		6111 2 agent_start_speaking
		6913 2 agent_log agent state: speaking → listening
		6914 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		6917 2 agent_stop_speaking
		6920 2 verdict pass`)
	rep1 := timeline(t, `
		613 1 user_start_speaking
		613 1 agent_log agent state: (none) → initializing
		623 1 agent_log agent state: initializing → listening
		1983 1 user_stop_speaking
		2295 1 agent_log agent state: listening → thinking
		2295 1 agent_log agent state: thinking → speaking
		2296 1 user_transcript a table for two
		2416 1 agent_start_speaking
		4307 1 agent_log agent state: speaking → listening
		4519 1 agent_stop_speaking
		4519 2 user_start_speaking
		5094 2 user_stop_speaking
		5464 2 agent_log agent state: listening → thinking
		5464 2 agent_log agent state: thinking → speaking
		5471 2 user_transcript thanks
		5608 2 agent_start_speaking
		6410 2 agent_log agent state: speaking → listening
		6411 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		6411 2 verdict pass
		6414 2 agent_stop_speaking`)
	rec2 := timeline(t, `
		756 1 user_start_speaking
		755 1 agent_log agent state: (none) → initializing
		763 1 agent_log agent state: initializing → listening
		2383 1 user_stop_speaking
		3048 1 agent_log agent state: listening → thinking
		3057 1 user_transcript a table for two
		3058 1 agent_log agent state: thinking → speaking
		3260 1 agent_start_speaking
		6025 1 agent_log agent state: speaking → listening
		6224 1 agent_stop_speaking
		6873 2 user_start_speaking
		7069 2 agent_start_speaking
		7521 2 user_stop_speaking
		7943 2 user_transcript thanks
		7942 2 agent_log agent state: listening → thinking
		7942 2 agent_log agent state: thinking → speaking
		8778 2 agent_log agent state: speaking → listening
		8807 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		8807 2 verdict pass
		8809 2 agent_stop_speaking`)
	rep2 := timeline(t, `
		751 1 user_start_speaking
		755 1 agent_log agent state: (none) → initializing
		758 1 agent_log agent state: initializing → listening
		2121 1 user_stop_speaking
		2786 1 agent_log agent state: listening → thinking
		2795 1 user_transcript a table for two
		2796 1 agent_log agent state: thinking → speaking
		2998 1 agent_start_speaking
		5764 1 agent_log agent state: speaking → listening
		5962 1 agent_stop_speaking
		5962 2 user_start_speaking
		6143 2 agent_start_speaking
		6537 2 user_stop_speaking
		6958 2 agent_log agent state: listening → thinking
		6958 2 agent_log agent state: thinking → speaking
		6958 2 user_transcript thanks
		7794 2 agent_log agent state: speaking → listening
		7822 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		7822 2 verdict pass
		7825 2 agent_stop_speaking`)
	// lk9's own -count runs, base, load ~42: the agent's state message
	// during the user's first line, recorded 608 ms after its start,
	// replayed 322 ms after it: live, the frame it followed went out late
	// (the line took 1720 ms live, 1370 ms replayed). The start-of-call
	// check failed it (replayed at 1.609 s, recorded at 1.922 s,
	// tolerance 288 ms).
	rec3 := timeline(t, `
		1313 1 user_start_speaking
		1313 1 agent_log agent state: (none) → initializing
		1921 1 agent_log agent state: initializing → listening
		3033 1 user_stop_speaking
		3799 1 agent_log agent state: listening → thinking
		3806 1 agent_log agent state: thinking → speaking
		3814 1 user_transcript a table for two
		3944 1 agent_start_speaking
		5868 1 agent_log agent state: speaking → listening
		6021 1 agent_stop_speaking
		6022 2 user_start_speaking
		6656 2 user_stop_speaking
		6912 2 user_transcript thanks
		6912 2 agent_log agent state: listening → thinking
		6914 2 agent_log agent state: thinking → speaking
		7051 2 agent_start_speaking
		7750 2 agent_log agent state: speaking → listening
		7750 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		7750 2 verdict pass
		7753 2 agent_stop_speaking`)
	rep3 := timeline(t, `
		1287 1 user_start_speaking
		1313 1 agent_log agent state: (none) → initializing
		1609 1 agent_log agent state: initializing → listening
		2657 1 user_stop_speaking
		3423 1 agent_log agent state: listening → thinking
		3430 1 agent_log agent state: thinking → speaking
		3438 1 user_transcript a table for two
		3567 1 agent_start_speaking
		5491 1 agent_log agent state: speaking → listening
		5645 1 agent_stop_speaking
		5645 2 user_start_speaking
		6220 2 user_stop_speaking
		6475 2 agent_log agent state: listening → thinking
		6476 2 user_transcript thanks
		6478 2 agent_log agent state: thinking → speaking
		6615 2 agent_start_speaking
		7314 2 agent_log agent state: speaking → listening
		7314 2 agent_hang_up the agent left the room (CLIENT_INITIATED)
		7314 2 verdict pass
		7316 2 agent_stop_speaking`)
	for i, c := range []struct{ rec, rep []voicetest.Event }{{rec1, rep1}, {rec2, rep2}, {rec3, rep3}} {
		if err := sameTimeline(c.rec, c.rep, nil); err != nil {
			t.Errorf("recording %d: %v", i+1, err)
		}
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name string
		edit func(rep []voicetest.Event)
		want string
	}{
		// rep1[16] is the agent's "speaking → listening" of turn 2,
		// recorded 1317 ms after the user's end of speech, replayed
		// 1316 ms after it (tolerance 388 ms).
		{"an agent event 500 ms early after its anchor", func(rep []voicetest.Event) { rep[16].At -= ms(500) },
			"agent_log turn 2 \"agent state: speaking → listening\": replayed at 5.91s, recorded at 6.913s: 816ms after the user_stop_speaking of turn 2, recorded 1.317s after it"},
		// rep1[19], the agent's stop of speaking, recorded last but for
		// the verdict.
		{"an agent event 500 ms late after its anchor", func(rep []voicetest.Event) { rep[19].At += ms(500) },
			"agent_stop_speaking turn 2 \"\": replayed at 6.914s, recorded at 6.917s: 1.82s after the user_stop_speaking of turn 2, recorded 1.321s after it"},
		// The user's second line replayed 500 ms later than its
		// recorded start after the user's first line ended (live
		// 2538 ms, replayed 3036 ms): the runner is never slower on
		// virtual time.
		{"the runner slower than live", func(rep []voicetest.Event) {
			for i := 10; i < len(rep); i++ {
				rep[i].At += ms(500)
			}
		}, "user_start_speaking turn 2 \"\": replayed at 5.019s, recorded at 4.588s: 3.036s after the user_stop_speaking of turn 1, recorded 2.538s after it"},
		// The user's second line started 500 ms before the agent's
		// turn ended, which was recorded before it.
		{"the runner far ahead of the agent", func(rep []voicetest.Event) {
			for i := 10; i < len(rep); i++ {
				rep[i].At -= ms(500)
			}
		}, "user_start_speaking turn 2 \"\" replayed at 4.019s, 500ms ahead of an agent event recorded before it"},
	} {
		rep := slices.Clone(rep1)
		tc.edit(rep)
		if err := sameTimeline(rec1, rep, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// An agent event during the user's line followed one of its frames, which
// live went out late by up to what the line took longer live than on
// replay (500 ms here): it may come that much earlier than after the
// line's start, but not more.
func TestSameTimelineDuringALateLine(t *testing.T) {
	rec := timeline(t, `
		0 1 user_start_speaking
		900 1 agent_log agent state: listening
		2000 1 user_stop_speaking`)
	rep := timeline(t, `
		0 1 user_start_speaking
		300 1 agent_log agent state: listening
		1500 1 user_stop_speaking`)
	if err := sameTimeline(rec, rep, nil); err != nil {
		t.Errorf("the agent's event 600 ms early in a line 500 ms late live (tolerance 268 ms): %v", err)
	}
	rep[1].At = 100 * time.Millisecond
	want := "agent_log turn 1 \"agent state: listening\": replayed at 100ms, recorded at 900ms: 100ms after the user_start_speaking of turn 1, recorded 900ms after it"
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the agent's event 800 ms early in a line 500 ms late live: error %v, want one saying %q", err, want)
	}
	rep[1].At = 1200 * time.Millisecond
	if err := sameTimeline(rec, rep, nil); err == nil || !strings.Contains(err.Error(), "replayed at 1.2s, recorded at 900ms") {
		t.Errorf("the agent's event 300 ms late in the line: error %v", err)
	}
}
