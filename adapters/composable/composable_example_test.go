package composable_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/composable"
	"github.com/voicetest-go/voicetest/internal/testlog"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// repeatModel is a stand-in chat model that repeats the caller. A real
// agent passes an llm.Client (any OpenAI-compatible endpoint).
type repeatModel struct{}

func (repeatModel) Complete(_ context.Context, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "You want: " + last.Content}}, nil
}

// A composable agent is built from three engines. Here the fake speech
// pair of package fixtures (tone codes, not speech) stands in for real STT
// and TTS engines, such as speech.Flite and pocketsphinx.
//
// The agent plays its replies in real time (2.8 s here), so go test only
// compiles this example; TestExampleNew runs it on virtual time and checks
// that it prints:
//
//	agent said "Hello." (575ms of audio)
//	agent heard "A table for two."
//	agent said "You want: A table for two." (2.225s of audio)
func ExampleNew() {
	agent := composable.New(fixtures.FakeSTT(), repeatModel{}, fixtures.FakeTTS())
	agent.SystemPrompt = "You take table bookings."
	agent.Greeting = "Hello."
	ctx := context.Background()
	const rate = 16000
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: rate, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	// listen prints one agent turn.
	listen := func() {
		var said string
		var audio time.Duration
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				fmt.Println(err)
				return
			}
			switch ev.Kind {
			case voicetest.UserTranscript:
				fmt.Printf("agent heard %q\n", ev.Text)
			case voicetest.AgentTranscript:
				said += ev.Text
			case voicetest.AgentAudio:
				audio += ev.Audio.Duration()
			case voicetest.AgentTurnEnd:
				fmt.Printf("agent said %q (%v of audio)\n", said, audio)
				return
			}
		}
	}
	listen()
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "A table for two.", Rate: rate})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range speech.Frames(voicetest.FrameDuration) {
		if err := conn.SendAudio(ctx, f); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := conn.EndUtterance(ctx); err != nil {
		fmt.Println(err)
		return
	}
	listen()
}

// TestExampleNew runs ExampleNew in a testing/synctest bubble (the
// agent's real-time playback on virtual time) and checks what it prints:
// the output its comment shows.
func TestExampleNew(t *testing.T) {
	const want = `agent said "Hello." (575ms of audio)
agent heard "A table for two."
agent said "You want: A table for two." (2.225s of audio)
`
	if got := testlog.Stdout(t, func() { synctest.Test(t, func(*testing.T) { ExampleNew() }) }); got != want {
		t.Errorf("ExampleNew printed:\n%s\nwant:\n%s", got, want)
	}
}
