package adapters_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestWebSocketScenario runs the JSON WebSocket adapter through
// voicetest.Scenario: a spoken turn whose paced reply the runner
// interrupts through the protocol, the reply to the interruption, DTMF,
// and the bot's hang-up message.
func TestWebSocketScenario(t *testing.T) {
	for _, pace := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		t.Run(pace.String(), func(t *testing.T) {
			bot := wsbot.New(t, wsbot.Config{Rate: 16000, Tools: true, HangUpAfter: 3, Paced: true, ReplyDuration: time.Second})
			a := adapters.WebSocket(bot.URL, adapters.JSONBase64(adapters.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true}))
			res := voicetest.Scenario(t, voicetest.Config{
				Agent: a, UserVoice: toneTTS{}, Pacing: pace,
				// The protocol interrupt and the bot's paced reply cross on
				// the wire within a millisecond, so the order of their
				// timeline events varies from run to run: no golden file.
				Golden: voicetest.GoldenOptions{Disable: true},
				Script: []voicetest.Step{
					voicetest.UserSays("hello"),
					voicetest.Interrupt("wait", voicetest.After(300*time.Millisecond)),
					voicetest.AgentTurn(),
					voicetest.DTMF("5"),
					voicetest.AgentTurn(),
				},
			})
			if !res.Success {
				t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
			}
			types := eventTypes(res)
			for _, want := range []string{"tool_call", "tool_result", "user_interrupt", "agent_interrupted", "dtmf"} {
				if !strings.Contains(types, want) {
					t.Errorf("timeline %s lacks %s", types, want)
				}
			}
			if !strings.Contains(res.TranscriptText(), "you pressed 5") {
				t.Errorf("transcript lacks the DTMF reply:\n%s", res.TranscriptText())
			}
			c := bot.Calls()[0]
			if c.Interrupts != 1 || c.DTMF != "5" || len(c.Utterances) != 2 || len(c.Errors) > 0 {
				t.Errorf("bot: %+v", c)
			}
		})
	}
}
