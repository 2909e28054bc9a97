package handler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// booking is a small handler agent driven end to end through the runner.
func booking(ctx context.Context, ev handler.Event, c *handler.Call) error {
	switch ev := ev.(type) {
	case handler.StartEvent:
		return c.Say("Hello, how can I help?")
	case handler.TextEvent:
		if strings.Contains(strings.ToLower(ev.Text), "table") {
			if _, err := c.Tool("book_table", map[string]any{"request": ev.Text}, func() (any, error) {
				time.Sleep(300 * time.Millisecond)
				return map[string]string{"status": "booked"}, nil
			}); err != nil {
				return err
			}
			return c.Say("Your table is booked.")
		}
		return c.Say("Sorry, I did not get that.")
	case handler.TimeoutEvent:
		return c.Say("Are you still there?")
	case handler.DTMFEvent:
		return c.Say("You pressed " + ev.Digits + ".")
	}
	return nil
}

func checkText(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got:\n%s\nwant:\n%s", what, got, want)
	}
}

// TestHandlerScenarioText runs a text-mode handler agent through
// voicetest.Scenario, on virtual time: think time, a tool call, an
// inactivity timeout during a Sleep step, and DTMF.
func TestHandlerScenarioText(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: handler.New(booking, handler.WithThinkTime(200*time.Millisecond), handler.WithInactivityTimeout(4*time.Second)),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
			voicetest.Sleep(5 * time.Second),
			voicetest.AgentTurn(),
			voicetest.DTMF("1#"),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	checkText(t, "transcript", res.TranscriptText(), `agent: Hello, how can I help?
user: A table for two at seven, please.
agent: Your table is booked.
agent: Are you still there?
agent: You pressed 1#.
`)
	checkText(t, "timeline", res.TimelineText(), `    200ms turn 0 agent_start_speaking
   2200ms turn 0 agent_stop_speaking
   2200ms turn 1 user_start_speaking
   5000ms turn 1 user_stop_speaking
   5200ms turn 1 tool_call book_table {"request":"A table for two at seven, please."}
   5500ms turn 1 tool_result book_table {"status":"booked"}
   5500ms turn 1 agent_start_speaking latency=500ms
   7100ms turn 1 agent_stop_speaking
   7100ms turn 1 sleep duration=5000ms
  11300ms turn 1 agent_start_speaking
  12900ms turn 1 agent_stop_speaking
  12900ms turn 1 dtmf "1#"
  13100ms turn 1 agent_start_speaking
  14300ms turn 1 agent_stop_speaking
`)
}

// TestHandlerScenarioAudio runs an audio-mode handler agent through
// voicetest.Scenario with the fake speech pair: the user's lines are
// synthesised, sent as 20 ms frames, transcribed by the agent's fake STT;
// the agent's replies stream back as audio with per-word transcripts, and
// the user barges in after two words.
func TestHandlerScenarioAudio(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     handler.New(booking, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())),
		UserVoice: fixtures.FakeTTS(),
		Rate:      pcm.Rate16k,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
			voicetest.UserSays("Is there parking?"),
			voicetest.Interrupt("Wait, hold on.", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	checkText(t, "transcript", res.TranscriptText(), `agent: Hello, how can I help?
user: A table for two at seven, please.
agent: Your table is booked.
user: Is there parking?
agent: Sorry, I
user: Wait, hold on.
agent: Sorry, I did not get that.
`)
	tl := res.TimelineText()
	for _, want := range []string{
		"   8819ms turn 2 user_interrupt \"Wait, hold on.\"\n",
		"   8819ms turn 3 agent_interrupted\n",
		"  10054ms turn 3 user_transcript \"Wait, hold on.\"\n",
	} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q:\n%s", want, tl)
		}
	}
	if res.Capabilities.Adapter != "handler" || !res.Capabilities.Audio {
		t.Errorf("capabilities %+v", res.Capabilities)
	}
}

// TestHandlerPlayKeepsNoCallerBuffer: Play copies the audio it is given,
// so a handler may refill its buffer once Play returns. The runner keeps
// the agent's frames as they came in the Recording (Segment.Audio lays
// them out on demand): frames that were views of the caller's buffer
// would all read as the last audio written there.
func TestHandlerPlayKeepsNoCallerBuffer(t *testing.T) {
	const rate = pcm.Rate16k
	buf := make([]int16, rate/2) // 500 ms, refilled for each Play
	play := func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.StartEvent); !ok {
			return nil
		}
		for _, v := range []int16{1000, 2000} {
			for i := range buf {
				buf[i] = v
			}
			if err := c.Play(pcm.Chunk{Rate: rate, Samples: buf}); err != nil {
				return err
			}
		}
		for i := range buf {
			buf[i] = -1 // after the last Play: nothing may read it any more
		}
		return nil
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent:  handler.New(play, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())),
			Rate:   rate,
			Script: []voicetest.Step{voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		var audio []int16
		for _, s := range res.Recording.Segments {
			if s.Role == voicetest.RoleAgent {
				audio = append(audio, s.Audio().Samples...)
			}
		}
		if len(audio) != 2*len(buf) {
			t.Fatalf("%d samples of agent audio recorded, want %d", len(audio), 2*len(buf))
		}
		for i, v := range audio {
			if want := int16(1000 * (1 + i/len(buf))); v != want {
				t.Fatalf("sample %d of the agent's audio is %d, want %d: the recording reads the handler's reused buffer", i, v, want)
			}
		}
	})
}
