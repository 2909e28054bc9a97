package handler

import (
	"fmt"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Handoff reports that the conversation passes to the agent named to
// (AgentHandoff, a handoff event on the timeline, as LiveKit's agents
// hand a session over), after the outputs already made; from names the
// agent handing over ("" when it has no name). What the handler says
// next is the new agent's: the Func decides what that means.
func (c *Call) Handoff(from, to string) error {
	if to == "" {
		return fmt.Errorf("adapters: Handoff(%q, %q): name the agent that takes over", from, to)
	}
	return c.post(&outReq{kind: outEvent, ev: voicetest.HandoffEvent(from, to)})
}

// Timings reports the parts of the response time the handler measured
// itself for the current turn (AgentTimings): how long its own speech to
// text, model, tools and text to speech took. They show in
// voicetest.Metrics (Parts, TurnMetrics.Parts) and the report; several
// reports in one turn add up.
func (c *Call) Timings(t voicetest.Timings) error {
	if t.STT < 0 || t.LLM < 0 || t.Tools < 0 || t.TTS < 0 {
		return fmt.Errorf("adapters: Timings(%+v): a part is negative", t)
	}
	return c.post(&outReq{kind: outEvent, ev: voicetest.AgentEvent{Kind: voicetest.AgentTimings, Timings: &t}})
}
