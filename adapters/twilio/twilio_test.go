package twilio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// speak sends one user utterance: 300 ms of a loud tone, then (for Fast
// pacing, where the adapter sends no silence of its own) 300 ms of silence
// so that the bot's voice activity detector sees the end of speech.
func speak(t testing.TB, ctx context.Context, conn voicetest.Conn, rate int, pacing twilio.Pacing) {
	t.Helper()
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(rate, 440, 300*time.Millisecond, 9000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
	if pacing == twilio.Fast {
		adaptertest.SendPaced(t, ctx, conn, pcm.Silence(rate, 300*time.Millisecond))
	}
}

func dialTwilio(t testing.TB, a *twilio.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	return adaptertest.DialAgent(t, a, s)
}

// memBot starts a bot of cfg on a new in-memory network and returns it with
// an agent that reaches it through the network: for a test in a
// testing/synctest bubble, on virtual time. (The conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.)
func memBot(t *testing.T, cfg twiliobot.Config) (*twiliobot.Server, *twilio.Agent) {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	cfg.Listener = n.Listen()
	bot := twiliobot.New(t, cfg)
	a := twilio.New(bot.URL)
	a.NetDial = n.Dial
	return bot, a
}

func TestTwilioConversation(t *testing.T) {
	for _, pacing := range []twilio.Pacing{twilio.Fast, twilio.RealTime} {
		t.Run(pacing.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bot, a := memBot(t, twiliobot.Config{Greeting: 200 * time.Millisecond, ReplyDuration: 300 * time.Millisecond})
				a.Pacing = pacing
				a.CustomParameters = map[string]string{"caller": "+15550100", "lang": "en"}
				const rate = 24000
				ctx := t.Context()
				conn := dialTwilio(t, a, adaptertest.Session(t, rate))

				greet := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("greeting"))
				adaptertest.WantDurationNear(t, "greeting audio", greet.Audio, 200*time.Millisecond, 2*time.Millisecond)
				for _, ev := range greet.Events {
					if ev.Kind == voicetest.AgentAudio && ev.Audio.Rate != rate {
						t.Fatalf("agent audio at %d Hz, want the session rate %d", ev.Audio.Rate, rate)
					}
				}
				for turn := 1; turn <= 3; turn++ {
					speak(t, ctx, conn, rate, pacing)
					r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("reply-"+string(rune('0'+turn))))
					adaptertest.WantDurationNear(t, "reply audio", r.Audio, 300*time.Millisecond, 2*time.Millisecond)
				}
				call, err := bot.WaitCall(ctx, 0, func(c twiliobot.Call) bool { return len(c.Echoes) == 4 })
				if err != nil {
					t.Fatal(err)
				}
				if err := conn.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				call, err = bot.WaitCall(ctx, 0, func(c twiliobot.Call) bool { return c.Ended })
				if err != nil {
					t.Fatal(err)
				}
				if len(call.Errors) > 0 {
					t.Errorf("the bot saw protocol errors: %q", call.Errors)
				}
				if !call.Stopped {
					t.Error("the bot never received stop")
				}
				if got, want := strings.Join(call.Echoes, ","), "greeting,reply-1,reply-2,reply-3"; got != want {
					t.Errorf("marks echoed = %s, want %s", got, want)
				}
				if len(call.Utterances) != 3 {
					t.Errorf("the bot heard %d utterances, want 3", len(call.Utterances))
				}
				for i, v := range call.Utterances {
					if v < 14 || v > 16 { // 300 ms of speech = 15 frames
						t.Errorf("utterance %d had %d voiced frames, want 15±1", i+1, v)
					}
				}
				st := call.Start
				if st.CustomParameters["caller"] != "+15550100" || st.CustomParameters["lang"] != "en" {
					t.Errorf("custom parameters = %v", st.CustomParameters)
				}
				if len(st.Tracks) != 1 || st.Tracks[0] != "inbound" {
					t.Errorf("tracks = %v, want [inbound]", st.Tracks)
				}
				if pacing == twilio.RealTime && call.Media < 3*15+10 {
					t.Errorf("RealTime line sent only %d media frames", call.Media)
				}
			})
		})
	}
}

