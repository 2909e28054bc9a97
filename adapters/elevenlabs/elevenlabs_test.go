package elevenlabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// recvQuiet receives events until none arrives for quiet (ConvAI marks no
// end of the agent's turn), and returns them.
func recvQuiet(t testing.TB, conn voicetest.Conn, quiet time.Duration) adaptertest.TurnResult {
	t.Helper()
	var r adaptertest.TurnResult
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), quiet)
		ev, err := conn.Recv(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && len(r.Events) > 0 {
			return r
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Recv after %d events: %v", len(r.Events), err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no quiet period of %v within 10s (%d events)", quiet, len(r.Events))
		}
		if err == nil {
			r.Events = append(r.Events, ev)
			if ev.Kind == voicetest.AgentAudio {
				r.Audio += ev.Audio.Duration()
			}
		}
	}
}

func elevenAgent(peer *elevenpeer.Server) *elevenlabs.Agent {
	a := elevenlabs.New("agent_test")
	a.URL = peer.URL
	a.APIKey = "xi-test"
	return a
}

// memEleven starts a peer of cfg on a new in-memory network and returns it
// with elevenAgent reaching it through the network: for a test in a
// testing/synctest bubble, on virtual time. (The conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.)
func memEleven(t *testing.T, cfg elevenpeer.Config) (*elevenpeer.Server, *elevenlabs.Agent) {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	cfg.Listener = n.Listen()
	peer := elevenpeer.New(t, cfg)
	a := elevenAgent(peer)
	a.NetDial = n.Dial
	return peer, a
}

func dialEleven(t testing.TB, a *elevenlabs.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	return adaptertest.DialAgent(t, a, s)
}

