package adapters_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/floodpeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// heapLive returns the bytes of live heap objects after a full GC.
func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Issue #15, item 3: an agent that floods the line while the runner is
// not reading (a judge or a TTS call in progress) made the adapter queue
// every frame: 200 MB sent, +183 MiB held. The queue is bounded by
// WSOptions.MaxQueueBytes; past it the connection ends with a
// *voicetest.LimitError naming the setting, after the events queued
// before it.
func TestFloodWhileNotReadingIsBounded(t *testing.T) {
	const flood = 200 << 20
	frame := make([]byte, 4000) // 2000 samples of silence at 24 kHz
	before := heapLive()
	peer := floodpeer.New(t, floodpeer.Config{Frame: frame, Binary: true, Bytes: flood})
	conn, err := wscodec.New(peer.URL, wscodec.RawPCM(24000)).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case <-peer.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("the flood did not end: %d bytes sent", peer.Sent())
	}
	held := heapLive() - before
	t.Logf("flooded %d MiB, heap grew by %.1f MiB while nobody read", peer.Sent()>>20, float64(held)/(1<<20))
	const slack = 16 << 20 // read buffers, the socket's, the test's
	if held > wire.DefaultMaxQueueBytes+slack {
		t.Errorf("the adapter holds %.1f MiB of a %d MiB flood, above MaxQueueBytes (%d MiB) + %d MiB", float64(held)/(1<<20), peer.Sent()>>20, wire.DefaultMaxQueueBytes>>20, slack>>20)
	}
	// Reading now: the queued audio, then the error that says why the
	// connection ended.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	audio := 0
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			if !errors.Is(err, voicetest.ErrLimit) || !strings.Contains(err.Error(), "WSOptions.MaxQueueBytes") {
				t.Fatalf("after %d audio events: %v, want a LimitError naming WSOptions.MaxQueueBytes", audio, err)
			}
			var le *voicetest.LimitError
			if !errors.As(err, &le) || le.Limit != wire.DefaultMaxQueueBytes {
				t.Errorf("error %v: want a *voicetest.LimitError of %d bytes", err, wire.DefaultMaxQueueBytes)
			}
			break
		}
		if ev.Kind == voicetest.AgentAudio {
			audio++
		}
	}
	if audio == 0 {
		t.Error("no audio was delivered before the error")
	}
}

// drainAll reads conn until a sentinel event, the end of the transport or
// the timeout, and returns the frame errors it saw.
func drainAll(t *testing.T, conn voicetest.Conn, sentinel func(voicetest.AgentEvent) bool) (errs []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ev, err := conn.Recv(ctx)
		switch {
		case ctx.Err() != nil:
			t.Fatalf("no sentinel within the timeout; %d errors", len(errs))
		case errors.Is(err, voicetest.ErrTransportClosed):
			return errs
		case err != nil:
			errs = append(errs, err)
		case sentinel(ev):
			return errs
		}
	}
}

// An agent that sends endless distinct unknown event types grows neither
// the adapter's "logged once" set nor the log past wire.MaxLoggedOnce.
func TestUnknownEventFloodLogsBounded(t *testing.T) {
	var send []string
	for i := range 3000 {
		send = append(send, fmt.Sprintf(`{"type":"made_up_%d"}`, i))
	}
	for name, agent := range map[string]func(t *testing.T, send []string) voicetest.Agent{
		"realtime": func(t *testing.T, send []string) voicetest.Agent {
			peer := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-x", Send: append(send, `{"type":"conversation.item.input_audio_transcription.completed","item_id":"x","content_index":0,"transcript":"sentinel"}`)})
			a := realtime.New("gpt-realtime")
			a.URL, a.APIKey = peer.URL, "sk-x"
			return a
		},
		"elevenlabs": func(t *testing.T, send []string) voicetest.Agent {
			peer := elevenpeer.New(t, elevenpeer.Config{APIKey: "xi-x", Send: append(send, `{"type":"user_transcript","user_transcription_event":{"user_transcript":"sentinel"}}`)})
			a := elevenlabs.New("agent_test")
			a.URL, a.APIKey = peer.URL, "xi-x"
			return a
		},
	} {
		t.Run(name, func(t *testing.T) {
			var log canaryLog
			conn, err := agent(t, send).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			drainAll(t, conn, isUserTranscript("sentinel"))
			if n := strings.Count(log.String(), "ignoring server event"); n > wire.MaxLoggedOnce || n == 0 {
				t.Errorf("%d unknown event types logged of %d sent, want 1 to %d", n, len(send), wire.MaxLoggedOnce)
			}
		})
	}
}

// A Twilio bot that sends marks faster than its audio plays has at most
// wire.MaxPendingMarks waiting; the rest are frame errors naming the
// bound.
func TestTwilioMarkFloodBounded(t *testing.T) {
	audio := base64.StdEncoding.EncodeToString(make([]byte, 8000*5)) // 5 s of µ-law
	send := []string{`{"event":"media","streamSid":"{sid}","media":{"payload":"` + audio + `"}}`}
	const marks = wire.MaxPendingMarks + 500
	for i := range marks {
		send = append(send, fmt.Sprintf(`{"event":"mark","streamSid":"{sid}","mark":{"name":"m%d"}}`, i))
	}
	send = append(send, `{"event":"clear","streamSid":"{sid}"}`)
	bot := twiliobot.New(t, twiliobot.Config{Send: send})
	conn, err := twilio.New(bot.URL).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	errs := drainAll(t, conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentInterrupted })
	if len(errs) != marks-wire.MaxPendingMarks {
		t.Fatalf("%d errors for %d marks sent ahead of 5 s of audio, want %d (the marks past MaxPendingMarks)", len(errs), marks, marks-wire.MaxPendingMarks)
	}
	if !strings.Contains(errs[0].Error(), "MaxPendingMarks") || !errors.Is(errs[0], voicetest.ErrLimit) {
		t.Errorf("error %v: want a LimitError naming wire.MaxPendingMarks", errs[0])
	}
}

// A Realtime response with endless tool calls is cut at
// wire.MaxResponseCalls.
func TestRealtimeToolCallFloodBounded(t *testing.T) {
	send := []string{`{"type":"response.created","response":{"id":"resp_1"}}`}
	const calls = wire.MaxResponseCalls + 100
	for i := range calls {
		send = append(send, fmt.Sprintf(`{"type":"response.function_call_arguments.done","response_id":"resp_1","call_id":"c%d","name":"f","arguments":"{}"}`, i))
	}
	send = append(send, `{"type":"conversation.item.input_audio_transcription.completed","item_id":"x","content_index":0,"transcript":"sentinel"}`)
	peer := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-x", Send: send})
	a := realtime.New("gpt-realtime")
	a.URL, a.APIKey = peer.URL, "sk-x"
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	errs := drainAll(t, conn, isUserTranscript("sentinel"))
	if len(errs) != calls-wire.MaxResponseCalls {
		t.Fatalf("%d errors for %d calls in one response, want %d", len(errs), calls, calls-wire.MaxResponseCalls)
	}
	if !strings.Contains(errs[0].Error(), "MaxResponseCalls") || !errors.Is(errs[0], voicetest.ErrLimit) {
		t.Errorf("error %v: want a LimitError naming wire.MaxResponseCalls", errs[0])
	}
}