func TestTwilioEndSilence(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{ReplyDuration: 100 * time.Millisecond})
	a := twilio.New(bot.URL)
	a.Pacing = twilio.Fast
	a.EndSilence = 190 * time.Millisecond // 10 frames, what the bot's VAD needs
	ctx := t.Context()
	conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 300*time.Millisecond, 9000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("reply-1"))
	call := bot.Calls()[0]
	if call.Media != 15+10 || len(call.Errors) > 0 {
		t.Errorf("bot got %d media frames (errors %q), want 15 of speech and 10 of silence", call.Media, call.Errors)
	}
	if _, err := (&twilio.Agent{URL: bot.URL, EndSilence: -1}).Connect(ctx, adaptertest.Session(t, 24000)); err == nil {
		t.Error("negative EndSilence accepted")
	}
}

// TestTwilioAudioFidelity checks the audio conversions both ways: user
// speech at 24 kHz → 8 kHz µ-law at the bot, and the bot's 8 kHz µ-law →
// 24 kHz agent audio, against ideal sines. G.711 µ-law alone limits a tone
// at this level to about 38 dB.
func TestTwilioAudioFidelity(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{Greeting: 500 * time.Millisecond})
	a := twilio.New(bot.URL)
	a.Pacing = twilio.Fast
	ctx := t.Context()
	conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
	var got []int16
	adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool {
		got = append(got, ev.Audio.Samples...)
		return adaptertest.IsMark("greeting")(ev)
	})
	want := adaptertest.Tone(24000, 350, 500*time.Millisecond, 8000).Samples
	if len(got) != len(want) {
		t.Fatalf("greeting: %d samples at 24 kHz, want %d", len(got), len(want))
	}
	down := adaptertest.SNR(got, want, 240)
	if down < 35 {
		t.Errorf("agent audio 8 kHz µ-law → 24 kHz: SNR %.1f dB, want ≥ 35 dB", down)
	}
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 500*time.Millisecond, 8000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	call, err := bot.WaitCall(ctx, 0, func(c twiliobot.Call) bool { return c.Media == 25 })
	if err != nil {
		t.Fatal(err)
	}
	up := adaptertest.SNR(call.Audio, adaptertest.Tone(8000, 440, 500*time.Millisecond, 8000).Samples, 80)
	if up < 35 {
		t.Errorf("user audio 24 kHz → 8 kHz µ-law: SNR %.1f dB, want ≥ 35 dB", up)
	}
	t.Logf("SNR: agent audio (bot → voicetest) %.1f dB, user audio (voicetest → bot) %.1f dB", down, up)
}

func TestTwilioCallerMarks(t *testing.T) {
	for _, pacing := range []twilio.Pacing{twilio.Fast, twilio.RealTime} {
		t.Run(pacing.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bot, a := memBot(t, twiliobot.Config{CallerMarks: true, SilenceFrames: 1000, ReplyDuration: 60 * time.Millisecond})
				a.Pacing, a.CallerMarks = pacing, true
				ctx := t.Context()
				conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
				if conn.Capabilities().NativeVAD {
					t.Error("NativeVAD still claimed with CallerMarks")
				}
				readmecaps.Check(t, "`twilio`", conn.Capabilities(), "CallerMarks")
				for turn := 1; turn <= 2; turn++ {
					// No trailing silence: only the mark ends the utterance.
					adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
					if err := conn.EndUtterance(ctx); err != nil {
						t.Fatal(err)
					}
					adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("reply-"+string(rune('0'+turn))))
				}
				call := bot.Calls()[0]
				if got := strings.Join(call.CallerMarks, ","); got != "utt-1,utt-2" || len(call.Errors) > 0 {
					t.Errorf("bot got caller marks %q (errors %q), want utt-1,utt-2", got, call.Errors)
				}
			})
		})
	}
}

