package voicetest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue #15, items 10 and 11: a peer that keeps sending, but not speech,
// must not keep an agent turn open forever; nor one that speaks text
// forever; and every scenario has an overall bound.

// ticker is a Recv step: an agent log line every d, until the conn closes.
func ticker(d time.Duration, adapter string) func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
	return func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		if err := sleepOrClose(ctx, closed, d, adapter); err != nil {
			return voicetest.AgentEvent{}, err
		}
		return voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "still here"}, nil
	}
}

// audioNow is a Recv step: d of agent audio at once.
func audioNow(d time.Duration) func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
	return func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		return voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(24000, d)}, nil
	}
}

// word is a Recv step: one word of text-only speech (400 ms of it) after d.
func word(d time.Duration, adapter string) func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
	return func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		if err := sleepOrClose(ctx, closed, d, adapter); err != nil {
			return voicetest.AgentEvent{}, err
		}
		return voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "word ", Speech: 400 * time.Millisecond}, nil
	}
}

// Item 10: a log line every 200 ms after the agent's reply. Before, each
// line pushed the end of the turn (tail silence, the gap bound of an
// adapter that marks turn ends, ExpectHangUp's wait) 200 ms further, so
// the turn lasted until the runner's event bound: 100 000 lines, 5.6
// hours of virtual time, then a flood error.
func TestLogLinesDoNotHoldTheTurnOpen(t *testing.T) {
	const name = "chatty-logger"
	for _, tc := range []struct {
		name    string
		turnEnd bool
		script  []voicetest.Step
		phase   voicetest.Phase // "" for success
		within  time.Duration   // the run's virtual length, at most
	}{
		// 1 s of reply plays, then 600 ms of tail silence end the turn.
		{"tail silence", false, []voicetest.Step{voicetest.AgentTurn()}, "", 2 * time.Second},
		// No turn end comes: FirstChunk (5 s) after the reply, it is a
		// timeout.
		{"turn end never comes", true, []voicetest.Step{voicetest.AgentTurn()}, voicetest.PhaseTurn, 7 * time.Second},
		// The agent does not hang up: FirstChunk after its reply.
		{"expect hang-up", false, []voicetest.Step{voicetest.AgentTurn(), voicetest.ExpectHangUp()}, voicetest.PhaseHangUp, 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &faultAgent{name: name, virtual: true, turnEnd: tc.turnEnd, recv: script(audioNow(time.Second), ticker(200*time.Millisecond, name))}
			res, took, err := runBubble(t, voicetest.Config{Agent: agent, Script: tc.script,
				Timeouts: voicetest.Timeouts{FirstChunk: 5 * time.Second}})
			var te *voicetest.TimeoutError
			switch {
			case tc.phase == "" && err != nil:
				t.Errorf("Run after %v: %v", took, err)
			case tc.phase != "" && (!errors.As(err, &te) || te.Phase != tc.phase):
				t.Errorf("Run after %v: %v, want a timeout in phase %q", took, err, tc.phase)
			}
			if took > tc.within {
				t.Errorf("the run lasted %v of virtual time, want at most %v: the log lines held the turn open", took, tc.within)
			}
			if res != nil && len(res.Transcript) == 0 {
				t.Error("the agent's reply was not recorded")
			}
		})
	}
}

// Item 11: MaxTurnAudio counts text-only speech. A text agent that says
// one word after another and never ends its turn had its turn cut only by
// the runner's event bound (100 000 words, 11 hours of speech). Its turn
// now ends after MaxTurnAudio of speech, with a max_turn_audio event.
func TestMaxTurnAudioCountsTextSpeech(t *testing.T) {
	const name = "endless-text"
	agent := &faultAgent{name: name, virtual: true, turnEnd: true, recv: word(400*time.Millisecond, name)}
	res, took, err := runBubble(t, voicetest.Config{Agent: agent, Script: []voicetest.Step{voicetest.AgentTurn()},
		Timeouts: voicetest.Timeouts{MaxTurnAudio: 10 * time.Second}})
	if err != nil {
		t.Fatalf("Run after %v: %v", took, err)
	}
	if took > 15*time.Second {
		t.Errorf("the run lasted %v of virtual time: MaxTurnAudio (10s) of text speech did not end the turn", took)
	}
	found := false
	for _, e := range res.Timeline {
		found = found || e.Type == voicetest.EventMaxTurnAudio
	}
	if !found {
		t.Errorf("no max_turn_audio event in the timeline:\n%s", res.TimelineText())
	}
}

