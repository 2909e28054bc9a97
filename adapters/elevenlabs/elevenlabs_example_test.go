package elevenlabs_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// exampleConfig is the loopback ConvAI server of ExampleNew: a first
// message, one turn, and a hang-up after the reply.
func exampleConfig() elevenpeer.Config {
	return elevenpeer.Config{
		FirstMessage: "Hi how can I help",
		Turns:        []elevenpeer.Turn{{UserTranscript: "what time is it", Reply: "It is noon goodbye"}},
		HangUpAfter:  1,
	}
}

// A conversation with a loopback ConvAI server: the agent's first message,
// one spoken turn (the server detects its end from the silence
// EndUtterance sends), and the agent hanging up after its reply.
//
// The call runs on the real clock, so go test only compiles this example;
// TestExampleNew makes the same call on virtual time and checks that it
// prints:
//
//	agent audio: {pcm16 16000}
//	agent: "Hi how can I help"
//	server heard: "what time is it"
//	agent: "It is noon goodbye"
//	hung up (3.6s of agent audio in all)
func ExampleNew() {
	server := elevenpeer.Start(exampleConfig())
	defer server.Close()

	agent := elevenlabs.New("agent_test")
	agent.URL = server.URL // default: ElevenLabs' endpoint
	talk(context.Background(), agent, os.Stdout)
}

// talk connects to agent, prints to out what the agent says until its
// first message has played, says "what time is it" and prints the rest of
// the call.
func talk(ctx context.Context, agent *elevenlabs.Agent, out io.Writer) {
	agent.DynamicVariables = map[string]any{"caller": "Ada"}
	const rate = 24000 // the server's pcm_16000 is resampled
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: rate, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Fprintln(out, err)
		return
	}
	defer conn.Close()
	fmt.Fprintln(out, "agent audio:", conn.Capabilities().OutputFormat)

	samples := 0
	report := func(ev voicetest.AgentEvent) {
		switch ev.Kind {
		case voicetest.AgentAudio:
			samples += ev.Audio.Len()
		case voicetest.AgentTranscript:
			fmt.Fprintf(out, "agent: %q\n", ev.Text)
		case voicetest.UserTranscript:
			fmt.Fprintf(out, "server heard: %q\n", ev.Text)
		case voicetest.AgentHangUp:
			fmt.Fprintf(out, "hung up (%v of agent audio in all)\n", pcm.DurationOf(samples, rate))
		}
	}
	// The first message: ConvAI marks no end of turn, so wait for audio.
	for samples < 2*rate {
		ev, err := conn.Recv(ctx)
		if err != nil {
			fmt.Fprintln(out, err)
			return
		}
		report(ev)
	}
	for _, f := range fixtures.WordTones("what time is it", rate).Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			fmt.Fprintln(out, err)
			return
		}
	}
	if err := conn.EndUtterance(ctx); err != nil { // sends trailing silence
		fmt.Fprintln(out, err)
		return
	}
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			break // the transport closed after the hang-up
		}
		report(ev)
	}
}
