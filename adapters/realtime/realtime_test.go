package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func dialRealtime(t testing.TB, a *realtime.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	return adaptertest.DialAgent(t, a, s)
}

// realtimeAgent returns an agent for the peer, with a key that the
// environment cannot override.
func realtimeAgent(peer *realtimepeer.Server) *realtime.Agent {
	a := realtime.New("gpt-realtime")
	a.URL = peer.URL
	a.APIKey = "sk-test"
	return a
}

// memRealtime starts a peer of cfg on a new in-memory network and returns
// it with realtimeAgent reaching it through the network: for a test in a
// testing/synctest bubble, on virtual time. (The conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.)
func memRealtime(t *testing.T, cfg realtimepeer.Config) (*realtimepeer.Server, *realtime.Agent) {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	cfg.Listener = n.Listen()
	peer := realtimepeer.New(t, cfg)
	a := realtimeAgent(peer)
	a.NetDial = n.Dial
	return peer, a
}

// memSilent returns the URL of an adaptertest.SilentServer on a new
// in-memory network, which a reaches through it.
func memSilent(t *testing.T, a *realtime.Agent) string {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	a.NetDial = n.Dial
	return n.SilentServer(t)
}

func TestRealtimeConversation(t *testing.T) {
	for _, tc := range []struct {
		name string
		beta bool
		rate int
	}{{"ga", false, 24000}, {"beta", true, 16000}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				peer, a := memRealtime(t, realtimepeer.Config{
					APIKey:   "sk-test",
					Greeting: "Hello there how can I help",
					Turns: []realtimepeer.Turn{
						{UserTranscript: "a table for two", Reply: "For two people"},
						{UserTranscript: "at seven", Reply: "Seven it is"},
						{UserTranscript: "thanks", Reply: "Goodbye"},
					},
				})
				a.Beta = tc.beta
				a.Greeting = true
				a.Instructions = "You take table bookings."
				a.Voice = "marin"
				a.InputTranscription = "gpt-4o-transcribe"
				ctx := t.Context()
				conn := dialRealtime(t, a, adaptertest.Session(t, tc.rate))

				r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
				adaptertest.WantDurationNear(t, "greeting audio", r.Audio, 6*fixtures.WordDuration, time.Millisecond)
				if final, deltas := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Hello there how can I help" || deltas != final {
					t.Errorf("greeting transcript: final %q, deltas %q", final, deltas)
				}
				for _, ev := range r.Events {
					if ev.Kind == voicetest.AgentAudio && ev.Audio.Rate != tc.rate {
						t.Fatalf("agent audio at %d Hz, want the session rate %d", ev.Audio.Rate, tc.rate)
					}
				}
				for i, want := range []struct{ user, reply string }{
					{"a table for two", "For two people"}, {"at seven", "Seven it is"}, {"thanks", "Goodbye"},
				} {
					adaptertest.Say(t, ctx, conn, tc.rate, "one two three")
					r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
					if final, _ := adaptertest.TurnText(r.Events, voicetest.UserTranscript); final != want.user {
						t.Errorf("turn %d: user transcript %q, want %q", i+1, final, want.user)
					}
					if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != want.reply {
						t.Errorf("turn %d: agent transcript %q, want %q", i+1, final, want.reply)
					}
					words := len(strings.Fields(want.reply))
					adaptertest.WantDurationNear(t, fmt.Sprintf("turn %d audio", i+1), r.Audio, time.Duration(words)*fixtures.WordDuration, time.Millisecond)
				}
				if err := conn.Close(); err != nil {
					t.Fatal(err)
				}
				ss, err := peer.Wait(ctx, 0, func(s realtimepeer.Session) bool { return s.Ended })
				if err != nil {
					t.Fatal(err)
				}
				if len(ss.Errors) > 0 {
					t.Errorf("the server sent errors: %q", ss.Errors)
				}
				if ss.Beta != tc.beta || ss.Model != "gpt-realtime" {
					t.Errorf("server saw beta=%v model=%q", ss.Beta, ss.Model)
				}
				if len(ss.Commits) != 3 || ss.Completed != 4 || ss.ResponseCreates != 4 {
					t.Errorf("server: %d commits, %d completed responses, %d response.create; want 3, 4, 4", len(ss.Commits), ss.Completed, ss.ResponseCreates)
				}
				// Each commit holds the 1.2 s utterance at 24 kHz, whatever
				// the session rate.
				for i, n := range ss.Commits {
					if d := pcm.DurationOf(n, 24000); d < 1199*time.Millisecond || d > 1201*time.Millisecond {
						t.Errorf("commit %d holds %v of audio, want 1.2s", i+1, d)
					}
				}
				var upd map[string]any
				json.Unmarshal(ss.Update, &upd)
				if tc.beta {
					if upd["input_audio_format"] != "pcm16" || upd["turn_detection"] != nil || upd["voice"] != "marin" {
						t.Errorf("beta session.update = %s", ss.Update)
					}
					if _, ok := upd["turn_detection"]; !ok {
						t.Errorf("beta session.update lacks an explicit turn_detection null: %s", ss.Update)
					}
				} else {
					want := `"audio":{"input":{"format":{"type":"audio/pcm","rate":24000},"turn_detection":null,"transcription":{"model":"gpt-4o-transcribe"}},"output":{"format":{"type":"audio/pcm","rate":24000},"voice":"marin"}}`
					if upd["type"] != "realtime" || !strings.Contains(string(ss.Update), want) {
						t.Errorf("GA session.update = %s\nwant it to contain %s", ss.Update, want)
					}
				}
			})
		})
	}
}