func TestElevenLabsConversation(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		rate          int
		minSNR        float64
	}{
		{"pcm16k", "pcm_16000", "pcm_16000", 24000, 40},
		{"ulaw in, pcm24k out", "ulaw_8000", "pcm_24000", 16000, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				peer, a := memEleven(t, elevenpeer.Config{
					APIKey: "xi-test", InputFormat: tc.in, OutputFormat: tc.out,
					FirstMessage: "Hi this is the bistro", PingInterval: 30 * time.Millisecond,
					Turns: []elevenpeer.Turn{
						{UserTranscript: "a table for two", Reply: "For two people"},
						{UserTranscript: "at seven", Reply: "Seven it is"},
					},
				})
				a.Prompt = "You take bookings."
				a.FirstMessage = "Hello from the override"
				a.Language = "en"
				a.DynamicVariables = map[string]any{"caller": "Ada", "visits": 3}
				ctx := t.Context()
				conn := dialEleven(t, a, adaptertest.Session(t, tc.rate))
				caps := conn.Capabilities()
				wantIn := voicetest.AudioFormat{Encoding: "pcm16", Rate: 16000}
				if tc.in == "ulaw_8000" {
					wantIn = voicetest.AudioFormat{Encoding: "mulaw", Rate: 8000}
				}
				if caps.InputFormat != wantIn {
					t.Errorf("InputFormat %+v, want %+v from the metadata", caps.InputFormat, wantIn)
				}
				readmecaps.Check(t, "`elevenlabs`", caps)

				r := recvQuiet(t, conn, 300*time.Millisecond)
				if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Hello from the override" {
					t.Errorf("first message %q, want the override", final)
				}
				adaptertest.WantDurationNear(t, "first message audio", r.Audio, 4*fixtures.WordDuration, time.Millisecond)
				var got []int16
				for _, ev := range r.Events {
					if ev.Kind == voicetest.AgentAudio {
						if ev.Audio.Rate != tc.rate {
							t.Fatalf("agent audio at %d Hz, want %d", ev.Audio.Rate, tc.rate)
						}
						got = append(got, ev.Audio.Samples...)
					}
				}
				want, _ := pcm.Resample(fixtures.WordTones("Hello from the override", 16000), tc.rate)
				if tc.out == "pcm_24000" {
					want, _ = pcm.Resample(fixtures.WordTones("Hello from the override", 24000), tc.rate)
				}
				// The streaming resampler gives the samples of a one-shot
				// pcm.Resample (usually bit-identical, SNR +Inf); only a flush
				// forced by a gap of 100 ms between events, which a loaded
				// machine can cause, leaves a faint seam. A wrong rate or a lost
				// event gives about 0 dB.
				if s := adaptertest.SNR(got, want.Samples, tc.rate/100); s < tc.minSNR {
					t.Errorf("agent audio SNR %.1f dB, want ≥ %v dB", s, tc.minSNR)
				} else {
					t.Logf("agent audio (%s → %d Hz) SNR %.1f dB", tc.out, tc.rate, s)
				}
				for i, want := range []struct{ user, reply string }{{"a table for two", "For two people"}, {"at seven", "Seven it is"}} {
					adaptertest.Say(t, ctx, conn, tc.rate, "one two")
					r := recvQuiet(t, conn, 300*time.Millisecond)
					if final, _ := adaptertest.TurnText(r.Events, voicetest.UserTranscript); final != want.user {
						t.Errorf("turn %d: user transcript %q, want %q", i+1, final, want.user)
					}
					if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != want.reply {
						t.Errorf("turn %d: agent said %q, want %q", i+1, final, want.reply)
					}
					adaptertest.WantDurationNear(t, "reply audio", r.Audio, time.Duration(len(strings.Fields(want.reply)))*fixtures.WordDuration, time.Millisecond)
				}
				if err := conn.Close(); err != nil {
					t.Fatal(err)
				}
				c, err := peer.Wait(ctx, 0, func(c elevenpeer.Conversation) bool { return c.Ended })
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Errors) > 0 {
					t.Errorf("server saw protocol errors: %q", c.Errors)
				}
				if c.UserTurns != 2 || c.Replies != 2 || c.Interruptions != 0 {
					t.Errorf("server: %d user turns, %d replies, %d interruptions", c.UserTurns, c.Replies, c.Interruptions)
				}
				if c.Pings == 0 || c.Pongs < c.Pings-1 {
					t.Errorf("server sent %d pings and got %d correct pongs", c.Pings, c.Pongs)
				}
				wantInit := `{"type":"conversation_initiation_client_data","conversation_config_override":{"agent":{"prompt":{"prompt":"You take bookings."},"first_message":"Hello from the override","language":"en"}},"dynamic_variables":{"caller":"Ada","visits":3}}`
				if string(c.Init) != wantInit {
					t.Errorf("initiation data\n%s\nwant\n%s", c.Init, wantInit)
				}
				inRate := parseRate(tc.in)
				// Each utterance: 800 ms of speech and the default 330 ms of
				// silence, at the input rate.
				if got, want := len(c.Audio), 2*(pcm.SamplesFor(inRate, 800*time.Millisecond)+pcm.SamplesFor(inRate, elevenlabs.DefaultEndSilence)); got != want {
					t.Errorf("server got %d samples of user audio, want %d", got, want)
				}
			})
		})
	}
}

func parseRate(format string) int {
	var r int
	fmt.Sscanf(format[strings.Index(format, "_")+1:], "%d", &r)
	return r
}

func TestElevenLabsBargeIn(t *testing.T) { synctest.Test(t, testElevenLabsBargeIn) }

func testElevenLabsBargeIn(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{
		FirstMessage: strings.Repeat("la ", 20), ChunkDelay: 20 * time.Millisecond,
		Turns: []elevenpeer.Turn{{UserTranscript: "stop", Reply: "Sorry go ahead"}},
	})
	ctx := t.Context()
	conn := dialEleven(t, a, adaptertest.Session(t, 24000))
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentInterrupted))
	if r.Audio >= 8*time.Second {
		t.Errorf("got the whole first message (%v) despite the barge-in", r.Audio)
	}
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentData))
	corr := r.Events[len(r.Events)-1]
	var m map[string]string
	if err := json.Unmarshal(corr.Data, &m); err != nil || corr.Text != "agent_response_correction" || !strings.HasPrefix(m["corrected"], "la") || len(m["corrected"]) >= len(m["original"]) {
		t.Errorf("correction %s %s", corr.Text, corr.Data)
	}
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	r = recvQuiet(t, conn, 300*time.Millisecond)
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Sorry go ahead" {
		t.Errorf("reply after the barge-in %q", final)
	}
	if c := peer.Conversations()[0]; c.Interruptions != 1 || len(c.Errors) > 0 {
		t.Errorf("server: %d interruptions, errors %q", c.Interruptions, c.Errors)
	}
}

