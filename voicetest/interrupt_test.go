package voicetest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func interruptReplies() []fixtures.Reply {
	return []fixtures.Reply{
		{Text: "one two three four five", Latency: 300 * time.Millisecond},
		{Text: "okay", Latency: 200 * time.Millisecond},
	}
}

func TestInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		agent    fixtures.FakeConfig
		when     voicetest.InterruptWhen
		wpm      int
		timeline string
		said     string
		reply    string
		resp     time.Duration
	}{
		{
			name:  "native cancel after words from transcripts",
			agent: fixtures.FakeConfig{NativeInterrupt: true, StopLatency: 150 * time.Millisecond},
			when:  voicetest.AfterWords(2),
			timeline: `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
   1100ms turn 1 user_interrupt "stop please"
   1100ms turn 1 agent_stop_speaking
   1100ms turn 2 user_start_speaking
   1250ms turn 2 agent_interrupted latency=150ms
   1900ms turn 2 user_stop_speaking
   2100ms turn 2 agent_start_speaking latency=200ms
   2500ms turn 2 agent_stop_speaking
`,
			said: "one two",
			resp: 150 * time.Millisecond,
		},
		{
			name:  "overlapping audio after words from transcripts",
			agent: fixtures.FakeConfig{BargeIn: true, StopLatency: 150 * time.Millisecond},
			when:  voicetest.AfterWords(2),
			timeline: `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
   1100ms turn 1 user_interrupt "stop please"
   1100ms turn 2 user_start_speaking
   1250ms turn 1 agent_stop_speaking
   1250ms turn 2 agent_interrupted latency=150ms
   1900ms turn 2 user_stop_speaking
   2100ms turn 2 agent_start_speaking latency=200ms
   2500ms turn 2 agent_stop_speaking
`,
			said: "one two",
			resp: 150 * time.Millisecond,
		},
		{
			name:  "overlapping audio after words estimated from speech time",
			agent: fixtures.FakeConfig{BargeIn: true, NoTranscripts: true, NoTurnEnd: true, StopLatency: 100 * time.Millisecond},
			when:  voicetest.AfterWords(3),
			wpm:   120, // 500 ms a word: 3 words after 1.5 s of speech
			timeline: `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
   2200ms turn 1 user_interrupt "stop please"
   2200ms turn 2 user_start_speaking
   2300ms turn 1 agent_stop_speaking
   2300ms turn 2 agent_interrupted latency=100ms
   3000ms turn 2 user_stop_speaking
   3200ms turn 2 agent_start_speaking latency=200ms
   3600ms turn 2 agent_stop_speaking
`,
			said:  "(audio only)",
			reply: "(audio only)",
			resp:  100 * time.Millisecond,
		},
		{
			name:  "native cancel a set time after speech starts",
			agent: fixtures.FakeConfig{NativeInterrupt: true},
			when:  voicetest.After(500 * time.Millisecond),
			timeline: `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
   1200ms turn 1 user_interrupt "stop please"
   1200ms turn 1 agent_stop_speaking
   1200ms turn 2 user_start_speaking
   1200ms turn 2 agent_interrupted
   2000ms turn 2 user_stop_speaking
   2200ms turn 2 agent_start_speaking latency=200ms
   2600ms turn 2 agent_stop_speaking
`,
			said: "one two",
		},
		{
			name:  "native cancel as speech starts",
			agent: fixtures.FakeConfig{NativeInterrupt: true, StopLatency: 50 * time.Millisecond},
			when:  voicetest.AfterSpeechStarts(),
			timeline: `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 user_interrupt "stop please"
    700ms turn 1 agent_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
    700ms turn 2 user_start_speaking
    750ms turn 2 agent_interrupted latency=50ms
   1500ms turn 2 user_stop_speaking
   1700ms turn 2 agent_start_speaking latency=200ms
   2100ms turn 2 agent_stop_speaking
`,
			said: "one",
			resp: 50 * time.Millisecond,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reply == "" {
				tc.reply = "okay"
			}
			cfg := tc.agent
			cfg.Replies = interruptReplies()
			res, err := runVirtual(t, voicetest.Config{
				Agent: fixtures.Fake(cfg), UserVoice: &toneTTS{}, WordsPerMinute: tc.wpm,
				Script: []voicetest.Step{
					voicetest.UserSays("hi"),
					voicetest.Interrupt("stop please", tc.when),
					voicetest.AgentTurn(),
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TimelineText(); got != tc.timeline {
				t.Errorf("timeline:\n%s\nwant:\n%s", got, tc.timeline)
			}
			tr := res.Transcript
			if len(tr) != 4 || !tr[1].Interrupted || tr[1].DisplayText() != tc.said || tr[3].DisplayText() != tc.reply {
				t.Errorf("transcript %+v, want the agent's first message %q marked interrupted", tr, tc.said)
			}
			if got := res.Latency.InterruptResponse; len(got) != 1 || got[0] != tc.resp {
				t.Errorf("InterruptResponse = %v, want [%v]", got, tc.resp)
			}
			if got := res.Latency.PerTurn; len(got) != 2 || got[1] != ms(200) {
				t.Errorf("PerTurn = %v, want the reply to the barge-in at 200ms", got)
			}
		})
	}
}

func TestInterruptOverlapIsMixed(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.BargeInAgent(interruptReplies()...),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.Interrupt("stop please", voicetest.AfterWords(2)), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Agent 700..1100 ms (no barge-in yet) then user and agent together
	// until the agent stopped at 1100+StopLatency (0 here).
	var user, agent voicetest.Segment
	for _, s := range res.Recording.Segments {
		if s.Turn == 2 && s.Role == voicetest.RoleUser {
			user = s
		}
		if s.Turn == 1 && s.Role == voicetest.RoleAgent {
			agent = s
		}
	}
	if user.Start != ms(1100) || agent.Start != ms(700) || agent.End != ms(1100) {
		t.Fatalf("user segment at %v, agent %v..%v", user.Start, agent.Start, agent.End)
	}
	mixed := res.Recording.Mixed()
	if mixed.Duration() != res.Duration {
		t.Errorf("mixed lasts %v, conversation %v", mixed.Duration(), res.Duration)
	}
}

func TestInterruptErrors(t *testing.T) {
	t.Run("agent never speaks", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.SilentAgent(), UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.Interrupt("hello?", voicetest.AfterSpeechStarts())},
		})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseWaitSpeech || te.Timeout != voicetest.DefaultWaitForSpeech {
			t.Fatalf("err = %v, want a wait-for-speech timeout", err)
		}
	})
	t.Run("answer shorter than the words", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.InterruptibleAgent(interruptReplies()...), UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.Interrupt("hello?", voicetest.AfterWords(9))},
		})
		if err == nil || !strings.Contains(err.Error(), "finished its turn after 5 words, before the 9") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, s := range []voicetest.Step{
			voicetest.Interrupt("x", voicetest.AfterWords(0)),
			voicetest.Interrupt("x", voicetest.After(-time.Second)),
			voicetest.Interrupt(" ", voicetest.AfterSpeechStarts()),
		} {
			_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{s}})
			if err == nil || !strings.Contains(err.Error(), "Config.Script[0]") {
				t.Errorf("%v: err = %v, want a config error", s, err)
			}
		}
	})
}

func TestInterruptTextOnlyAgentByEstimatedWords(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(interruptReplies()...),
		Script: []voicetest.Step{
			voicetest.UserSays("hi"), // 1 word: 400 ms
			voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The text "one two three four five" arrives at 700 ms with 2 s of
	// speech; two words are said by 1500 ms.
	if !strings.Contains(res.TimelineText(), `   1500ms turn 1 user_interrupt "stop please"`) {
		t.Errorf("timeline:\n%s", res.TimelineText())
	}
}
