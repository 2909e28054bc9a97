package wscodec_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestWebSocketScenario runs the JSON WebSocket adapter through
// voicetest.Scenario: a spoken turn whose paced reply the runner
// interrupts through the protocol, the reply to the interruption, DTMF,
// and the bot's hang-up message. It runs on virtual time, the bot in
// process over an in-memory network; the conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.
func TestWebSocketScenario(t *testing.T) {
	for _, pace := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		t.Run(pace.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := adaptertest.NewMemNet(t)
				bot := wsbot.New(t, wsbot.Config{Rate: 16000, Tools: true, HangUpAfter: 3, Paced: true, ReplyDuration: time.Second, Listener: n.Listen()})
				a := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true}))
				a.NetDial = n.Dial
				res := voicetest.Scenario(t, voicetest.Config{
					Agent: a, UserVoice: adaptertest.ToneTTS{}, Pacing: pace,
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
				types := adaptertest.EventTypes(res)
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
				// The wire statistics: the interrupt sent and the bot's
				// report that it stopped.
				if w := res.Metrics.Wire; w == nil || w.Cancels != 1 || w.Clears != 1 || w.FramesIn == 0 || w.FramesOut == 0 {
					t.Errorf("wire statistics %+v, want one cancel and one clear", w)
				}
			})
		})
	}
}

// Odd-length PCM from a raw-PCM WebSocket agent, through the runner: a
// frame error that says so, wrapping pcm.ErrOddLength, never silently
// dropped bytes.
func TestFaultOddPCMThroughTheRunner(t *testing.T) {
	leakcheck.Check(t)
	for _, mode := range []wsbot.Mode{wsbot.Raw, wsbot.JSON} {
		bot := wsbot.New(t, wsbot.Config{Mode: mode, Rate: 16000, Fault: wsbot.OddPCM})
		var codec wscodec.Codec = wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000})
		if mode == wsbot.Raw {
			codec = wscodec.RawPCM(16000)
		}
		_, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent: wscodec.New(bot.URL, codec), UserVoice: adaptertest.ToneTTS{}, Pacing: voicetest.PaceFast,
			Script:   []voicetest.Step{voicetest.AgentTurn()},
			Timeouts: voicetest.Timeouts{FirstChunk: 3 * time.Second},
		})
		var fe *wire.FrameError
		if !errors.As(err, &fe) || !errors.Is(err, pcm.ErrOddLength) {
			t.Errorf("mode %v: err = %v, want an *wire.FrameError wrapping pcm.ErrOddLength", mode, err)
		}
	}
}