// TestTwilioLineBridgesLateAudio: under RealTime pacing, a runner that is
// late with the rest of an utterance (a loaded machine) does not put
// silence in the middle of it: the bot hears one utterance, not two.
func TestTwilioLineBridgesLateAudio(t *testing.T) { synctest.Test(t, testTwilioLineBridgesLateAudio) }

func testTwilioLineBridgesLateAudio(t *testing.T) {
	bot, a := memBot(t, twiliobot.Config{ReplyDuration: 60 * time.Millisecond})
	ctx := t.Context()
	conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 100*time.Millisecond, 9000))
	time.Sleep(300 * time.Millisecond) // longer than the bot's 200 ms silence window
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 100*time.Millisecond, 9000))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("reply-1"))
	call := bot.Calls()[0]
	if len(call.Utterances) != 1 || call.Utterances[0] < 10 || call.Utterances[0] > 11 || len(call.Errors) > 0 {
		t.Errorf("bot heard utterances %v (errors %q), want one of 10 voiced frames", call.Utterances, call.Errors)
	}
}

func TestTwilioMarkEchoWaitsForPlayback(t *testing.T) {
	synctest.Test(t, testTwilioMarkEchoWaitsForPlayback)
}

func testTwilioMarkEchoWaitsForPlayback(t *testing.T) {
	bot, a := memBot(t, twiliobot.Config{Greeting: 500 * time.Millisecond})
	capture := &adaptertest.SyncBuffer{}
	s := adaptertest.Session(t, 16000)
	s.Capture = capture
	conn := dialTwilio(t, a, s)
	adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsMark("greeting"))
	if _, err := bot.WaitCall(t.Context(), 0, func(c twiliobot.Call) bool { return len(c.Echoes) == 1 }); err != nil {
		t.Fatal(err)
	}
	recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	var firstMedia, echo float64 = -1, -1
	for _, r := range recs {
		var m struct{ Event string }
		json.Unmarshal(r.Data, &m)
		switch {
		case r.Dir == "recv" && m.Event == "media" && firstMedia < 0:
			firstMedia = r.TMs
		case r.Dir == "send" && m.Event == "mark":
			echo = r.TMs
		}
	}
	if firstMedia < 0 || echo < 0 {
		t.Fatalf("capture lacks the greeting media or the mark echo:\n%s", capture.Bytes())
	}
	// The echo is due when 500 ms of audio has played; the line checks
	// every 20 ms. This is a lower bound the adapter guarantees, not a
	// measurement of the machine's speed.
	if echo-firstMedia < 480 {
		t.Errorf("mark echoed %.1f ms after the audio arrived, before its 500 ms could play", echo-firstMedia)
	}
}

func TestTwilioBargeIn(t *testing.T) { synctest.Test(t, testTwilioBargeIn) }

func testTwilioBargeIn(t *testing.T) {
	bot, a := memBot(t, twiliobot.Config{Greeting: 3 * time.Second})
	ctx := t.Context()
	conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
	adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentAudio })
	// Speak over the greeting: the bot hears speech while its mark is
	// pending and clears its audio.
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
	r := adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentInterrupted })
	if !adaptertest.IsMark("greeting")(r.Events[len(r.Events)-2]) {
		t.Errorf("event before the interruption = %+v, want the greeting mark", r.Events[len(r.Events)-2])
	}
	call, err := bot.WaitCall(ctx, 0, func(c twiliobot.Call) bool { return len(c.Echoes) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if call.Clears != 1 || call.Echoes[0] != "greeting" {
		t.Errorf("bot: clears=%d echoes=%v, want 1 clear and the greeting mark echoed", call.Clears, call.Echoes)
	}
	// The conversation goes on: the barge-in utterance gets its reply.
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("reply-1"))
}

