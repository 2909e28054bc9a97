package livekit

import (
	"context"
	"testing"
	"time"

	"github.com/livekit/media-sdk"
	lkagent "github.com/livekit/protocol/livekit/agent"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A tool event that the agent made before the speech in progress began,
// but that comes after that speech's first audio, is marked
// BeforeSpeech; one made after it is not, nor one without created_at,
// nor one after the turn ended. The speech is never held: its first
// audio is the runner's at once, before the late tool event has come.
func TestLateToolEventMarkedNotHeld(t *testing.T) {
	st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
	c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf}, scrub.New())
	if err != nil {
		t.Fatal(err)
	}
	r := c.recv
	skew := 3 * time.Second // the agent's clock runs behind ours
	stamp := func(at time.Time) *timestamppb.Timestamp { return timestamppb.New(at.Add(-skew)) }
	state := func(at time.Time) *lkagent.AgentSessionEvent {
		return &lkagent.AgentSessionEvent{CreatedAt: stamp(at), Event: &lkagent.AgentSessionEvent_AgentStateChanged_{
			AgentStateChanged: &lkagent.AgentSessionEvent_AgentStateChanged{NewState: lkagent.AgentState_AS_THINKING}}}
	}
	n := 0
	tool := func(created *timestamppb.Timestamp) *lkagent.AgentSessionEvent {
		n++
		id := string(rune('a' + n))
		return &lkagent.AgentSessionEvent{CreatedAt: created, Event: &lkagent.AgentSessionEvent_FunctionToolsExecuted_{FunctionToolsExecuted: &lkagent.AgentSessionEvent_FunctionToolsExecuted{
			FunctionCalls:       []*lkagent.FunctionCall{{CallId: id, Name: "lookup"}},
			FunctionCallOutputs: []*lkagent.FunctionCallOutput{{CallId: id, Name: "lookup", Output: "{}"}},
		}}}
	}
	marks := func(evs []voicetest.AgentEvent) (calls, marked int) {
		for _, ev := range evs {
			if ev.Kind == voicetest.AgentToolCall || ev.Kind == voicetest.AgentToolResult {
				calls++
				if ev.BeforeSpeech {
					marked++
				}
			}
		}
		return calls, marked
	}
	loud := make(media.PCM16Sample, 240)
	for i := range loud {
		loud[i] = 3000
	}
	t0 := time.Now()
	// The agent's state events came 2 ms after it made them.
	r.sessionEvent(state(t0.Add(-50*time.Millisecond)), t0.Add(-48*time.Millisecond))
	// The tool ran at t0; the reply's first audio comes now.
	toolAt := t0
	time.Sleep(20 * time.Millisecond)
	r.onAudio(24000, loud, silencePeak)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	ev, err := c.Recv(ctx)
	cancel()
	if err != nil || ev.Kind != voicetest.AgentAudio {
		t.Fatalf("the speech's first audio was not the runner's at once: %v %v", ev.Kind, err)
	}
	// Its tool event comes 250 ms after that audio.
	late := time.Now().Add(250 * time.Millisecond)
	if calls, marked := marks(r.sessionEvent(tool(stamp(toolAt)), late)); calls != 2 || marked != 2 {
		t.Errorf("a tool event made before the speech and come after it: %d of %d events marked BeforeSpeech, want both", marked, calls)
	}
	// One the agent made during the speech.
	if calls, marked := marks(r.sessionEvent(tool(stamp(time.Now().Add(10*time.Millisecond))), late)); calls != 2 || marked != 0 {
		t.Errorf("a tool event made during the speech: %d of %d marked, want none", marked, calls)
	}
	// One without created_at.
	if calls, marked := marks(r.sessionEvent(tool(nil), late)); calls != 2 || marked != 0 {
		t.Errorf("a tool event without created_at: %d of %d marked, want none", marked, calls)
	}
	// After the turn's end, no speech is in progress.
	c.mu.Lock()
	r.endTurnLocked()
	c.mu.Unlock()
	if calls, marked := marks(r.sessionEvent(tool(stamp(toolAt)), late.Add(time.Millisecond))); calls != 2 || marked != 0 {
		t.Errorf("a tool event after the turn ended: %d of %d marked, want none", marked, calls)
	}
}
