package voicetest

import (
	"slices"
	"time"
)

// The order of a timeline.
//
// Events are ordered by time. Events at the same instant are ordered by
// a fixed rule, not by which goroutine recorded its event first: by turn,
// then by type in the order a turn unfolds (eventRank). On virtual time
// the same instant is the same time exactly; on the real clock, events
// within sameInstant of each other (closer than a golden file, in
// milliseconds, can show) count as simultaneous, so that an agent's event
// and the runner's that cross within a millisecond keep one order from
// run to run.

// sameInstant is how close two events on the real clock must be to count
// as simultaneous.
const sameInstant = time.Millisecond

// eventRank is the order of event types at one instant of one turn: what
// ends comes before what begins (the agent's speech stops, then the user
// barges in or presses keys), the user's line before a silence that
// follows it, the user's speech before the agent's
// answer to it, tool calls (and a handoff) before the speech that
// reports them, and the judge last.
var eventRank = map[EventType]int{
	EventUserInterrupt:      0,
	EventAgentStopSpeaking:  1,
	EventJudgeCheckpoint:    2,
	EventUserWait:           2, // the caller waits once the agent stopped
	EventUserWaitLimit:      2,
	EventUserStartSpeaking:  3,
	EventDTMF:               4,
	EventUserStopSpeaking:   5,
	EventUserTranscript:     6,
	EventSilence:            7, // a Silence step begins as the line before it ends
	EventUserHangUp:         8,
	EventToolCall:           9,
	EventToolResult:         10,
	EventHandoff:            11,
	EventAgentStartSpeaking: 12,
	EventData:               13,
	EventAgentLog:           14,
	EventAgentInterrupted:   15,
	EventMaxTurnAudio:       16,
	EventAgentHangUp:        17,
	EventSleep:              18,
	EventVerdict:            19,
}

func rankOf(t EventType) int {
	if r, ok := eventRank[t]; ok {
		return r
	}
	return len(eventRank)
}

// orderTimeline sorts tl in place by time; events within window of the
// first of a run of close events (window 0: at exactly the same time) are
// ordered by turn, then by eventRank, then as they were recorded.
func orderTimeline(tl []Event, window time.Duration) {
	sortEvents(tl)
	for i := 0; i < len(tl); {
		j := i + 1
		for j < len(tl) && tl[j].At-tl[i].At <= window {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(tl[i:j], func(a, b Event) int {
				if a.Turn != b.Turn {
					return a.Turn - b.Turn
				}
				return rankOf(a.Type) - rankOf(b.Type)
			})
		}
		i = j
	}
}