// TestRealtimeAudioFidelity checks the resampling both ways against ideal
// sines: user speech at 16 kHz → 24 kHz at the server, and the server's
// 24 kHz audio → 16 kHz agent audio.
func TestRealtimeAudioFidelity(t *testing.T) { synctest.Test(t, testRealtimeAudioFidelity) }

func testRealtimeAudioFidelity(t *testing.T) {
	peer, a := memRealtime(t, realtimepeer.Config{Greeting: "hello"})
	a.Greeting = true
	ctx := t.Context()
	conn := dialRealtime(t, a, adaptertest.Session(t, 16000))
	var got []int16
	adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool {
		got = append(got, ev.Audio.Samples...)
		return ev.Kind == voicetest.AgentTurnEnd
	})
	want, err := pcm.Resample(fixtures.WordTones("hello", 24000), 16000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.Samples) {
		t.Fatalf("greeting: %d samples at 16 kHz, want %d", len(got), len(want.Samples))
	}
	down := adaptertest.SNR(got, want.Samples, 160)
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(16000, 440, 500*time.Millisecond, 8000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := peer.Wait(ctx, 0, func(s realtimepeer.Session) bool { return len(s.Commits) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	up := adaptertest.SNR(ss.Audio, adaptertest.Tone(24000, 440, 500*time.Millisecond, 8000).Samples, 240)
	if down < 60 || up < 60 {
		t.Errorf("SNR: agent audio 24→16 kHz %.1f dB, user audio 16→24 kHz %.1f dB; want ≥ 60 dB", down, up)
	}
	t.Logf("SNR: agent audio (server → voicetest, 24→16 kHz) %.1f dB, user audio (voicetest → server, 16→24 kHz) %.1f dB", down, up)
}

func TestRealtimeServerVAD(t *testing.T) { synctest.Test(t, testRealtimeServerVAD) }

func testRealtimeServerVAD(t *testing.T) {
	peer, a := memRealtime(t, realtimepeer.Config{Turns: []realtimepeer.Turn{{Reply: "heard you"}, {Reply: "again"}}})
	a.TurnDetection = &realtime.TurnDetection{SilenceDuration: 300 * time.Millisecond}
	ctx := t.Context()
	conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
	if !conn.Capabilities().NativeVAD {
		t.Error("NativeVAD false under server turn detection")
	}
	readmecaps.Check(t, "`realtime`", conn.Capabilities(), "TurnDetection")
	for _, want := range []string{"heard you", "again"} {
		adaptertest.Say(t, ctx, conn, 24000, "hello hello")
		r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != want {
			t.Errorf("reply %q, want %q", final, want)
		}
	}
	ss := peer.Sessions()[0]
	if len(ss.Errors) > 0 || len(ss.Commits) != 2 || ss.ResponseCreates != 0 {
		t.Errorf("server: errors %q, %d commits (by its VAD), %d response.create (want none)", ss.Errors, len(ss.Commits), ss.ResponseCreates)
	}
	// 800 ms of speech, then EndSilence = 300 ms + 300 ms.
	if got := pcm.DurationOf(len(ss.Audio), 24000); got != 2*1400*time.Millisecond {
		t.Errorf("server got %v of audio, want 2 × (800 ms speech + 600 ms EndSilence)", got)
	}
	if !strings.Contains(string(ss.Update), `"turn_detection":{"type":"server_vad","silence_duration_ms":300,"create_response":true,"interrupt_response":true}`) {
		t.Errorf("session.update = %s", ss.Update)
	}
}

func TestRealtimeBargeIn(t *testing.T) {
	long := strings.Repeat("la ", 20) // 8 s of audio, streamed over about 1.6 s
	t.Run("truncate after a stall", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// 100 ms deltas every 400 ms: each plays out before the next
			// arrives. Interrupted 50 ms into the third delta, the client
			// has played 250 ms of the 300 ms received (a clock since the
			// first audio would say 850 ms, i.e. all of it, and truncate
			// nothing).
			peer, a := memRealtime(t, realtimepeer.Config{Greeting: long, ChunkDelay: 400 * time.Millisecond})
			a.Greeting = true
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			var got time.Duration
			for got < 300*time.Millisecond {
				got += adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio)).Audio
			}
			time.Sleep(50 * time.Millisecond)
			if err := conn.Interrupt(ctx); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			ss, err := peer.Wait(wctx, 0, func(s realtimepeer.Session) bool { return s.Cancels == 1 && len(s.Truncates) == 1 })
			if err != nil {
				t.Fatalf("no truncate after the stall (%d cancels, truncates %+v): %v", ss.Cancels, ss.Truncates, err)
			}
			// The delta in flight may have played a little more or less on a
			// loaded machine: between the two deltas before it and all three.
			if ms := ss.Truncates[0].AudioEndMs; ms <= 200 || ms >= 300 {
				t.Errorf("truncated at %d ms, want about 250 ms (of %v received)", ms, got)
			}
		})
	})
	t.Run("native cancel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			peer, a := memRealtime(t, realtimepeer.Config{Greeting: long, ChunkDelay: 20 * time.Millisecond, Turns: []realtimepeer.Turn{{Reply: "sorry go on"}}})
			a.Greeting = true
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			if !conn.Capabilities().NativeInterrupt {
				t.Fatal("NativeInterrupt false")
			}
			adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
			time.Sleep(100 * time.Millisecond) // let some of it "play"
			if err := conn.Interrupt(ctx); err != nil {
				t.Fatal(err)
			}
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentInterrupted))
			if last := r.Events[len(r.Events)-1]; !strings.Contains(last.Text, "client_cancelled") {
				t.Errorf("interruption %q does not give the server's reason", last.Text)
			}
			if r.Audio >= 8*time.Second {
				t.Errorf("got all %v of the greeting despite the cancel", r.Audio)
			}
			ss, err := peer.Wait(ctx, 0, func(s realtimepeer.Session) bool { return s.Cancelled == 1 && len(s.Truncates) == 1 })
			if err != nil {
				t.Fatal(err)
			}
			if ss.Cancels != 1 || len(ss.Errors) > 0 {
				t.Errorf("server: %d cancels, errors %q", ss.Cancels, ss.Errors)
			}
			if ms := ss.Truncates[0].AudioEndMs; ms < 100 || ms > 8000 {
				t.Errorf("truncated at %d ms, want the ~100+ ms played", ms)
			}
			// No cancel when nothing is in progress: no server error.
			if err := conn.Interrupt(ctx); err != nil {
				t.Fatal(err)
			}
			adaptertest.Say(t, ctx, conn, 24000, "wait wait")
			r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "sorry go on" {
				t.Errorf("after barge-in the reply was %q", final)
			}
			if ss := peer.Sessions()[0]; len(ss.Errors) > 0 || ss.Cancels != 1 {
				t.Errorf("server: %d cancels, errors %q; want one cancel, no errors", ss.Cancels, ss.Errors)
			}
		})
	})
	t.Run("server turn detection", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Greeting: long, ChunkDelay: 20 * time.Millisecond, Turns: []realtimepeer.Turn{{Reply: "yes"}}})
			a.Greeting = true
			a.TurnDetection = &realtime.TurnDetection{Type: "server_vad", SilenceDuration: 200 * time.Millisecond}
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
			adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentInterrupted))
			if last := r.Events[len(r.Events)-1]; !strings.Contains(last.Text, "turn_detected") {
				t.Errorf("interruption %q, want the server's turn_detected", last.Text)
			}
			if err := conn.EndUtterance(ctx); err != nil {
				t.Fatal(err)
			}
			r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "yes" {
				t.Errorf("reply %q, want yes", final)
			}
		})
	})
}