// Item 11: every scenario has an overall bound. An agent that talks text
// forever while the script waits for it to hang up (FirstChunk raised to
// an hour) ran until the runner's event bound, 11 hours of virtual time,
// and its recording could not be saved. It now fails at
// Timeouts.MaxDuration (10 minutes by default) with a timeout naming it,
// and its recording saves.
func TestScenarioHasAnOverallBound(t *testing.T) {
	t.Parallel()
	const name = "endless-talker"
	agent := &faultAgent{name: name, virtual: true, recv: word(400*time.Millisecond, name)}
	res, took, err := runBubble(t, voicetest.Config{Agent: agent, Script: []voicetest.Step{voicetest.ExpectHangUp()},
		Timeouts: voicetest.Timeouts{FirstChunk: time.Hour}})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseScenario || te.Timeout != voicetest.DefaultMaxDuration {
		t.Fatalf("Run after %v: %v, want a timeout in phase %q after %v", took, err, voicetest.PhaseScenario, voicetest.DefaultMaxDuration)
	}
	if !strings.Contains(err.Error(), "Config.Timeouts.MaxDuration") {
		t.Errorf("the error does not say how to raise the bound: %v", err)
	}
	if took > voicetest.DefaultMaxDuration+time.Minute {
		t.Errorf("the run lasted %v of virtual time, want about %v", took, voicetest.DefaultMaxDuration)
	}
	if err := res.Save(t.TempDir()); err != nil {
		t.Errorf("saving the result: %v", err)
	}
}

// Issue #15 (found merging items 1-4): the runner bounded the events of
// one turn (100 000) but not of a scenario, so a flood of log lines
// spread over turns grew the timeline and the test's log without bound:
// ten turns of 20 000 log lines each kept 200 000 timeline events and
// logged 200 000 lines. The timeline keeps at most 10 000 such events per
// scenario and the log at most 1000 of the agent's lines; the rest are
// counted, and reported as not kept. The test sends ten turns of 3000
// lines (it sent 20 000 a turn: 0.7 s of the binary's sequential time for
// the same checks): 30 000 in all, three times the timeline's bound and
// thirty times the log's, each turn far under the per-turn bound, so a
// runner that bounds only turns still keeps and logs all of them.
func TestSideEventsAcrossTurnsAreBounded(t *testing.T) {
	const name = "log-flood"
	const perTurn, turns = 3_000, 10
	var n atomic.Int64
	agent := &faultAgent{name: name, virtual: true, turnEnd: true, recv: func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		switch i := n.Add(1) - 1; {
		case i >= (perTurn+2)*turns:
			return waitOrClose(ctx, closed, name)
		case i%(perTurn+2) == 0:
			return voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(24000, 200*time.Millisecond)}, nil
		case i%(perTurn+2) == perTurn+1:
			return voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}, nil
		}
		return voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "debug: still here"}, nil
	}}
	var lines atomic.Int64
	var last atomic.Value
	script := make([]voicetest.Step, turns)
	for i := range script {
		script[i] = voicetest.AgentTurn()
	}
	res, took, err := runBubble(t, voicetest.Config{Agent: agent, Script: script, Pacing: voicetest.PaceFast,
		Logf: func(format string, args ...any) { lines.Add(1); last.Store(fmt.Sprintf(format, args...)) }})
	if err != nil {
		t.Fatalf("Run after %v: %v", took, err)
	}
	logs := 0
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventAgentLog {
			logs++
		}
	}
	t.Logf("%d log lines sent; the timeline kept %d, %d not kept; %d lines logged", perTurn*turns, logs, res.EventsNotKept, lines.Load())
	if logs > 10_000 || logs+res.EventsNotKept != perTurn*turns {
		t.Errorf("the timeline kept %d of the %d log lines and counted %d not kept: want at most 10000 kept and the rest counted", logs, perTurn*turns, res.EventsNotKept)
	}
	if lines.Load() > 1_100 {
		t.Errorf("%d lines logged, want at most about 1000", lines.Load())
	}
	if msg, _ := last.Load().(string); !strings.Contains(msg, fmt.Sprintf("%d agent events not kept", res.EventsNotKept)) {
		t.Errorf("the last log line does not report the events not kept: %q", msg)
	}
}