// Tool calls both ways, on virtual time (memEleven): the 300 ms of quiet
// that ends the turn costs no wall time.
func TestElevenLabsToolCalls(t *testing.T) { synctest.Test(t, testElevenLabsToolCalls) }

func testElevenLabsToolCalls(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{
		Turns: []elevenpeer.Turn{{UserTranscript: "book it", ToolCall: &elevenpeer.ToolCall{Name: "book", Parameters: `{"party":2}`}, Reply: "Booked"}},
		Send:  []string{`{"type":"agent_tool_response","agent_tool_response":{"tool_name":"end_call","tool_call_id":"t9","tool_type":"system","is_error":false}}`},
	})
	a.OnToolCall = func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
		if call.Name != "book" {
			return nil, fmt.Errorf("unknown tool %s", call.Name)
		}
		return json.RawMessage(`{"confirmation":"ABC"}`), nil
	}
	ctx := t.Context()
	conn := dialEleven(t, a, adaptertest.Session(t, 16000))
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentToolResult))
	if res := r.Events[0].Tool; res.Name != "end_call" || res.ID != "t9" || string(res.Result) != `{"tool_type":"system"}` {
		t.Errorf("server tool response %+v", res)
	}
	adaptertest.Say(t, ctx, conn, 16000, "book it")
	r = recvQuiet(t, conn, 300*time.Millisecond)
	if got := adaptertest.Kinds(r.Events); !strings.Contains(got, "user_transcript tool_call tool_result agent_transcript") {
		t.Errorf("events %s", got)
	}
	for _, ev := range r.Events {
		if ev.Kind == voicetest.AgentToolCall && (ev.Tool.ID != "toolu_1" || string(ev.Tool.Arguments) != `{"party":2}`) {
			t.Errorf("tool call %+v", ev.Tool)
		}
		if ev.Kind == voicetest.AgentToolResult && string(ev.Tool.Result) != `{"confirmation":"ABC"}` {
			t.Errorf("tool result %+v", ev.Tool)
		}
	}
	c := peer.Conversations()[0]
	if len(c.ToolResults) != 1 || string(c.ToolResults[0]) != `{"type":"client_tool_result","tool_call_id":"toolu_1","result":"{\"confirmation\":\"ABC\"}","is_error":false}` || len(c.Errors) > 0 {
		t.Errorf("server: tool results %s, errors %q", c.ToolResults, c.Errors)
	}
}

func TestElevenLabsHangUp(t *testing.T) {
	peer := elevenpeer.New(t, elevenpeer.Config{HangUpAfter: 1, Turns: []elevenpeer.Turn{{Reply: "Goodbye"}}})
	ctx := t.Context()
	conn := dialEleven(t, elevenAgent(peer), adaptertest.Session(t, 24000))
	adaptertest.Say(t, ctx, conn, 24000, "bye")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentHangUp))
	if last := r.Events[len(r.Events)-1]; !strings.Contains(last.Text, "end_call") {
		t.Errorf("hang-up reason %q", last.Text)
	}
	adaptertest.WantDurationNear(t, "goodbye audio", r.Audio, fixtures.WordDuration, time.Millisecond)
	if _, err := conn.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Fatalf("Recv after hang-up: %v", err)
	}
	for name, err := range map[string]error{
		"SendAudio":    conn.SendAudio(ctx, pcm.Silence(24000, 20*time.Millisecond)),
		"EndUtterance": conn.EndUtterance(ctx),
		"SendText":     conn.SendText(ctx, "hello"),
	} {
		if !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("%s after hang-up: %v, want ErrTransportClosed", name, err)
		}
	}
}