func TestRealtimeToolCalls(t *testing.T) {
	turns := []realtimepeer.Turn{{ToolCall: &realtimepeer.ToolCall{Name: "book", Arguments: `{"party":2,"time":"19:00"}`}, Reply: "Booked"}}
	tools := []realtime.Tool{{Name: "book", Description: "Books a table", Parameters: json.RawMessage(`{"type":"object","properties":{"party":{"type":"integer"}}}`)}}
	t.Run("answered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			peer, a := memRealtime(t, realtimepeer.Config{Turns: turns})
			a.Tools = tools
			var mu sync.Mutex
			var got []voicetest.ToolCall
			a.OnToolCall = func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
				mu.Lock()
				got = append(got, call)
				mu.Unlock()
				return json.RawMessage(`{"confirmation":"ABC123"}`), nil
			}
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			if !conn.Capabilities().ToolEvents {
				t.Error("ToolEvents false")
			}
			adaptertest.Say(t, ctx, conn, 24000, "book it")
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			var kinds []string
			for _, ev := range r.Events {
				if ev.Kind != voicetest.AgentAudio && ev.Kind != voicetest.AgentTranscript {
					kinds = append(kinds, ev.Kind.String())
				}
			}
			if got := strings.Join(kinds, " "); got != "tool_call tool_result agent_turn_end" {
				t.Errorf("events %s, want tool_call tool_result agent_turn_end (and the reply's audio)", got)
			}
			var call, res *voicetest.ToolCall
			for _, ev := range r.Events {
				switch ev.Kind {
				case voicetest.AgentToolCall:
					call = ev.Tool
				case voicetest.AgentToolResult:
					res = ev.Tool
				}
			}
			if call == nil || call.Name != "book" || string(call.Arguments) != `{"party":2,"time":"19:00"}` || call.ID == "" {
				t.Errorf("tool call %+v", call)
			}
			if res == nil || res.ID != call.ID || string(res.Result) != `{"confirmation":"ABC123"}` || res.IsError {
				t.Errorf("tool result %+v", res)
			}
			if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Booked" {
				t.Errorf("reply after the tool %q", final)
			}
			ss := peer.Sessions()[0]
			if len(ss.ToolOutputs) != 1 || ss.ToolOutputs[0].CallID != call.ID || ss.ToolOutputs[0].Output != `{"confirmation":"ABC123"}` || len(ss.Errors) > 0 {
				t.Errorf("server: outputs %+v, errors %q", ss.ToolOutputs, ss.Errors)
			}
			if !strings.Contains(string(ss.Update), `"tools":[{"type":"function","name":"book","description":"Books a table","parameters":{"type":"object"`) || !strings.Contains(string(ss.Update), `"tool_choice":"auto"`) {
				t.Errorf("session.update tools: %s", ss.Update)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0].Name != "book" {
				t.Errorf("OnToolCall got %+v", got)
			}
		})
	})
	t.Run("handler error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Turns: turns})
			a.Tools = tools
			a.OnToolCall = func(context.Context, voicetest.ToolCall) (json.RawMessage, error) {
				return nil, errors.New("no tables left")
			}
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			adaptertest.Say(t, ctx, conn, 24000, "book it")
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentToolResult))
			res := r.Events[len(r.Events)-1].Tool
			if !res.IsError || string(res.Result) != `{"error":"no tables left"}` {
				t.Errorf("result %+v, want an error result", res)
			}
			adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		})
	})
	t.Run("unanswered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Turns: turns})
			a.Tools = tools
			ctx := t.Context()
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			adaptertest.Say(t, ctx, conn, 24000, "book it")
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			if len(r.Events) != 2 || r.Events[0].Kind != voicetest.AgentToolCall {
				t.Errorf("events %+v, want the tool call then the turn end", r.Events)
			}
		})
	})
}

