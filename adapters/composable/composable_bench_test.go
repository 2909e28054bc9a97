package composable_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/composable"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// benchTTS is a TTS that says anything as 20 ms of tone: an engine that
// costs nothing, so the composable agent's own costs dominate.
type benchTTS struct{}

func (benchTTS) Synthesize(_ context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return adaptertest.Tone(req.Rate, 440, 20*time.Millisecond, 8000), nil
}

// BenchmarkComposableTextTurn measures one text turn of the composable
// agent on the real clock with engines that cost nothing (an in-process
// LLM and a TTS of 20 ms of tone): SendText, the LLM call with the
// history, synthesis, the paced 20 ms frame with its transcript, and
// AgentTurnEnd. Wall time includes the 20 ms the audio takes to play;
// cpu-ns/op is the agent's own cost.
func BenchmarkComposableTextTurn(b *testing.B) {
	conn := adaptertest.BenchConn(b, composable.New(fixtures.FakeSTT(), echoLLM(), benchTTS{}), 24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return conn.SendText(ctx, "Hello.") },
		adaptertest.IsKind(voicetest.AgentTurnEnd))
}