func TestElevenLabsMalformedFrames(t *testing.T) {
	cases := []struct{ frame, want string }{
		{`{"type":"audio",`, "not a JSON ConvAI event"},
		{`{"audio_event":{}}`, `no "type" field`},
		{`{"type":"audio","audio_event":{"event_id":1}}`, "without audio_event.audio_base_64"},
		{`{"type":"audio","audio_event":{"audio_base_64":"%%%","event_id":1}}`, "not base64"},
		{`{"type":"audio","audio_event":{"audio_base_64":"AAAA","event_id":1}}`, "2 bytes a sample"},
		{`{"type":"agent_response","agent_response_event":{}}`, "without agent_response_event.agent_response"},
		{`{"type":"user_transcript"}`, "without user_transcription_event"},
		{`{"type":"ping","ping_event":{"ping_ms":3}}`, "the pong must echo it"},
		{`{"type":"client_tool_call","client_tool_call":{"tool_name":"x"}}`, "tool_call_id"},
		{`{"type":"conversation_initiation_metadata","conversation_initiation_metadata_event":{"agent_output_audio_format":"pcm_8000","user_input_audio_format":"pcm_8000"}}`, "cannot change mid-conversation"},
	}
	var frames []string
	for _, c := range cases {
		frames = append(frames, c.frame)
	}
	// Stale audio after an interruption is dropped; newer audio is not;
	// unknown events are skipped.
	frames = append(frames,
		`{"type":"interruption","interruption_event":{"event_id":50}}`,
		`{"type":"audio","audio_event":{"audio_base_64":"AAAAAA==","event_id":49}}`,
		`{"type":"juggle"}`,
		`{"type":"audio","audio_event":{"audio_base_64":"AAAAAA==","event_id":51}}`)
	peer := elevenpeer.New(t, elevenpeer.Config{Send: frames, OutputFormat: "pcm_16000"})
	var logs adaptertest.SyncBuffer
	s := adaptertest.Session(t, 16000)
	s.Logf = func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }
	conn := dialEleven(t, elevenAgent(peer), s)
	for _, c := range cases {
		_, err := conn.Recv(t.Context())
		var fe *wire.FrameError
		if !errors.As(err, &fe) || fe.Adapter != "elevenlabs" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("frame %s: Recv: %v, want a FrameError containing %q", c.frame, err, c.want)
		}
	}
	r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentAudio))
	if got := adaptertest.Kinds(r.Events); got != "agent_interrupted" || r.Audio != pcm.DurationOf(2, 16000) {
		t.Errorf("after the interruption: %s with %v of audio, want only the newer 2 samples", got, r.Audio)
	}
	if !strings.Contains(string(logs.Bytes()), `ignoring server event "juggle"`) {
		t.Errorf("unknown event not logged:\n%s", logs.Bytes())
	}
}

// Odd-length audio events are refused, on virtual time (memEleven).
func TestElevenLabsOddAudio(t *testing.T) { synctest.Test(t, testElevenLabsOddAudio) }

func testElevenLabsOddAudio(t *testing.T) {
	_, a := memEleven(t, elevenpeer.Config{FirstMessage: "hi", Fault: elevenpeer.OddAudio})
	conn := dialEleven(t, a, adaptertest.Session(t, 16000))
	for errs := 0; errs < 4; { // 400 ms in 100 ms events
		ev, err := conn.Recv(t.Context())
		switch {
		case err != nil && !errors.Is(err, pcm.ErrOddLength):
			t.Fatalf("Recv: %v, want a frame error wrapping ErrOddLength", err)
		case err != nil:
			errs++
		case ev.Kind == voicetest.AgentAudio:
			t.Fatalf("odd-length audio delivered (%d samples), not rejected", ev.Audio.Len())
		}
	}
}

