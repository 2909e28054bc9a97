package adapters_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/wsbot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkWebSocketSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz through each built-in codec (wire at 24 kHz, so no resampling):
// encoding and the loopback write. Bytes are the PCM16 input.
func BenchmarkWebSocketSendFrame(b *testing.B) {
	for _, bc := range []struct {
		name  string
		codec adapters.Codec
		mode  wsbot.Mode
	}{
		{"raw", adapters.RawPCM(24000), wsbot.Raw},
		{"json", adapters.JSONBase64(adapters.JSONOptions{}), wsbot.JSON},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bot := wsbot.New(b, wsbot.Config{Mode: bc.mode})
			ctx := context.Background()
			conn, err := adapters.WebSocket(bot.URL, bc.codec).Connect(ctx, benchSession(24000))
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			// Silence, so that the raw bot's VAD never replies.
			frame := tone(24000, 440, 20*time.Millisecond, 0)
			b.SetBytes(int64(2 * frame.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if err := conn.SendAudio(ctx, frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWebSocketJSONTurn measures one turn against internal/wsbot in
// JSON mode on loopback: a text message sent, then the bot's 20 ms reply
// audio, transcript and turn_end received. The bot runs in the same
// process, so this is an upper bound of the harness's overhead per turn.
func BenchmarkWebSocketJSONTurn(b *testing.B) {
	bot := wsbot.New(b, wsbot.Config{ReplyDuration: 20 * time.Millisecond})
	ctx := context.Background()
	conn, err := adapters.WebSocket(bot.URL, adapters.JSONBase64(adapters.JSONOptions{TurnEnd: true})).Connect(ctx, benchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		if err := conn.SendText(ctx, "hello"); err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == voicetest.AgentTurnEnd {
				break
			}
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
