package judges_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
)

// slowAgent answers its first question after 400 ms and its second after
// 1.9 s (400 ms and 1.5 s of silence while it looks the answer up);
// voicetest.Run gives it a virtual clock, so the timings are exact and
// cost no wall time.
func slowAgent() voicetest.Agent {
	n := 0
	return handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		n++
		if n == 2 {
			if err := c.Silence(1500 * time.Millisecond); err != nil {
				return err
			}
			return c.Say("We open at noon.")
		}
		return c.Say("Hello, how can I help?")
	}, handler.WithThinkTime(400*time.Millisecond))
}

func slowState() *voicetest.State {
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: slowAgent(),
		Script: []voicetest.Step{
			voicetest.UserSays("Hi."), voicetest.AgentTurn(),
			voicetest.UserSays("When do you open?"), voicetest.AgentTurn(),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	return res.State
}

// Judges over the conversation-quality metrics gate a suite on how the
// call sounded, with no LLM: here the median reply is within budget, but
// the slowest reply and the longest silence are not.
func ExampleLatencyUnder() {
	st := slowState()
	j := judges.All(judges.LatencyUnder(50, 1500*time.Millisecond), judges.LatencyUnder(100, time.Second), judges.MaxPause(time.Second))
	v, err := j.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range v.Criteria {
		fmt.Printf("%s: %s\n  %s\n", c.Status, c.Criterion, c.Reasoning)
	}
	// Output:
	// pass: p50 agent response latency is at most 1500ms
	//   p50 1150ms over 2 replies (p50 1150ms, max 1900ms in turn 2)
	// fail: the slowest agent response latency is at most 1000ms
	//   the slowest 1900ms over 2 replies (p50 1150ms, max 1900ms in turn 2), over the 1000ms budget
	// fail: no pause in the conversation lasts more than 1000ms
	//   longest pause 1900ms at 4400ms in turn 2, after the user (2 pauses, 2300ms of dead air), over 1000ms
}

// RenderTimeline is what an LLM judge WithTimeline sees of the call.
func ExampleRenderTimeline() {
	fmt.Print(judges.RenderTimeline(slowState(), 0))
	// Output:
	// [turn 1] 0.00s–0.40s user speaks: "Hi."
	// [turn 1] 0.40s–0.80s silence of 0.40s: the user waits for the agent
	// [turn 1] 0.80s–2.80s agent speaks: "Hello, how can I help?" (0.40s after the user stopped)
	// [turn 2] 2.80s–4.40s user speaks: "When do you open?"
	// [turn 2] 4.40s–6.30s silence of 1.90s: the user waits for the agent
	// [turn 2] 6.30s–7.90s agent speaks: "We open at noon." (1.90s after the user stopped)
	// Summary:
	// - response latency over 2 replies: median 1.15s, p90 1.90s, slowest 1.90s
	// - both spoke at once 0 times for 0.00s in all (the user over the agent 0, the agent over the user 0)
	// - longest silence 1.90s; 2.30s of silence in all; 0 times the user stopped and the agent did not answer
	// - the agent spoke 150 words a minute
}
