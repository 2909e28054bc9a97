package voicetest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Proceed with callbacks: after each turn the caller moves somewhere
// noisier, and the loop stops once the agent has booked.
func ExampleProceed_callbacks() {
	agent := fixtures.Fake(fixtures.FakeConfig{TextOnly: true, Burst: true, Replies: []fixtures.Reply{
		{Text: "For how many?"}, {Text: "Which day?"}, {Text: "Booked for Friday."}, {Text: "Anything else?"},
	}})
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		return voicetest.Utterance{Text: fmt.Sprintf("answer %d", st.Turn()+1)}, nil
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, User: user, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.Proceed(0,
			voicetest.OnTurn(func(ctx context.Context, c *voicetest.Control) error {
				c.SetEffects(pcm.Street().Effect(20-5*float64(c.State().Turn()), 1))
				return nil
			}),
			voicetest.Until(func(st *voicetest.State) bool { return strings.HasPrefix(st.LastAgentText(), "Booked") }),
		)},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Turns, "turns; last:", res.State.LastAgentText())
	// Output: 3 turns; last: Booked for Friday.
}

// A custom step reads the conversation and ends the scenario with a
// verdict and a reason; Inject starts the conversation in the middle.
func ExampleDo() {
	agent := fixtures.Fake(fixtures.FakeConfig{TextOnly: true, Burst: true, Replies: []fixtures.Reply{{Text: "Booked for Friday at seven."}}})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{
			voicetest.Inject(voicetest.RoleUser, "A table for two, please."),
			voicetest.Inject(voicetest.RoleAgent, "Which day and time?"),
			voicetest.UserSays("Friday at seven."),
			voicetest.AgentTurn(),
			voicetest.Do("booked?", func(ctx context.Context, c *voicetest.Control) error {
				if strings.Contains(c.State().LastAgentText(), "Booked") {
					c.Succeed("the agent booked after the injected start")
				} else {
					c.Fail("no booking")
				}
				return nil
			}),
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(res.TranscriptText())
	fmt.Println(res.Success, res.Reasoning)
	// Output:
	// user: A table for two, please.
	// agent: Which day and time?
	// user: Friday at seven.
	// agent: Booked for Friday at seven.
	// true the agent booked after the injected start
}

// UserAudio plays recorded speech: raw µ-law bytes from a phone line,
// with the text they are known to say.
func ExampleUserAudio() {
	ulaw := pcm.EncodeMulaw(nil, fixtures.WordTones("hello there", pcm.Rate8k).Samples)
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{{Text: "Hi!"}}}), Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.UserAudio(voicetest.MuLawAudio(ulaw).Says("Hello there.")), voicetest.AgentTurn()},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(res.TranscriptText())
	fmt.Println(res.Recording.Segments[0].AudioDuration())
	// Output:
	// user: Hello there.
	// agent: Hi!
	// 800ms
}