func TestRealtimeHangUp(t *testing.T) { synctest.Test(t, testRealtimeHangUp) }

func testRealtimeHangUp(t *testing.T) {
	_, a := memRealtime(t, realtimepeer.Config{HangUpAfter: 1, Turns: []realtimepeer.Turn{{Reply: "bye now"}}})
	ctx := t.Context()
	conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
	adaptertest.Say(t, ctx, conn, 24000, "bye")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentHangUp))
	n := len(r.Events)
	if r.Events[n-2].Kind != voicetest.AgentTurnEnd || !strings.Contains(r.Events[n-1].Text, "session ended") {
		t.Errorf("last events %+v, want the turn end then a hang-up giving the reason", r.Events[n-2:])
	}
	if _, err := conn.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Fatalf("Recv after hang-up: %v", err)
	}
	for name, err := range map[string]error{
		"SendAudio":    conn.SendAudio(ctx, pcm.Silence(24000, 20*time.Millisecond)),
		"EndUtterance": conn.EndUtterance(ctx),
		"SendText":     conn.SendText(ctx, "hello"),
		"Interrupt":    conn.Interrupt(ctx),
	} {
		if !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("%s after hang-up: %v, want ErrTransportClosed", name, err)
		}
	}
}

func TestRealtimeMalformedFrames(t *testing.T) {
	cases := []struct{ frame, want string }{
		{`{"type":"response.output_audio.delta",`, "not a JSON Realtime event"},
		{`{"event_id":"e1"}`, `no "type" field`},
		{`{"type":"response.output_audio.delta","delta":"not base64!"}`, "delta is not base64"},
		{`{"type":"response.output_audio.delta","delta":"AAAA"}`, "2 bytes a sample"},
		{`{"type":"response.audio.delta"}`, "without audio in delta"},
		{`{"type":"response.output_audio_transcript.done"}`, "without transcript"},
		{`{"type":"response.done","response":{"id":"r","status":"exploded"}}`, `unknown status "exploded"`},
		{`{"type":"error"}`, `without an "error" object`},
	}
	var frames []string
	for _, c := range cases {
		frames = append(frames, c.frame)
	}
	// Unknown events are skipped (logged once); a server error is a
	// *realtime.Error, not a frame error.
	frames = append(frames, `{"type":"response.dance"}`, `{"type":"response.dance"}`,
		`{"type":"error","event_id":"ev_1","error":{"type":"server_error","code":null,"message":"The server had an error","param":null,"event_id":null}}`)
	peer := realtimepeer.New(t, realtimepeer.Config{Send: frames, Greeting: "hi"})
	a := realtimeAgent(peer)
	a.Greeting = true
	var logs adaptertest.SyncBuffer
	s := adaptertest.Session(t, 24000)
	s.Logf = func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }
	conn := dialRealtime(t, a, s)
	for _, c := range cases {
		_, err := conn.Recv(t.Context())
		var fe *wire.FrameError
		if !errors.As(err, &fe) || fe.Adapter != "openai-realtime" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("frame %s: Recv: %v, want a FrameError containing %q", c.frame, err, c.want)
		}
	}
	_, err := conn.Recv(t.Context())
	var re *realtime.Error
	if !errors.As(err, &re) || re.Type != "server_error" || re.Message != "The server had an error" {
		t.Errorf("Recv: %v, want the server's *realtime.Error", err)
	}
	var fe *wire.FrameError
	if errors.As(err, &fe) {
		t.Errorf("server error reported as a frame error: %v", err)
	}
	adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if n := strings.Count(string(logs.Bytes()), `ignoring server event "response.dance"`); n != 1 {
		t.Errorf("unknown event logged %d times, want once:\n%s", n, logs.Bytes())
	}
}

