package adaptertest

import (
	"slices"
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
