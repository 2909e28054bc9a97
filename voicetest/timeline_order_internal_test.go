package voicetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Issue 14, item 4: events at the same instant are ordered by a rule, not
// by which goroutine recorded its event first.
func TestOrderTimelineIsARule(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	// A barge-in and a hang-up, as a remote agent's run records them:
	// events that cross within a millisecond, in every recorded order.
	events := []Event{
		{At: ms(1000), Type: EventAgentStartSpeaking, Turn: 1},
		{At: ms(1800.2), Type: EventUserInterrupt, Turn: 1},
		{At: ms(1800.6), Type: EventAgentStopSpeaking, Turn: 1},
		{At: ms(1800.3), Type: EventUserStartSpeaking, Turn: 2},
		{At: ms(1800.9), Type: EventAgentInterrupted, Turn: 2},
		{At: ms(2500.4), Type: EventSilence, Turn: 2},
		{At: ms(2500), Type: EventUserStopSpeaking, Turn: 2},
		{At: ms(2500.7), Type: EventUserTranscript, Turn: 2},
		{At: ms(2800.1), Type: EventAgentStartSpeaking, Turn: 2},
		{At: ms(2800), Type: EventData, Turn: 2},
		{At: ms(3600.4), Type: EventAgentHangUp, Turn: 2},
		{At: ms(3600), Type: EventAgentStopSpeaking, Turn: 2},
	}
	want := []EventType{
		EventAgentStartSpeaking,
		EventUserInterrupt, EventAgentStopSpeaking, EventUserStartSpeaking, EventAgentInterrupted,
		// A Silence step after the user's line begins as the line ends
		// (found in CI: a remote run recorded them 0.4 ms apart).
		EventUserStopSpeaking, EventUserTranscript, EventSilence,
		EventAgentStartSpeaking, EventData,
		EventAgentStopSpeaking, EventAgentHangUp,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		tl := slices.Clone(events)
		rng.Shuffle(len(tl), func(i, j int) { tl[i], tl[j] = tl[j], tl[i] })
		orderTimeline(tl, sameInstant)
		var got []EventType
		for _, e := range tl {
			got = append(got, e.Type)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	// On virtual time only exact ties are simultaneous: 1 ns apart keeps
	// the order of time.
	tl := []Event{{At: ms(5) + 1, Type: EventUserInterrupt, Turn: 1}, {At: ms(5), Type: EventAgentStopSpeaking, Turn: 1}, {At: ms(5), Type: EventVerdict, Turn: 1}, {At: ms(5), Type: EventAgentHangUp, Turn: 1}}
	orderTimeline(tl, 0)
	if got := []EventType{tl[0].Type, tl[1].Type, tl[2].Type, tl[3].Type}; !slices.Equal(got, []EventType{EventAgentStopSpeaking, EventAgentHangUp, EventVerdict, EventUserInterrupt}) {
		t.Errorf("virtual order %v", got)
	}
}
