package voicetest_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// stackTTS is fixtures.ToneTTS (prompt: it declares PromptSynthesize)
// that records the stack Synthesize runs on, and panics when asked.
type stackTTS struct {
	fixtures.ToneTTS
	stacks []string
	panics bool
}

func (s *stackTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	buf := make([]byte, 64<<10)
	s.stacks = append(s.stacks, string(buf[:runtime.Stack(buf, false)]))
	if s.panics {
		panic("tts exploded")
	}
	return s.ToneTTS.Synthesize(ctx, req)
}

// plainTTS hides the prompt declaration of what it wraps.
type plainTTS struct{ s *stackTTS }

func (p plainTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return p.s.Synthesize(ctx, req)
}

// TestPromptTTSRunsOnTheRunnersGoroutine: a TTS of this module that
// declares PromptSynthesize (fixtures.ToneTTS) is called on the runner's
// goroutine, with no goroutine hand-off; any other TTS on a goroutine of
// its own, bounded by Timeouts.Engine. A panic in a prompt TTS is still
// the scenario's error, not a crash.
func TestPromptTTSRunsOnTheRunnersGoroutine(t *testing.T) {
	cfg := func(tts voicetest.TTS) voicetest.Config {
		return voicetest.Config{
			Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "fine thanks", Latency: 100 * time.Millisecond}),
			UserVoice: tts,
			Script:    []voicetest.Step{voicetest.UserSays("how are you"), voicetest.AgentTurn()},
			Golden:    voicetest.GoldenOptions{Disable: true},
		}
	}
	const runner = "(*runner).runScript"
	prompt := &stackTTS{}
	res, err := voicetest.Run(t.Context(), cfg(prompt))
	if err != nil || !res.Success || len(prompt.stacks) != 1 {
		t.Fatalf("prompt TTS: err %v, success %v, %d calls", err, res != nil && res.Success, len(prompt.stacks))
	}
	if !strings.Contains(prompt.stacks[0], runner) {
		t.Errorf("the prompt TTS ran on another goroutine than the runner's:\n%s", prompt.stacks[0])
	}
	other := &stackTTS{}
	res, err = voicetest.Run(t.Context(), cfg(plainTTS{other}))
	if err != nil || !res.Success || len(other.stacks) != 1 {
		t.Fatalf("plain TTS: err %v, %d calls", err, len(other.stacks))
	}
	if strings.Contains(other.stacks[0], runner) {
		t.Errorf("a TTS of no declaration ran on the runner's goroutine, unbounded:\n%s", other.stacks[0])
	}
	// Both paths report the same conversation.
	res2, _ := voicetest.Run(t.Context(), cfg(&stackTTS{}))
	if res.TimelineText() != res2.TimelineText() {
		t.Errorf("timeline with a plain TTS:\n%s\nwith a prompt one:\n%s", res.TimelineText(), res2.TimelineText())
	}
	_, err = voicetest.Run(t.Context(), cfg(&stackTTS{panics: true}))
	if err == nil || !strings.Contains(err.Error(), "panicked: tts exploded") {
		t.Errorf("a prompt TTS that panics: err %v, want its panic", err)
	}
}