func TestRealtimeOddAudio(t *testing.T) {
	peer := realtimepeer.New(t, realtimepeer.Config{Greeting: "hi", Fault: realtimepeer.OddAudio})
	a := realtimeAgent(peer)
	a.Greeting = true
	conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
	var frameErrs int
	for {
		ev, err := conn.Recv(t.Context())
		var fe *wire.FrameError
		if errors.As(err, &fe) {
			frameErrs++
			if !errors.Is(err, pcm.ErrOddLength) {
				t.Errorf("odd audio: %v, want ErrOddLength", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == voicetest.AgentAudio {
			t.Fatalf("odd-length audio was delivered (%d samples), not rejected", ev.Audio.Len())
		}
		if ev.Kind == voicetest.AgentTurnEnd {
			break
		}
	}
	if frameErrs != 4 { // 400 ms in 100 ms deltas
		t.Errorf("%d frame errors, want one per delta (4)", frameErrs)
	}
}

func TestRealtimeServerErrors(t *testing.T) {
	peer := realtimepeer.New(t, realtimepeer.Config{Turns: []realtimepeer.Turn{{Reply: "text reply"}}})
	ctx := t.Context()
	conn := dialRealtime(t, realtimeAgent(peer), adaptertest.Session(t, 24000))
	// 40 ms is below the server's 100 ms minimum per commit.
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 40*time.Millisecond, 9000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Recv(ctx)
	var re *realtime.Error
	if !errors.As(err, &re) || re.Code != "input_audio_buffer_commit_empty" {
		t.Fatalf("Recv: %v, want the server's input_audio_buffer_commit_empty error", err)
	}
	if !strings.Contains(err.Error(), "100ms") {
		t.Errorf("error %q does not pass on the server's explanation", err)
	}
	// The response.create that followed the failed commit still runs; the
	// conversation goes on, and text works too.
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if err := conn.SendText(ctx, "hello in text"); err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if ss := peer.Sessions()[0]; len(ss.Texts) != 1 || ss.Texts[0] != "hello in text" {
		t.Errorf("server texts %q", ss.Texts)
	}
	// EndUtterance with nothing said commits nothing.
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendText(ctx, "  "); err == nil {
		t.Error("SendText of blank text succeeded")
	}
}

func TestRealtimeConnectErrors(t *testing.T) {
	peer := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-right"})
	ctx := t.Context()
	s := adaptertest.Session(t, 24000)
	t.Run("wrong key", func(t *testing.T) {
		a := realtimeAgent(peer)
		a.APIKey = "sk-wrong"
		_, err := a.Connect(ctx, s)
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("Connect with a wrong key: %v, want HTTP 401", err)
		}
	})
	t.Run("session rejected", func(t *testing.T) {
		// The beta header makes the server speak beta, which rejects the
		// GA session shape, as OpenAI does.
		a := realtimeAgent(peer)
		a.APIKey = "sk-right"
		a.Header = http.Header{"Openai-Beta": {"realtime=v1"}}
		_, err := a.Connect(ctx, s)
		var re *realtime.Error
		if !errors.As(err, &re) || re.Code != "unknown_parameter" || !strings.Contains(err.Error(), "configuring the session") {
			t.Fatalf("Connect: %v, want the server's unknown_parameter error", err)
		}
		adaptertest.CheckNoLeak(t)
	})
	t.Run("no key for OpenAI", func(t *testing.T) {
		t.Setenv("OPENAI_API_KEY", "")
		_, err := realtime.New("").Connect(ctx, s)
		if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
			t.Fatalf("Connect without a key: %v, want an error naming OPENAI_API_KEY", err)
		}
	})
	t.Run("key from the environment", func(t *testing.T) {
		t.Setenv("OPENAI_API_KEY", "sk-right")
		a := realtime.New("")
		a.URL = peer.URL
		conn := dialRealtime(t, a, s)
		_ = conn
		if ss := peer.Sessions(); ss[len(ss)-1].Model != realtime.DefaultModel {
			t.Errorf("model %q, want the default", ss[len(ss)-1].Model)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		for name, a := range map[string]*realtime.Agent{
			"http URL":    {URL: "http://127.0.0.1:1/v1/realtime"},
			"VAD type":    {TurnDetection: &realtime.TurnDetection{Type: "psychic"}},
			"eagerness":   {TurnDetection: &realtime.TurnDetection{Type: "semantic_vad", Eagerness: "frantic"}},
			"threshold":   {TurnDetection: &realtime.TurnDetection{Threshold: 2}},
			"tool name":   {Tools: []realtime.Tool{{}}},
			"tool schema": {Tools: []realtime.Tool{{Name: "x", Parameters: json.RawMessage(`{`)}}},
			"tool choice": {ToolChoice: "sometimes"},
		} {
			if _, err := a.Connect(ctx, s); err == nil {
				t.Errorf("%s: Connect succeeded", name)
			}
		}
		if _, err := realtimeAgent(peer).Connect(ctx, adaptertest.Session(t, 0)); !errors.Is(err, pcm.ErrBadRate) {
			t.Errorf("rate 0: %v", err)
		}
	})
}

func TestRealtimeTimeouts(t *testing.T) {
	t.Run("session never confirmed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := realtime.New("")
			a.URL = memSilent(t, a)
			a.DialTimeout = 200 * time.Millisecond
			_, err := a.Connect(t.Context(), adaptertest.Session(t, 24000))
			var te *voicetest.TimeoutError
			if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || !strings.Contains(err.Error(), "session.updated") {
				t.Fatalf("Connect: %v, want a connect timeout naming session.updated", err)
			}
			adaptertest.CheckNoLeak(t)
		})
	})
	t.Run("recv deadline leaves the conn usable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Turns: []realtimepeer.Turn{{Reply: "ok"}}})
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Recv from a quiet server: %v", err)
			}
			adaptertest.Say(t, t.Context(), conn, 24000, "hello")
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		})
	})
	t.Run("mute model times out, not hangs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Fault: realtimepeer.Mute})
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			adaptertest.Say(t, t.Context(), conn, 24000, "hello")
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			if ev, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Recv: %+v, %v; want DeadlineExceeded", ev, err)
			}
		})
	})
	t.Run("stalled server is declared dead by keepalive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Fault: realtimepeer.Stall})
			a.PingInterval, a.PongTimeout, a.CloseTimeout = 20*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := conn.Recv(ctx)
			if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "PongTimeout") {
				t.Fatalf("Recv: %v, want a keepalive transport error naming PongTimeout", err)
			}
		})
	})
	t.Run("slow model that answers pings is not killed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{ReplyDelay: 600 * time.Millisecond, Turns: []realtimepeer.Turn{{Reply: "finally"}}})
			a.PingInterval, a.PongTimeout = 20*time.Millisecond, 100*time.Millisecond
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			adaptertest.Say(t, t.Context(), conn, 24000, "hello")
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		})
	})
	t.Run("aborted connection is a transport error, not a hang-up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memRealtime(t, realtimepeer.Config{Fault: realtimepeer.Abort})
			conn := dialRealtime(t, a, adaptertest.Session(t, 24000))
			ev, err := conn.Recv(t.Context())
			var tce *voicetest.TransportClosedError
			if !errors.As(err, &tce) || tce.Err == nil {
				t.Fatalf("Recv: %+v, %v; want a TransportClosedError with a cause", ev, err)
			}
		})
	})
}