func TestTwilioDTMF(t *testing.T) {
	for _, pacing := range []twilio.Pacing{twilio.Fast, twilio.RealTime} {
		t.Run(pacing.String(), func(t *testing.T) {
			bot := twiliobot.New(t, twiliobot.Config{})
			a := twilio.New(bot.URL)
			a.Pacing = pacing
			ctx := t.Context()
			conn := dialTwilio(t, a, adaptertest.Session(t, pcm.Rate8k))
			if !conn.Capabilities().DTMF {
				t.Fatal("Capabilities().DTMF = false")
			}
			// Some audio first (with a partial last frame), so that the
			// digits must follow it in sequence.
			if err := conn.SendAudio(ctx, pcm.Silence(pcm.Rate8k, 50*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if err := conn.SendDTMF(ctx, "12#"); err != nil {
				t.Fatal(err)
			}
			r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("dtmf-12#"))
			adaptertest.WantDurationNear(t, "DTMF reply", r.Audio, 400*time.Millisecond, time.Millisecond)
			call, err := bot.WaitCall(ctx, 0, func(c twiliobot.Call) bool { return c.DTMF == "12#" })
			if err != nil {
				t.Fatal(err)
			}
			if len(call.Errors) > 0 {
				t.Errorf("bot errors: %q", call.Errors)
			}
			if call.Media < 3 {
				t.Errorf("bot got %d media frames before the digits, want the 50 ms of audio (3 frames)", call.Media)
			}
			for _, bad := range []string{"", "1x", "٣"} {
				if err := conn.SendDTMF(ctx, bad); err == nil {
					t.Errorf("SendDTMF(%q) succeeded, want an error", bad)
				}
			}
		})
	}
}

func TestTwilioAgentHangUp(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{HangUpAfter: 1, ReplyDuration: 100 * time.Millisecond})
	a := twilio.New(bot.URL)
	a.Pacing = twilio.Fast
	ctx := t.Context()
	conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 300*time.Millisecond, 9000))
	// The bot may hang up before all the silence is sent.
	for _, f := range pcm.Silence(24000, 300*time.Millisecond).Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			if !errors.Is(err, voicetest.ErrTransportClosed) {
				t.Fatalf("SendAudio: %v", err)
			}
			break
		}
	}
	r := adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentHangUp })
	last := r.Events[len(r.Events)-1]
	if !strings.Contains(last.Text, "1000") || !strings.Contains(last.Text, "goodbye") {
		t.Errorf("hang-up reason %q does not give the close status and reason", last.Text)
	}
	if !adaptertest.IsMark("reply-1")(r.Events[len(r.Events)-2]) {
		t.Errorf("the reply's mark did not precede the hang-up: %+v", r.Events)
	}
	_, err := conn.Recv(ctx)
	if !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Fatalf("Recv after hang-up: %v, want ErrTransportClosed", err)
	}
	for name, err := range map[string]error{
		"SendAudio":    conn.SendAudio(ctx, pcm.Silence(24000, time.Millisecond)),
		"EndUtterance": conn.EndUtterance(ctx),
		"SendDTMF":     conn.SendDTMF(ctx, "1"),
	} {
		if !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("%s after hang-up: %v, want ErrTransportClosed", name, err)
		}
	}
}

func TestTwilioMalformedFrames(t *testing.T) {
	for _, tc := range []struct {
		fault twiliobot.Fault
		want  string
	}{
		{twiliobot.MalformedJSON, "not a JSON Media Streams message"},
		{twiliobot.BinaryFrame, "binary frame of 3 bytes"},
		{twiliobot.UnknownEvent, `unknown event "dance"`},
		{twiliobot.WrongStreamSid, "media for streamSid \"MZ0000"},
		{twiliobot.BadPayload, "media.payload is not base64"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			bot := twiliobot.New(t, twiliobot.Config{Fault: tc.fault, Greeting: 100 * time.Millisecond})
			conn := dialTwilio(t, twilio.New(bot.URL), adaptertest.Session(t, 24000))
			_, err := conn.Recv(t.Context())
			var fe *wire.FrameError
			if !errors.As(err, &fe) || fe.Adapter != "twilio" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Recv: %v, want a twilio FrameError containing %q", err, tc.want)
			}
			// The Conn stays usable: the greeting still arrives.
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsMark("greeting"))
		})
	}
}

