package wscodec_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkWebSocketSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz through each built-in codec (wire at 24 kHz, so no resampling):
// encoding and the loopback write. Bytes are the PCM16 input.
func BenchmarkWebSocketSendFrame(b *testing.B) {
	for _, bc := range []struct {
		name  string
		codec wscodec.Codec
		mode  wsbot.Mode
	}{
		{"raw", wscodec.RawPCM(24000), wsbot.Raw},
		{"json", wscodec.JSONBase64(wscodec.JSONOptions{}), wsbot.JSON},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bot := wsbot.New(b, wsbot.Config{Mode: bc.mode})
			conn := adaptertest.BenchConn(b, wscodec.New(bot.URL, bc.codec), 24000)
			// Silence, so that the raw bot's VAD never replies.
			adaptertest.BenchSendFrame(b, conn, adaptertest.Tone(24000, 440, 20*time.Millisecond, 0))
		})
	}
}

// BenchmarkWebSocketJSONTurn measures one turn against internal/peers/wsbot in
// JSON mode on loopback: a text message sent, then the bot's 20 ms reply
// audio, transcript and turn_end received. The bot runs in the same
// process, so this is an upper bound of the harness's overhead per turn.
func BenchmarkWebSocketJSONTurn(b *testing.B) {
	bot := wsbot.New(b, wsbot.Config{ReplyDuration: 20 * time.Millisecond})
	conn := adaptertest.BenchConn(b, wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{TurnEnd: true})), 24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return conn.SendText(ctx, "hello") },
		adaptertest.IsKind(voicetest.AgentTurnEnd))
}