func TestRealtimeCaptureHasNoKey(t *testing.T) { synctest.Test(t, testRealtimeCaptureHasNoKey) }

func testRealtimeCaptureHasNoKey(t *testing.T) {
	const canary = "sk-CANARY-5f1e0c2b"
	_, a := memRealtime(t, realtimepeer.Config{APIKey: canary, Greeting: "hi"})
	a.APIKey = canary
	a.Greeting = true
	capture := &adaptertest.SyncBuffer{}
	var logs adaptertest.SyncBuffer
	s := adaptertest.Session(t, 24000)
	s.Capture = capture
	s.Logf = func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }
	ctx := t.Context()
	conn, err := a.Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	adaptertest.Say(t, ctx, conn, 24000, "hello")
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	adaptertest.CheckNoLeak(t)
	for name, b := range map[string][]byte{"capture": capture.Bytes(), "log": logs.Bytes()} {
		if strings.Contains(string(b), canary) || strings.Contains(string(b), "CANARY") {
			t.Errorf("the API key is in the %s", name)
		}
	}
	recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	// The two directions interleave as the machine schedules them; check
	// the order of each.
	seqs := map[string][]string{}
	for _, r := range recs {
		if r.Dir == "note" {
			seqs["send"] = append(seqs["send"], "note:"+r.Type)
			seqs["recv"] = append(seqs["recv"], "note:"+r.Type)
			continue
		}
		var m struct{ Type string }
		if err := json.Unmarshal(r.Data, &m); err != nil {
			t.Fatalf("captured frame is not JSON: %s", r.Data)
		}
		if q := seqs[r.Dir]; len(q) == 0 || q[len(q)-1] != m.Type {
			seqs[r.Dir] = append(q, m.Type)
		}
	}
	for dir, want := range map[string]string{
		"send": "note:open session.update response.create input_audio_buffer.append input_audio_buffer.commit response.create note:close note:closed",
		"recv": "note:open session.created session.updated response.created response.output_item.added conversation.item.added response.content_part.added response.output_audio_transcript.delta response.output_audio.delta response.output_audio.done response.output_audio_transcript.done response.content_part.done response.output_item.done conversation.item.done response.done input_audio_buffer.committed conversation.item.added conversation.item.done response.created",
	} {
		if got := strings.Join(seqs[dir], " "); !strings.HasPrefix(got, want) {
			t.Errorf("captured %s sequence\n%s\nwant it to start\n%s", dir, got, want)
		}
	}
}