func TestTwilioMalformedMessages(t *testing.T) {
	cases := []struct{ frame, want string }{
		{`{"streamSid":"{sid}"}`, `no "event" field`},
		{`{"event":"media","streamSid":"{sid}"}`, "without audio in media.payload"},
		{`{"event":"media","streamSid":"{sid}","media":{"payload":""}}`, "without audio in media.payload"},
		{`{"event":"media","media":{"payload":"//8="}}`, `media for streamSid ""`},
		{`{"event":"mark","streamSid":"{sid}","mark":{}}`, "without mark.name"},
		{`{"event":"mark","streamSid":"{sid}"}`, "without mark.name"},
		{`{"event":"clear","streamSid":"nope"}`, `clear for streamSid "nope"`},
		{`[1,2,3]`, "not a JSON Media Streams message"},
	}
	var frames []string
	for _, c := range cases {
		frames = append(frames, c.frame)
	}
	bot := twiliobot.New(t, twiliobot.Config{Send: frames, Greeting: 40 * time.Millisecond})
	conn := dialTwilio(t, twilio.New(bot.URL), adaptertest.Session(t, 24000))
	for _, c := range cases {
		_, err := conn.Recv(t.Context())
		var fe *wire.FrameError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("frame %s: Recv: %v, want a FrameError containing %q", c.frame, err, c.want)
		}
	}
	adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsMark("greeting"))
}

func TestTwilioCloseUnblocksRecv(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{})
	conn := dialTwilio(t, twilio.New(bot.URL), adaptertest.Session(t, 24000))
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Recv(context.Background())
		errc <- err
	}()
	adaptertest.SendPaced(t, t.Context(), conn, adaptertest.Tone(24000, 440, 60*time.Millisecond, 9000))
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Errorf("Recv blocked during Close returned %v, want ErrTransportClosed", err)
	}
	if err := conn.SendDTMF(t.Context(), "1"); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Errorf("SendDTMF after Close: %v, want ErrTransportClosed", err)
	}
	call, err := bot.WaitCall(t.Context(), 0, func(c twiliobot.Call) bool { return c.Ended })
	if err != nil {
		t.Fatal(err)
	}
	if !call.Stopped || len(call.Errors) > 0 {
		t.Errorf("bot: stopped=%v errors=%q", call.Stopped, call.Errors)
	}
}

func TestTwilioOversizedFrame(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{Fault: twiliobot.HugeFrame})
	conn := dialTwilio(t, twilio.New(bot.URL), adaptertest.Session(t, 24000))
	_, err := conn.Recv(t.Context())
	if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "MaxFrameBytes") {
		t.Fatalf("Recv: %v, want a transport error naming MaxFrameBytes", err)
	}
}

// TestTwilioTimeouts runs each case in a testing/synctest bubble, on
// virtual time (memBot): the deadlines, pings and the bot's delays are the
// bubble's clock's.
func TestTwilioTimeouts(t *testing.T) {
	t.Run("recv deadline leaves the conn usable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memBot(t, twiliobot.Config{ReplyDuration: 100 * time.Millisecond})
			a.Pacing = twilio.Fast
			conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Recv from a quiet bot: %v, want DeadlineExceeded", err)
			}
			speak(t, t.Context(), conn, 24000, twilio.Fast)
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsMark("reply-1"))
		})
	})
	t.Run("stalled bot is declared dead by keepalive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memBot(t, twiliobot.Config{Fault: twiliobot.Stall})
			a.PingInterval, a.PongTimeout, a.CloseTimeout = 20*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
			conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := conn.Recv(ctx)
			if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "keepalive") || !strings.Contains(err.Error(), "PongTimeout") {
				t.Fatalf("Recv from a stalled bot: %v, want a keepalive transport error naming PongTimeout", err)
			}
		})
	})
	t.Run("slow bot that answers pings is not killed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memBot(t, twiliobot.Config{ReplyDelay: 600 * time.Millisecond, ReplyDuration: 100 * time.Millisecond})
			a.Pacing = twilio.Fast
			a.PingInterval, a.PongTimeout = 20*time.Millisecond, 100*time.Millisecond
			conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
			speak(t, t.Context(), conn, 24000, twilio.Fast)
			adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsMark("reply-1"))
		})
	})
	t.Run("aborted connection is a transport error, not a hang-up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, a := memBot(t, twiliobot.Config{Fault: twiliobot.Abort})
			conn := dialTwilio(t, a, adaptertest.Session(t, 24000))
			ev, err := conn.Recv(t.Context())
			if !errors.Is(err, voicetest.ErrTransportClosed) {
				t.Fatalf("Recv: %+v, %v; want ErrTransportClosed", ev, err)
			}
			var tce *voicetest.TransportClosedError
			if !errors.As(err, &tce) || tce.Err == nil {
				t.Errorf("transport error %v gives no cause", err)
			}
		})
	})
}

