package wscodec_test

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestWebSocketCassette records a conversation with the loopback JSON
// WebSocket bot (tool calls and data before each reply, a paced reply the
// caller interrupts through the protocol, DTMF), stops the bot, and
// replays the conversation from the cassette.
func TestWebSocketCassette(t *testing.T) {
	var bot *wsbot.Server
	adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		bot = wsbot.New(t, wsbot.Config{Rate: 16000, Tools: true, HangUpAfter: 3, Paced: true, ReplyDuration: time.Second, Listener: n.Listen()})
		a := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true}))
		a.NetDial = n.Dial
		return a
	}, voicetest.Config{
		UserVoice: adaptertest.ToneTTS{},
		Judge:     judges.All(judges.Says("you pressed 5"), judges.InterruptionHandled(time.Second)),
		Script: []voicetest.Step{
			voicetest.UserSays("hello"),
			voicetest.Interrupt("wait", voicetest.After(300*time.Millisecond)),
			voicetest.AgentTurn(),
			voicetest.DTMF("5"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if n := len(bot.Calls()); n != 1 {
		t.Errorf("the bot saw %d connections, want the recorded one only", n)
	}
}