func TestRealtimeCapabilities(t *testing.T) {
	peer := realtimepeer.New(t, realtimepeer.Config{})
	conn := dialRealtime(t, realtimeAgent(peer), adaptertest.Session(t, 24000))
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: 24000}
	want := voicetest.Capabilities{Adapter: "openai-realtime", Audio: true, Text: true, InputFormat: f, OutputFormat: f,
		StreamingTranscripts: true, TranscriptAhead: true, NativeInterrupt: true, TurnEnd: true, ToolEvents: true}
	if got := conn.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	readmecaps.Check(t, "`realtime`", conn.Capabilities())
	err := conn.SendDTMF(t.Context(), "1")
	var ue *voicetest.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "in-band") {
		t.Errorf("SendDTMF: %v, want an UnsupportedError pointing to in-band tones", err)
	}
	if err := conn.SendAudio(t.Context(), pcm.Silence(16000, 20*time.Millisecond)); err == nil || !strings.Contains(err.Error(), "16000 Hz") {
		t.Errorf("SendAudio at the wrong rate: %v", err)
	}
}

func TestRealtimeScenario(t *testing.T) { synctest.Test(t, testRealtimeScenario) }

func testRealtimeScenario(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	peer := bistroPeer(t, n.Listen())
	a := bistroAgent(peer)
	a.NetDial = n.Dial
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		// The server's transcript of the user arrives just as the user's
		// turn ends, before or after the runner notes user_stop_speaking;
		// it is checked below instead.
		Golden: voicetest.GoldenOptions{Ignore: []voicetest.EventType{voicetest.EventUserTranscript}},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsToolCall("book", map[string]any{"party": 2}).Err()
			}),
			voicetest.UserSays("Thanks"),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TranscriptText())
	}
	var agent []string
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent {
			agent = append(agent, m.Text)
		}
	}
	if got := strings.Join(agent, "|"); got != "Welcome to the bistro|Booked: A table for two please|Goodbye" {
		t.Errorf("agent said %q", got)
	}
	if res.Ended != "the agent hung up" {
		t.Errorf("Ended = %q, want the agent's hang-up", res.Ended)
	}
	// The timeline holds the transcription deltas and the final texts.
	heard := map[string]bool{}
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventUserTranscript {
			heard[e.Text] = true
		}
	}
	if !heard["A table for two please"] || !heard["Thanks"] {
		t.Errorf("the server's transcripts of the user: %v", heard)
	}
	if len(peer.Sessions()[0].Errors) > 0 {
		t.Errorf("server errors: %q", peer.Sessions()[0].Errors)
	}
}