func TestTwilioUnsupported(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{})
	conn := dialTwilio(t, twilio.New(bot.URL), adaptertest.Session(t, 24000))
	caps := conn.Capabilities()
	want := voicetest.Capabilities{ // NativeVAD: Twilio sends no end-of-speech message
		Adapter: "twilio", Audio: true, NativeVAD: true, DTMF: true,
		InputFormat:  voicetest.AudioFormat{Encoding: "mulaw", Rate: 8000},
		OutputFormat: voicetest.AudioFormat{Encoding: "mulaw", Rate: 8000},
	}
	if caps != want {
		t.Errorf("Capabilities() = %+v, want %+v", caps, want)
	}
	readmecaps.Check(t, "`twilio`", caps)
	for name, err := range map[string]error{
		"SendText":  conn.SendText(t.Context(), "hello"),
		"Interrupt": conn.Interrupt(t.Context()),
	} {
		var ue *voicetest.UnsupportedError
		if !errors.As(err, &ue) || ue.Adapter != "twilio" || ue.Alternative == "" {
			t.Errorf("%s: %v, want an UnsupportedError with an alternative", name, err)
		}
	}
	err := conn.SendAudio(t.Context(), pcm.Silence(16000, 20*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "16000 Hz") {
		t.Errorf("SendAudio at the wrong rate: %v, want an error naming the rates", err)
	}
}

func TestTwilioSids(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{})
	connect := func(a *twilio.Agent, name string) twiliobot.StartInfo {
		t.Helper()
		n := len(bot.Calls())
		s := adaptertest.Session(t, 24000)
		s.Name = name
		conn, err := a.Connect(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c, err := bot.WaitCall(t.Context(), n, func(c twiliobot.Call) bool { return c.Start.CallSid != "" })
		if err != nil {
			t.Fatal(err)
		}
		return c.Start
	}
	seeded := &twilio.Agent{URL: bot.URL, Seed: 42}
	a1, a2, b := connect(seeded, "A"), connect(seeded, "A"), connect(seeded, "B")
	if a1.StreamSid != a2.StreamSid || a1.CallSid != a2.CallSid || a1.AccountSid != a2.AccountSid {
		t.Errorf("same seed and name gave different SIDs: %+v vs %+v", a1, a2)
	}
	if a1.StreamSid == b.StreamSid || a1.CallSid == b.CallSid {
		t.Errorf("different scenario names gave the same SIDs: %+v", a1)
	}
	r1, r2 := connect(twilio.New(bot.URL), "A"), connect(twilio.New(bot.URL), "A")
	if r1.StreamSid == r2.StreamSid {
		t.Errorf("unseeded SIDs repeat: %s", r1.StreamSid)
	}
	fixed := &twilio.Agent{URL: bot.URL, AccountSid: "AC" + strings.Repeat("ab", 16), CallSid: "CA" + strings.Repeat("0f", 16)}
	if f := connect(fixed, "A"); f.AccountSid != fixed.AccountSid || f.CallSid != fixed.CallSid {
		t.Errorf("fixed SIDs not used: %+v", f)
	}
	if len(bot.Calls()) != 6 {
		t.Fatalf("bot saw %d calls", len(bot.Calls()))
	}
	for _, c := range bot.Calls() {
		if len(c.Errors) > 0 {
			t.Errorf("bot errors: %q", c.Errors)
		}
	}
	_, err := (&twilio.Agent{URL: bot.URL, CallSid: "CA123"}).Connect(t.Context(), adaptertest.Session(t, 24000))
	if err == nil || !strings.Contains(err.Error(), "CallSid") {
		t.Errorf("Connect with a malformed CallSid: %v, want an error naming CallSid", err)
	}
}