func TestElevenLabsConnect(t *testing.T) {
	ctx := t.Context()
	s := adaptertest.Session(t, 24000)
	t.Run("private agent needs a key", func(t *testing.T) {
		peer := elevenpeer.New(t, elevenpeer.Config{APIKey: "xi-right"})
		a := elevenAgent(peer)
		a.APIKey = ""
		t.Setenv("ELEVENLABS_API_KEY", "")
		if _, err := a.Connect(ctx, s); err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("Connect without a key: %v, want HTTP 403", err)
		}
		t.Setenv("ELEVENLABS_API_KEY", "xi-right")
		dialEleven(t, a, s)
	})
	t.Run("unknown agent", func(t *testing.T) {
		peer := elevenpeer.New(t, elevenpeer.Config{})
		a := elevenAgent(peer)
		a.AgentID = "agent_nope"
		if _, err := a.Connect(ctx, s); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("Connect to an unknown agent: %v, want HTTP 404", err)
		}
	})
	t.Run("unknown audio format", func(t *testing.T) {
		peer := elevenpeer.New(t, elevenpeer.Config{OutputFormat: "mp3_44100"})
		_, err := elevenAgent(peer).Connect(ctx, s)
		if err == nil || !strings.Contains(err.Error(), `"mp3_44100"`) {
			t.Errorf("Connect: %v, want an error naming the format", err)
		}
		adaptertest.CheckNoLeak(t)
	})
	t.Run("metadata never comes", func(t *testing.T) {
		a := elevenlabs.New("agent_x")
		a.URL = adaptertest.SilentServer(t)
		a.DialTimeout = 200 * time.Millisecond
		_, err := a.Connect(ctx, s)
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || !strings.Contains(err.Error(), "conversation_initiation_metadata") {
			t.Errorf("Connect: %v, want a connect timeout naming the metadata", err)
		}
		adaptertest.CheckNoLeak(t)
	})
	t.Run("signature stays out of dial errors", func(t *testing.T) {
		url := adaptertest.BlackHole(t) // accepts TCP, never answers
		capture := &adaptertest.SyncBuffer{}
		s := adaptertest.Session(t, 24000)
		s.Capture = capture
		a := &elevenlabs.Agent{SignedURL: url + "?agent_id=a&conversation_signature=SECRETSIG", WSOptions: wire.WSOptions{DialTimeout: 100 * time.Millisecond}}
		_, err := a.Connect(ctx, s)
		if err == nil || strings.Contains(err.Error(), "SECRETSIG") || strings.Contains(string(capture.Bytes()), "SECRETSIG") {
			t.Errorf("dial error %v / capture %s shows the signature", err, capture.Bytes())
		}
		a.SignedURL = "ws://127.0.0.1:1/v1/convai/conversation?agent_id=a&conversation_signature=SECRETSIG"
		if _, err := a.Connect(ctx, s); err == nil || strings.Contains(err.Error(), "SECRETSIG") || !strings.Contains(err.Error(), "REDACTED") {
			t.Errorf("refused dial: %v, want the signature redacted", err)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		for name, a := range map[string]*elevenlabs.Agent{
			"no agent":   {},
			"http URL":   {AgentID: "a", URL: "http://127.0.0.1:1/"},
			"bad signed": {SignedURL: "https://example.invalid/?conversation_signature=x"},
			"variables":  {AgentID: "a", URL: "ws://127.0.0.1:1", DynamicVariables: map[string]any{"f": func() {}}},
		} {
			if _, err := a.Connect(ctx, s); err == nil {
				t.Errorf("%s: Connect succeeded", name)
			} else if strings.Contains(err.Error(), "conversation_signature=x") {
				t.Errorf("%s: error shows the signature: %v", name, err)
			}
		}
		if _, err := elevenlabs.New("a").Connect(ctx, adaptertest.Session(t, 0)); !errors.Is(err, pcm.ErrBadRate) {
			t.Errorf("rate 0: %v", err)
		}
	})
}

func TestElevenLabsTimeouts(t *testing.T) {
	t.Run("recv deadline leaves the conn usable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memEleven(t, elevenpeer.Config{})
			conn := dialEleven(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Recv: %v", err)
			}
			adaptertest.Say(t, t.Context(), conn, 24000, "hello")
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentAudio))
		})
	})
	t.Run("stalled server is declared dead by keepalive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memEleven(t, elevenpeer.Config{Fault: elevenpeer.Stall})
			a.PingInterval, a.PongTimeout, a.CloseTimeout = 20*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
			conn := dialEleven(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if _, err := conn.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "PongTimeout") {
				t.Fatalf("Recv: %v, want a keepalive error naming PongTimeout", err)
			}
		})
	})
	t.Run("slow agent that answers pings is not killed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			peer, a := memEleven(t, elevenpeer.Config{ReplyDelay: 600 * time.Millisecond, PingInterval: 50 * time.Millisecond})
			a.PingInterval, a.PongTimeout = 20*time.Millisecond, 100*time.Millisecond
			conn := dialEleven(t, a, adaptertest.Session(t, 24000))
			adaptertest.Say(t, t.Context(), conn, 24000, "hello")
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentAudio))
			if c := peer.Conversations()[0]; c.Pongs == 0 || len(c.Errors) > 0 {
				t.Errorf("server: %d pongs, errors %q", c.Pongs, c.Errors)
			}
		})
	})
	t.Run("aborted connection is a transport error, not a hang-up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memEleven(t, elevenpeer.Config{Fault: elevenpeer.Abort})
			conn := dialEleven(t, a, adaptertest.Session(t, 24000))
			var tce *voicetest.TransportClosedError
			if ev, err := conn.Recv(t.Context()); !errors.As(err, &tce) || tce.Err == nil {
				t.Fatalf("Recv: %+v, %v", ev, err)
			}
		})
	})
}