// A whole conversation with a loopback Realtime server: the greeting, one
// spoken turn committed by EndUtterance, and the server's reply.
func ExampleNew() {
	server := realtimepeer.Start(realtimepeer.Config{
		Greeting: "Hello how can I help",
		Turns:    []realtimepeer.Turn{{UserTranscript: "what time is it", Reply: "It is noon"}},
	})
	defer server.Close()

	agent := realtime.New("gpt-realtime")
	agent.URL = server.URL // default: OpenAI's endpoint
	agent.APIKey = "sk-example"
	agent.Greeting = true                  // the agent speaks first
	agent.InputTranscription = "whisper-1" // user transcripts as events
	ctx := context.Background()
	const rate = 16000 // resampled to and from Realtime's 24 kHz
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: rate, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	listen := func() {
		var audio time.Duration
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				fmt.Println(err)
				return
			}
			switch ev.Kind {
			case voicetest.AgentAudio:
				audio += ev.Audio.Duration()
			case voicetest.UserTranscript:
				if ev.Final {
					fmt.Printf("server heard %q\n", ev.Text)
				}
			case voicetest.AgentTranscript:
				if ev.Final {
					fmt.Printf("agent said %q (%v of audio)\n", ev.Text, audio)
				}
			case voicetest.AgentTurnEnd:
				return
			}
		}
	}
	listen()
	for _, f := range fixtures.WordTones("what time is it", rate).Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := conn.EndUtterance(ctx); err != nil { // commit + response.create
		fmt.Println(err)
		return
	}
	listen()
	// Output:
	// agent said "Hello how can I help" (2s of audio)
	// server heard "what time is it"
	// agent said "It is noon" (1.2s of audio)
}

// A Realtime model that never answers fails the scenario with a typed
// first-chunk timeout, not a hang.
func TestRealtimeScenarioTimeout(t *testing.T) { synctest.Test(t, testRealtimeScenarioTimeout) }

func testRealtimeScenarioTimeout(t *testing.T) {
	peer, a := memRealtime(t, realtimepeer.Config{Fault: realtimepeer.Mute})
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Pacing:    voicetest.PaceFast,
		Timeouts:  voicetest.Timeouts{FirstChunk: 300 * time.Millisecond},
		Script:    []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	var te *voicetest.TimeoutError
	if res == nil || !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk || te.Turn != 1 {
		t.Fatalf("Run: %v, want a first-chunk TimeoutError in turn 1", err)
	}
	if ss := peer.Sessions()[0]; len(ss.Commits) != 1 || ss.ResponseCreates != 1 {
		t.Errorf("server saw %d commits and %d response.create, want 1 and 1", len(ss.Commits), ss.ResponseCreates)
	}
}

func TestRealtimeSendEvent(t *testing.T) { synctest.Test(t, testRealtimeSendEvent) }

func testRealtimeSendEvent(t *testing.T) {
	peer, a := memRealtime(t, realtimepeer.Config{Turns: []realtimepeer.Turn{{Reply: "You said {heard}"}}})
	ctx := t.Context()
	conn := dialRealtime(t, a, adaptertest.Session(t, 24000)).(realtime.Conn)
	for _, ev := range []string{
		`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello raw"}]}}`,
		`{"type":"response.create"}`,
	} {
		if err := conn.SendEvent(ctx, json.RawMessage(ev)); err != nil {
			t.Fatal(err)
		}
	}
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "You said hello raw" {
		t.Errorf("reply %q", final)
	}
	for _, bad := range []string{`{"type":`, `[1]`, `{"audio":"AAAA"}`, "{\n\"type\":\"response.create\"}"} {
		if err := conn.SendEvent(ctx, json.RawMessage(bad)); err == nil {
			t.Errorf("SendEvent(%q) succeeded", bad)
		}
	}
	if ss := peer.Sessions()[0]; len(ss.Errors) > 0 || len(ss.Texts) != 1 {
		t.Errorf("server: texts %q, errors %q", ss.Texts, ss.Errors)
	}
}

// A barge-in through the runner: Interrupt uses the native response.cancel
// (with a truncate of the audio played so far), the server's cancelled
// response.done becomes agent_interrupted, and the conversation goes on.
func TestRealtimeScenarioInterrupt(t *testing.T) { synctest.Test(t, testRealtimeScenarioInterrupt) }

func testRealtimeScenarioInterrupt(t *testing.T) {
	peer, a := memRealtime(t, realtimepeer.Config{
		Greeting:   strings.Repeat("la ", 20), // 8 s of audio streamed over ~1.6 s
		ChunkDelay: 20 * time.Millisecond,
		Turns:      []realtimepeer.Turn{{Reply: "Sure, {heard}"}},
	})
	a.Greeting = true
	res := adaptertest.BargeInScenario(t, a)
	if len(res.Latency.InterruptResponse) != 1 || res.Latency.InterruptResponse[0] > time.Second {
		t.Errorf("interrupt response times %v", res.Latency.InterruptResponse)
	}
	last := res.Transcript[len(res.Transcript)-1]
	if last.Role != voicetest.RoleAgent || last.Text != "Sure, Make it eight" {
		t.Errorf("last message %+v, want the reply to the barge-in", last)
	}
	ss := peer.Sessions()[0]
	if ss.Cancels != 1 || len(ss.Truncates) != 1 || len(ss.Errors) > 0 {
		t.Fatalf("server: %d cancels, truncates %+v, errors %q", ss.Cancels, ss.Truncates, ss.Errors)
	}
	if ms := ss.Truncates[0].AudioEndMs; ms < 300 || ms > 2000 {
		t.Errorf("truncated at %d ms, want about the 400 ms played", ms)
	}
}