func TestTwilioCapture(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{Greeting: 40 * time.Millisecond})
	a := twilio.New(bot.URL)
	a.Pacing = twilio.Fast
	capture := &adaptertest.SyncBuffer{}
	s := adaptertest.Session(t, 24000)
	s.Capture = capture
	ctx := t.Context()
	conn, err := a.Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsMark("greeting"))
	adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 40*time.Millisecond, 9000))
	if err := conn.SendDTMF(ctx, "5"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	last := -1.0
	for _, r := range recs {
		if r.TMs < last {
			t.Errorf("capture times go backwards: %v after %v", r.TMs, last)
		}
		last = r.TMs
		if r.Dir == "note" {
			events = append(events, "note:"+r.Type)
			continue
		}
		p, err := r.Payload()
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Event string }
		if err := json.Unmarshal(p, &m); err != nil {
			t.Fatalf("captured frame is not the JSON sent: %s", p)
		}
		events = append(events, r.Dir+":"+m.Event)
	}
	got := strings.Join(events, " ")
	// The mark echo is asynchronous (Twilio sends it when the audio has
	// played): it comes after the bot's mark and before stop.
	echo := strings.Index(got, "send:mark")
	if echo < strings.Index(got, "recv:mark") || echo > strings.Index(got, "send:stop") {
		t.Errorf("capture sequence\n%s\nhas no mark echo between the bot's mark and stop", got)
	}
	got = strings.Replace(got, " send:mark", "", 1)
	for _, want := range []string{
		"note:open send:connected send:start recv:media recv:media recv:mark send:media send:media send:dtmf send:stop",
		"note:closed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("capture sequence\n%s\nlacks\n%s", got, want)
		}
	}
}

// A whole call against a loopback Twilio bot: the greeting, one user turn,
// and the bot hanging up after its reply.
func ExampleNew() {
	bot := twiliobot.Start(twiliobot.Config{Greeting: 200 * time.Millisecond, HangUpAfter: 1})
	defer bot.Close()

	agent := twilio.New(bot.URL)
	agent.Pacing = twilio.Fast                // no real-time phone line: no waiting
	agent.EndSilence = 200 * time.Millisecond // so the bot hears the end of speech
	agent.CustomParameters = map[string]string{"caller": "+15550100"}
	ctx := context.Background()
	const rate = 24000
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: rate, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	// listen prints what the bot says up to its next mark or hang-up.
	listen := func() {
		samples := 0
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				fmt.Println(err)
				return
			}
			switch ev.Kind {
			case voicetest.AgentAudio:
				samples += ev.Audio.Len()
			case voicetest.AgentData:
				fmt.Printf("bot said %v, then %s %s\n", pcm.DurationOf(samples, rate), ev.Text, ev.Data)
				return
			case voicetest.AgentHangUp:
				fmt.Println("bot hung up:", ev.Text)
				return
			}
		}
	}
	listen()
	// 300 ms of "speech" in 20 ms frames, then the end of the utterance.
	speech := pcm.Chunk{Rate: rate, Samples: make([]int16, pcm.SamplesFor(rate, 300*time.Millisecond))}
	for i := range speech.Samples {
		speech.Samples[i] = int16(9000 * math.Sin(2*math.Pi*440*float64(i)/rate))
	}
	for _, f := range speech.Frames(20 * time.Millisecond) {
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
	listen()
	_, err = conn.Recv(ctx)
	fmt.Println(errors.Is(err, voicetest.ErrTransportClosed))
	// Output:
	// bot said 200ms, then mark {"name":"greeting"}
	// bot said 400ms, then mark {"name":"reply-1"}
	// bot hung up: agent closed the WebSocket (status 1000 StatusNormalClosure): goodbye
	// true
}