func TestElevenLabsCaptureHasNoSecrets(t *testing.T) {
	const key, sig = "xi-CANARY-key-77", "CANARYSIG0123"
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				peer, a := memEleven(t, elevenpeer.Config{APIKey: key, Signature: sig, FirstMessage: "hi"})
				a.APIKey = key
				if signed {
					a.APIKey, a.SignedURL = "", peer.SignedURL()
				}
				capture := &adaptertest.SyncBuffer{}
				var logs adaptertest.SyncBuffer
				s := adaptertest.Session(t, 16000)
				s.Capture = capture
				s.Logf = func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }
				conn, err := a.Connect(t.Context(), s)
				if err != nil {
					t.Fatal(err)
				}
				recvQuiet(t, conn, 200*time.Millisecond)
				adaptertest.Say(t, t.Context(), conn, 16000, "hello")
				recvQuiet(t, conn, 200*time.Millisecond)
				if err := conn.Close(); err != nil {
					t.Fatal(err)
				}
				adaptertest.CheckNoLeak(t)
				for name, b := range map[string]string{"capture": string(capture.Bytes()), "log": string(logs.Bytes())} {
					if strings.Contains(b, "CANARY") {
						t.Errorf("a secret is in the %s:\n%s", name, b)
					}
				}
				recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
				if err != nil {
					t.Fatal(err)
				}
				seqs := map[string][]string{}
				for _, r := range recs {
					var m struct {
						Type  string
						Chunk *string `json:"user_audio_chunk"`
					}
					json.Unmarshal(r.Data, &m)
					name := m.Type
					if m.Chunk != nil {
						name = "user_audio_chunk"
					}
					dirs := []string{r.Dir}
					if r.Dir == "note" {
						name, dirs = "note:"+r.Type, []string{"send", "recv"}
						if r.Type == "open" && signed && !strings.Contains(r.Text, "conversation_signature=REDACTED") {
							t.Errorf("open note %q does not show the redacted signature", r.Text)
						}
					}
					for _, d := range dirs {
						if q := seqs[d]; len(q) == 0 || q[len(q)-1] != name {
							seqs[d] = append(q, name)
						}
					}
				}
				for dir, want := range map[string]string{
					"send": "note:open conversation_initiation_client_data user_audio_chunk note:close note:closed",
					"recv": "note:open conversation_initiation_metadata agent_response audio user_transcript vad_score agent_response audio note:close note:closed",
				} {
					if got := strings.Join(seqs[dir], " "); got != want {
						t.Errorf("captured %s sequence\n%s\nwant\n%s", dir, got, want)
					}
				}
			})
		})
	}
}

// Capabilities and a text turn, on virtual time (memEleven): the 300 ms
// of quiet that ends the turn costs no wall time.
func TestElevenLabsCapabilities(t *testing.T) { synctest.Test(t, testElevenLabsCapabilities) }

func testElevenLabsCapabilities(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{})
	conn := dialEleven(t, a, adaptertest.Session(t, 24000))
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: 16000}
	want := voicetest.Capabilities{Adapter: "elevenlabs", Audio: true, Text: true, InputFormat: f, OutputFormat: f,
		StreamingTranscripts: true, TranscriptAhead: true, NativeVAD: true, ToolEvents: true}
	if got := conn.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	readmecaps.Check(t, "`elevenlabs`", conn.Capabilities())
	for name, err := range map[string]error{
		"SendDTMF":  conn.SendDTMF(t.Context(), "1"),
		"Interrupt": conn.Interrupt(t.Context()),
	} {
		var ue *voicetest.UnsupportedError
		if !errors.As(err, &ue) || ue.Alternative == "" {
			t.Errorf("%s: %v, want an UnsupportedError with an alternative", name, err)
		}
	}
	if err := conn.SendAudio(t.Context(), pcm.Silence(16000, 20*time.Millisecond)); err == nil || !strings.Contains(err.Error(), "16000 Hz") {
		t.Errorf("SendAudio at the wrong rate: %v", err)
	}
	if err := conn.SendText(t.Context(), "I'd like a table"); err != nil {
		t.Fatal(err)
	}
	r := recvQuiet(t, conn, 300*time.Millisecond)
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final != "Okay." {
		t.Errorf("reply to text %q", final)
	}
	if c := peer.Conversations()[0]; len(c.Texts) != 1 || c.Texts[0] != "I'd like a table" {
		t.Errorf("server texts %q", c.Texts)
	}
}

