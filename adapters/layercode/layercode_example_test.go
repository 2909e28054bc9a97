package layercode_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// A LayerCode agent is reached through the customer backend's authorize
// endpoint and LayerCode's WebSocket. Here a loopback test double of both
// plays LayerCode: it greets, answers one utterance and hangs up.
//
// The call runs on the real clock (1.5 s, most of it waiting for the agent
// to be quiet), so go test only compiles this example; TestExampleNew
// makes the same call on virtual time and checks that it prints:
//
//	agent said "Hello there." (300ms of audio)
//	agent said "Reply 1." (300ms of audio), then hung up: agent closed the WebSocket (status 1000 StatusNormalClosure): conversation ended by agent
func ExampleNew() {
	peer := layercodepeer.Start(layercodepeer.Config{Greeting: "Hello there.", HangUpAfter: 2})
	defer peer.Close()

	agent := layercode.New(peer.AuthorizeURL, "agent-test")
	agent.WebSocketURL = peer.WebSocketURL // default: LayerCode's own
	agent.Metadata = map[string]any{"caller": "example"}
	talk(context.Background(), agent, os.Stdout)
}

// talk connects to agent, prints to out what the agent says, says 300 ms
// of "speech" and prints the answer.
func talk(ctx context.Context, agent *layercode.Agent, out io.Writer) {
	const rate = 24000
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: rate, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Fprintln(out, err)
		return
	}
	defer conn.Close()

	// listen prints what the agent says until it has been quiet for a
	// while (LayerCode marks no end of turn) or hangs up.
	listen := func() {
		var text strings.Builder // the final text, which replaces its deltas
		var audio time.Duration
		for {
			rctx, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
			ev, err := conn.Recv(rctx)
			cancel()
			if err != nil {
				fmt.Fprintf(out, "agent said %q (%v of audio)\n", text.String(), audio.Round(time.Millisecond))
				return
			}
			switch ev.Kind {
			case voicetest.AgentAudio:
				audio += ev.Audio.Duration()
			case voicetest.AgentTranscript:
				if ev.Final {
					text.Reset()
					text.WriteString(ev.Text)
				}
			case voicetest.AgentHangUp:
				fmt.Fprintf(out, "agent said %q (%v of audio), then hung up: %s\n", text.String(), audio.Round(time.Millisecond), ev.Text)
				return
			}
		}
	}
	listen()
	// 300 ms of "speech" (a tone); EndUtterance sends vad_end.
	speech := pcm.Chunk{Rate: rate, Samples: make([]int16, pcm.SamplesFor(rate, 300*time.Millisecond))}
	for i := range speech.Samples {
		speech.Samples[i] = int16(8000 * (1 - 2*float64(i/30%2))) // a 400 Hz square wave
	}
	for _, f := range speech.Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			fmt.Fprintln(out, err)
			return
		}
	}
	if err := conn.EndUtterance(ctx); err != nil {
		fmt.Fprintln(out, err)
		return
	}
	listen()
}
