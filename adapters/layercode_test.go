package adapters_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/layercodepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// lcAgent returns a LayerCode adapter pointed at peer.
func lcAgent(peer *layercodepeer.Peer) *adapters.LayerCodeAgent {
	a := adapters.LayerCode(peer.AuthorizeURL, "agent-test")
	a.WebSocketURL = peer.WebSocketURL
	return a
}

// lcDial connects a to its peer and closes the Conn (checking for leaks)
// when the test ends.
func lcDial(t testing.TB, a *adapters.LayerCodeAgent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	conn, err := a.Connect(t.Context(), s)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	closeConn(t, conn)
	return conn
}

// fakeTranscribe is the peer's STT: it decodes fixtures.FakeTTS speech.
func fakeTranscribe(c pcm.Chunk) string {
	tr, err := fixtures.FakeSTT().Transcribe(context.Background(), voicetest.TranscriptionRequest{Audio: c})
	if err != nil {
		return "?" + err.Error()
	}
	return tr.Text
}

// fakeSpeech is fixtures.FakeTTS as the peer's voice.
func fakeSpeech(text string, rate int) pcm.Chunk {
	c, err := fixtures.FakeTTS().Synthesize(context.Background(), voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		panic(err)
	}
	return c
}

// lcSay sends text as fake speech, paced in 20 ms frames, then ends the
// utterance.
func lcSay(t testing.TB, conn voicetest.Conn, rate int, text string) {
	t.Helper()
	sendPaced(t, t.Context(), conn, fakeSpeech(text, rate))
	if err := conn.EndUtterance(t.Context()); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
}

// lcTurn is what the agent sent in one turn.
type lcTurn struct {
	text, user, data string
	audio            pcm.Chunk
	interrupted      bool
	kinds            []string
}

// lcCollect receives events until the agent has been quiet for quiet after
// sending audio (or until stop reports true for an event), and sums them
// up.
func lcCollect(t testing.TB, conn voicetest.Conn, rate int, quiet time.Duration, stop func(voicetest.AgentEvent) bool) lcTurn {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var tr lcTurn
	tr.audio = pcm.Chunk{Rate: rate}
	for {
		wait := time.Until(deadline)
		if tr.audio.Len() > 0 {
			wait = quiet
		}
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		ev, err := conn.Recv(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && tr.audio.Len() > 0 {
			return tr
		}
		if err != nil {
			t.Fatalf("Recv after %v: %v (so far: %+v)", tr.kinds, err, tr.kinds)
		}
		tr.kinds = append(tr.kinds, ev.Kind.String())
		switch ev.Kind {
		case voicetest.AgentAudio:
			tr.audio.Samples = append(tr.audio.Samples, ev.Audio.Samples...)
		case voicetest.AgentTranscript:
			tr.text += ev.Text
		case voicetest.UserTranscript:
			if ev.Final {
				tr.user = ev.Text
			}
		case voicetest.AgentData:
			tr.data = string(ev.Data)
		case voicetest.AgentInterrupted:
			tr.interrupted = true
		}
		if stop != nil && stop(ev) {
			return tr
		}
	}
}

func TestLayerCodeConversation(t *testing.T) {
	const rate = 24000
	peer := layercodepeer.New(t, layercodepeer.Config{
		Token:      "backend-token-canary",
		Greeting:   "Hello, how can I help?",
		Speech:     fakeSpeech,
		Transcribe: fakeTranscribe,
		Replies: func(n int, heard string) layercodepeer.Reply {
			r := layercodepeer.Reply{Text: fmt.Sprintf("You said %s.", heard)}
			if n == 2 {
				r.Data = json.RawMessage(`{"booking":{"party":2}}`)
			}
			return r
		},
	})
	a := lcAgent(peer)
	a.Metadata = map[string]any{"user": "tester"}
	a.AuthorizeHeader = http.Header{"Authorization": {"Bearer backend-token-canary"}}
	conn := lcDial(t, a, session(t, rate))

	caps := conn.Capabilities()
	want := voicetest.Capabilities{Adapter: "layercode", Audio: true, Text: true,
		InputFormat:          voicetest.AudioFormat{Encoding: "pcm16", Rate: 8000},
		OutputFormat:         voicetest.AudioFormat{Encoding: "pcm16", Rate: 16000},
		StreamingTranscripts: true, NativeVAD: true}
	if caps != want {
		t.Errorf("Capabilities = %+v, want %+v", caps, want)
	}

	greeting := lcCollect(t, conn, rate, 500*time.Millisecond, nil)
	if greeting.text != "Hello, how can I help?" {
		t.Errorf("greeting text = %q", greeting.text)
	}
	if got := fakeTranscribe(greeting.audio); got != "Hello, how can I help?" {
		t.Errorf("greeting audio decodes to %q", got)
	}
	wantDurationNear(t, "greeting audio", greeting.audio.Duration(), fakeSpeech("Hello, how can I help?", 16000).Duration(), 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := peer.WaitCall(ctx, 0, func(c layercodepeer.Call) bool { return len(c.Acks) == 1 }); err != nil {
		t.Fatal(err)
	}
	for i, line := range []string{"A table for two.", "At seven, please."} {
		lcSay(t, conn, rate, line)
		turn := lcCollect(t, conn, rate, 500*time.Millisecond, nil)
		if turn.user != line {
			t.Errorf("turn %d: user transcript %q, want %q", i+1, turn.user, line)
		}
		if want := "You said " + line + "."; turn.text != want {
			t.Errorf("turn %d: agent text %q, want %q", i+1, turn.text, want)
		}
		if got := fakeTranscribe(turn.audio); got != "You said "+line+"." {
			t.Errorf("turn %d: agent audio decodes to %q", i+1, got)
		}
		if i == 1 && turn.data != `{"booking":{"party":2}}` {
			t.Errorf("turn 2 data = %q", turn.data)
		}
		if _, err := peer.WaitCall(ctx, 0, func(c layercodepeer.Call) bool { return len(c.Acks) == i+2 }); err != nil {
			t.Fatal(err)
		}
	}
	call := peer.Calls()[0]
	if len(call.Errors) > 0 {
		t.Errorf("peer saw protocol errors: %q", call.Errors)
	}
	if call.Metadata["user"] != "tester" {
		t.Errorf("authorize metadata = %v", call.Metadata)
	}
	wantTypes := "client.ready vad_events vad_events trigger.response.audio.replay_finished vad_events vad_events trigger.response.audio.replay_finished"
	if got := strings.Join(call.Types, " "); !strings.HasPrefix(got, "client.ready trigger.response.audio.replay_finished vad_events") || strings.Count(got, "vad_events") != 4 {
		t.Errorf("client message types = %s, want like %s", got, wantTypes)
	}
	wantAcks := []layercodepeer.Ack{
		{Reason: "completed", TurnID: "turn-1", LastDeltaID: call.Acks[0].LastDeltaID},
		{Reason: "completed", TurnID: "turn-2", LastDeltaID: call.Acks[1].LastDeltaID},
		{Reason: "completed", TurnID: "turn-3", LastDeltaID: call.Acks[2].LastDeltaID},
	}
	for i, a := range call.Acks {
		if a != wantAcks[i] || !strings.HasPrefix(a.LastDeltaID, a.TurnID+"-d") {
			t.Errorf("ack %d = %+v, want %+v with a delta id of that turn", i, a, wantAcks[i])
		}
	}
	if call.Heard[0] != "A table for two." || call.Heard[1] != "At seven, please." {
		t.Errorf("peer heard %q", call.Heard)
	}
}