func TestElevenLabsScenario(t *testing.T) { synctest.Test(t, testElevenLabsScenario) }

func testElevenLabsScenario(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{
		FirstMessage: "Welcome to the bistro",
		Turns: []elevenpeer.Turn{
			// The agent decodes the user's fake speech (fixtures.FakeTTS,
			// resampled to its 16 kHz) and says it back.
			{Reply: "Booked: {heard}"},
			{Reply: "Goodbye"},
		},
		HangUpAfter:  2,
		PingInterval: 100 * time.Millisecond,
	})
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
		t.Errorf("agent said %q\n%s", got, res.TranscriptText())
	}
	if res.Ended != "the agent hung up" {
		t.Errorf("Ended = %q", res.Ended)
	}
	if c := peer.Conversations()[0]; len(c.Errors) > 0 || c.UserTurns != 2 {
		t.Errorf("server: %d user turns, errors %q", c.UserTurns, c.Errors)
	}
}

// Contextual updates, user activity and raw events, on virtual time
// (memEleven).
func TestElevenLabsExtraMessages(t *testing.T) { synctest.Test(t, testElevenLabsExtraMessages) }

func testElevenLabsExtraMessages(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{})
	ctx := t.Context()
	conn := dialEleven(t, a, adaptertest.Session(t, 16000)).(elevenlabs.Conn)
	if err := conn.SendContextualUpdate(ctx, "The caller is on the VIP list."); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendUserActivity(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendEvent(ctx, json.RawMessage(`{"type":"user_message","text":"raw hello"}`)); err != nil {
		t.Fatal(err)
	}
	r := recvQuiet(t, conn, 300*time.Millisecond)
	if final, _ := adaptertest.TurnText(r.Events, voicetest.UserTranscript); final != "raw hello" {
		t.Errorf("user transcript %q", final)
	}
	// Bounded (on virtual time, so at no wall cost): a message the peer
	// never counts fails here rather than at the binary's timeout.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := peer.Wait(wctx, 0, func(c elevenpeer.Conversation) bool { return c.ContextualUpdates == 1 && c.Activity == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Errors) > 0 {
		t.Errorf("server errors %q", c.Errors)
	}
	for _, bad := range []string{`nope`, `"str"`, "{\n}"} {
		if err := conn.SendEvent(ctx, json.RawMessage(bad)); err == nil {
			t.Errorf("SendEvent(%q) succeeded", bad)
		}
	}
	if err := conn.SendContextualUpdate(ctx, " "); err == nil {
		t.Error("blank contextual update accepted")
	}
}

// A barge-in through the runner: ConvAI has no client cancel, so the user's
// audio overlaps the agent's; the agent detects it and sends interruption.
func TestElevenLabsScenarioInterrupt(t *testing.T) { synctest.Test(t, testElevenLabsScenarioInterrupt) }

func testElevenLabsScenarioInterrupt(t *testing.T) {
	peer, a := memEleven(t, elevenpeer.Config{
		FirstMessage: strings.Repeat("la ", 20),
		ChunkDelay:   20 * time.Millisecond,
		Turns:        []elevenpeer.Turn{{Reply: "Sure, {heard}"}},
	})
	res := adaptertest.BargeInScenario(t, a)
	last := res.Transcript[len(res.Transcript)-1]
	if last.Role != voicetest.RoleAgent || last.Text != "Sure, Make it eight" {
		t.Errorf("last message %+v, want the reply to the barge-in\n%s", last, res.TranscriptText())
	}
	if c := peer.Conversations()[0]; c.Interruptions != 1 || len(c.Errors) > 0 {
		t.Errorf("server: %d interruptions, errors %q", c.Interruptions, c.Errors)
	}
	// The wire statistics: the agent's interruption event (a clear).
	if w := res.Metrics.Wire; w == nil || w.Adapter != "elevenlabs" || w.Clears != 1 || w.FramesIn == 0 || w.FramesOut == 0 {
		t.Errorf("wire statistics %+v, want one clear", w)
	}
}
