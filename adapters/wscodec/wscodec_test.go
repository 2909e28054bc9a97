package wscodec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

func dialWS(t testing.TB, a *wscodec.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	return adaptertest.DialAgent(t, a, s)
}

// transcript returns the first AgentTranscript event of evs.
func transcript(evs []voicetest.AgentEvent) voicetest.AgentEvent {
	for _, ev := range evs {
		if ev.Kind == voicetest.AgentTranscript {
			return ev
		}
	}
	return voicetest.AgentEvent{}
}

func TestWebSocketJSONConversation(t *testing.T) {
	const wire = 16000
	bot := wsbot.New(t, wsbot.Config{Rate: wire, Tools: true})
	codec := wscodec.JSONBase64(wscodec.JSONOptions{Rate: wire, TurnEnd: true, Transcripts: true, ToolEvents: true})
	ctx := t.Context()
	conn := dialWS(t, wscodec.New(bot.URL, codec), adaptertest.Session(t, 24000))
	caps := conn.Capabilities()
	if caps.Adapter != "websocket" || !caps.Audio || !caps.Text || !caps.DTMF || !caps.NativeInterrupt || !caps.TurnEnd || caps.NativeVAD ||
		caps.InputFormat != (voicetest.AudioFormat{Encoding: "pcm16", Rate: wire}) {
		t.Errorf("Capabilities() = %+v", caps)
	}
	readmecaps.Check(t, "`wscodec`, JSON", caps, "Transcripts", "TurnEnd", "ToolEvents")
	// Audio comes between data and the transcript; the resampler's last few
	// ms of it come with turn_end, which completes its window.
	const turnKinds = "tool_call tool_result data agent_transcript agent_turn_end"
	for turn := 1; turn <= 3; turn++ {
		adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 300*time.Millisecond, 9000))
		if err := conn.EndUtterance(ctx); err != nil {
			t.Fatal(err)
		}
		r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		if got := adaptertest.Kinds(r.Events); got != turnKinds {
			t.Errorf("turn %d events: %s, want %s", turn, got, turnKinds)
		}
		adaptertest.WantDurationNear(t, "reply audio", r.Audio, 300*time.Millisecond, 2*time.Millisecond)
		tc := r.Events[0].Tool
		if tc == nil || tc.Name != "lookup" || tc.ID != "call-"+string(rune('0'+turn)) || string(tc.Arguments) != `{"turn":`+string(rune('0'+turn))+`}` {
			t.Errorf("tool call = %+v", tc)
		}
		if res := r.Events[1].Tool; res == nil || string(res.Result) != `{"status":"ok"}` {
			t.Errorf("tool result = %+v", res)
		}
		if d := r.Events[2]; d.Text != "ui" || !json.Valid(d.Data) {
			t.Errorf("data event = %+v", d)
		}
		if r.Events[3].Kind != voicetest.AgentAudio {
			t.Errorf("turn %d: event 4 is %v, want the reply audio", turn, r.Events[3].Kind)
		}
		if tr := transcript(r.Events); tr.Text != "I heard you" || !tr.Final {
			t.Errorf("transcript = %+v", tr)
		}
	}
	if err := conn.SendText(ctx, "book a table"); err != nil {
		t.Fatal(err)
	}
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if tr := transcript(r.Events); tr.Text != "you said book a table" {
		t.Errorf("text reply transcript = %+v", tr)
	}
	if err := conn.SendDTMF(ctx, "7*"); err != nil {
		t.Fatal(err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	call, err := bot.WaitCall(ctx, 0, func(c wsbot.Call) bool { return c.DTMF == "7*" })
	if err != nil {
		t.Fatal(err)
	}
	if len(call.Errors) > 0 {
		t.Errorf("bot errors: %q", call.Errors)
	}
	if len(call.Utterances) != 3 || len(call.Texts) != 1 || call.Texts[0] != "book a table" {
		t.Errorf("bot saw utterances %v, texts %q", call.Utterances, call.Texts)
	}
	for _, n := range call.Utterances {
		if want := pcm.SamplesFor(wire, 300*time.Millisecond); n != want {
			t.Errorf("bot got %d samples of user audio, want %d (300 ms at %d Hz)", n, want, wire)
		}
	}
}

func TestWebSocketRawConversation(t *testing.T) {
	const wire = 16000
	bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Rate: wire})
	ctx := t.Context()
	conn := dialWS(t, wscodec.New(bot.URL, wscodec.RawPCM(wire)), adaptertest.Session(t, 24000))
	want := voicetest.Capabilities{Adapter: "websocket", Audio: true, NativeVAD: true,
		InputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: wire}, OutputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: wire}}
	if got := conn.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	readmecaps.Check(t, "`wscodec`, raw PCM", conn.Capabilities())
	ev, err := conn.Recv(ctx)
	if err != nil || ev.Kind != voicetest.AgentLog || ev.Text != `{"status":"ready"}` {
		t.Fatalf("first event = %+v, %v; want the bot's text frame as a log", ev, err)
	}
	for turn := 1; turn <= 3; turn++ {
		adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 300*time.Millisecond, 9000))
		if err := conn.EndUtterance(ctx); err != nil {
			t.Fatal(err)
		}
		adaptertest.SendPaced(t, ctx, conn, pcm.Silence(24000, 300*time.Millisecond))
		// Raw PCM has no end-of-turn marker: wait until the whole reply
		// (300 ms, less the resampler's few ms of look-ahead) arrived.
		var got time.Duration
		r := adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool {
			got += ev.Audio.Duration()
			return got >= 295*time.Millisecond
		})
		for _, ev := range r.Events {
			if ev.Kind != voicetest.AgentAudio || ev.Audio.Rate != 24000 {
				t.Fatalf("turn %d: event %+v, want only agent audio at 24 kHz", turn, ev)
			}
		}
	}
	call, err := bot.WaitCall(ctx, 0, func(c wsbot.Call) bool { return len(c.Utterances) == 3 })
	if err != nil {
		t.Fatal(err)
	}
	if len(call.Errors) > 0 {
		t.Errorf("bot errors: %q", call.Errors)
	}
	for _, n := range call.Utterances {
		if d := pcm.DurationOf(n, wire); d < 290*time.Millisecond || d > 320*time.Millisecond {
			t.Errorf("bot heard an utterance of %v, want about 300 ms", d)
		}
	}
	for name, err := range map[string]error{
		"SendText":  conn.SendText(ctx, "hi"),
		"SendDTMF":  conn.SendDTMF(ctx, "1"),
		"Interrupt": conn.Interrupt(ctx),
	} {
		var ue *voicetest.UnsupportedError
		if !errors.As(err, &ue) || ue.Adapter != "websocket" || ue.Alternative == "" {
			t.Errorf("%s on raw PCM: %v, want an UnsupportedError with an alternative", name, err)
		}
	}
}

func TestWebSocketBargeIn(t *testing.T) {
	t.Run("json native interrupt", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Paced: true, ReplyDuration: 3 * time.Second})
		ctx := t.Context()
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{})), adaptertest.Session(t, 24000))
		if err := conn.SendText(ctx, "tell me a long story"); err != nil {
			t.Fatal(err)
		}
		adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
		if err := conn.Interrupt(ctx); err != nil {
			t.Fatal(err)
		}
		r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentInterrupted))
		if strings.Contains(adaptertest.Kinds(r.Events), "turn_end") {
			t.Errorf("the interrupted reply still ended normally: %s", adaptertest.Kinds(r.Events))
		}
		if r.Audio >= 3*time.Second {
			t.Errorf("the whole 3 s reply arrived despite the interrupt")
		}
		if c := bot.Calls()[0]; c.Interrupts != 1 {
			t.Errorf("bot saw %d interrupts, want 1", c.Interrupts)
		}
	})
	t.Run("raw overlapping audio", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Paced: true, ReplyDuration: 3 * time.Second})
		ctx := t.Context()
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.RawPCM(24000)), adaptertest.Session(t, 24000))
		adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
		adaptertest.SendPaced(t, ctx, conn, pcm.Silence(24000, 300*time.Millisecond))
		adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
		adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
		call, err := bot.WaitCall(ctx, 0, func(c wsbot.Call) bool { return c.Interrupts == 1 })
		if err != nil {
			t.Fatal(err)
		}
		if call.Replies != 1 {
			t.Errorf("bot replies = %d", call.Replies)
		}
	})
}

func TestWebSocketHangUp(t *testing.T) {
	t.Run("json hangup message", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{HangUpAfter: 1})
		ctx := t.Context()
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{})), adaptertest.Session(t, 24000))
		if err := conn.SendText(ctx, "bye"); err != nil {
			t.Fatal(err)
		}
		r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentHangUp))
		if last := r.Events[len(r.Events)-1]; last.Text != "done" {
			t.Errorf("hang-up reason %q, want the bot's reason", last.Text)
		}
		// The close that follows the hangup message is not a second hang-up.
		if ev, err := conn.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Fatalf("Recv after hang-up: %+v, %v; want ErrTransportClosed", ev, err)
		}
		if err := conn.EndUtterance(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("EndUtterance after hang-up: %v, want ErrTransportClosed", err)
		}
	})
	t.Run("raw close", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, HangUpAfter: 1, ReplyDuration: 40 * time.Millisecond})
		ctx := t.Context()
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.RawPCM(24000)), adaptertest.Session(t, 24000))
		adaptertest.SendPaced(t, ctx, conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
		// The bot may hang up before all the silence is sent.
		for _, f := range pcm.Silence(24000, 300*time.Millisecond).Frames(20 * time.Millisecond) {
			if err := conn.SendAudio(ctx, f); err != nil {
				if !errors.Is(err, voicetest.ErrTransportClosed) {
					t.Fatalf("SendAudio: %v", err)
				}
				break
			}
		}
		r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentHangUp))
		if last := r.Events[len(r.Events)-1]; !strings.Contains(last.Text, "1000") || !strings.Contains(last.Text, "bye") {
			t.Errorf("hang-up reason %q", last.Text)
		}
		if _, err := conn.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Fatalf("Recv after hang-up: %v; want ErrTransportClosed", err)
		}
	})
}

func TestWebSocketMalformedFrames(t *testing.T) {
	for _, tc := range []struct {
		mode  wsbot.Mode
		fault wsbot.Fault
		want  string
	}{
		{wsbot.JSON, wsbot.MalformedJSON, "not a JSON message"},
		{wsbot.JSON, wsbot.UnknownType, `unknown message type "dance"`},
		{wsbot.JSON, wsbot.BadBase64, "audio is not base64"},
		{wsbot.JSON, wsbot.OddPCM, "odd number of bytes"},
		{wsbot.JSON, wsbot.WrongFrameType, "binary frame of 2 bytes"},
		{wsbot.Raw, wsbot.OddPCM, "odd number of bytes"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			bot := wsbot.New(t, wsbot.Config{Mode: tc.mode, Fault: tc.fault})
			codec := wscodec.JSONBase64(wscodec.JSONOptions{})
			if tc.mode == wsbot.Raw {
				codec = wscodec.RawPCM(24000)
			}
			conn := dialWS(t, wscodec.New(bot.URL, codec), adaptertest.Session(t, 24000))
			_, err := conn.Recv(t.Context())
			var fe *wire.FrameError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Recv: %v, want a FrameError containing %q", err, tc.want)
			}
			// Still usable.
			if tc.mode == wsbot.JSON {
				if err := conn.SendText(t.Context(), "still there?"); err != nil {
					t.Fatal(err)
				}
				adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
			} else {
				adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentLog))
			}
		})
	}
	t.Run("unknown type as data", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Fault: wsbot.UnknownType})
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{UnknownAsData: true})), adaptertest.Session(t, 24000))
		ev, err := conn.Recv(t.Context())
		if err != nil || ev.Kind != voicetest.AgentData || ev.Text != "dance" || string(ev.Data) != `{"type":"dance"}` {
			t.Fatalf("Recv: %+v, %v; want the unknown message as data", ev, err)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Fault: wsbot.HugeFrame})
		a := wscodec.New(bot.URL, wscodec.RawPCM(24000))
		a.MaxFrameBytes = 64 << 10
		conn := dialWS(t, a, adaptertest.Session(t, 24000))
		_, err := conn.Recv(t.Context())
		if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "larger than 65536 bytes") {
			t.Fatalf("Recv: %v, want a transport error about the 64 KiB limit", err)
		}
	})
}

func TestWebSocketTimeouts(t *testing.T) {
	t.Run("recv deadline leaves the conn usable", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{})
		conn := dialWS(t, wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{})), adaptertest.Session(t, 24000))
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Recv: %v, want DeadlineExceeded", err)
		}
		if err := conn.SendText(ctx, "hello"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("SendText with a done ctx: %v, want DeadlineExceeded", err)
		}
		if err := conn.SendText(t.Context(), "hello"); err != nil {
			t.Fatal(err)
		}
		adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	})
	t.Run("stalled agent is declared dead by keepalive", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Fault: wsbot.Stall})
		a := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{}))
		a.PingInterval, a.PongTimeout, a.CloseTimeout = 20*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
		conn := dialWS(t, a, adaptertest.Session(t, 24000))
		_, err := conn.Recv(t.Context())
		if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "keepalive") {
			t.Fatalf("Recv: %v, want a keepalive transport error", err)
		}
	})
	t.Run("agent that stops reading fails a write", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Fault: wsbot.Stall})
		a := wscodec.New(bot.URL, wscodec.RawPCM(24000))
		a.PingInterval, a.WriteTimeout, a.CloseTimeout = -1, 100*time.Millisecond, 100*time.Millisecond
		conn := dialWS(t, a, adaptertest.Session(t, 24000))
		second := adaptertest.Tone(24000, 440, time.Second, 9000)
		var err error
		// The socket buffers take a few MB before a write blocks.
		for i := 0; i < 2000 && err == nil; i++ {
			err = conn.SendAudio(t.Context(), second)
		}
		if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "WriteTimeout") {
			t.Fatalf("SendAudio to an agent that stopped reading: %v, want a transport error naming WriteTimeout", err)
		}
		if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("Recv after the failed write: %v, want ErrTransportClosed", err)
		}
	})
	t.Run("keepalive off", func(t *testing.T) {
		bot := wsbot.New(t, wsbot.Config{Fault: wsbot.Stall})
		a := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{}))
		a.PingInterval, a.CloseTimeout = -1, 100*time.Millisecond
		conn := dialWS(t, a, adaptertest.Session(t, 24000))
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Recv: %v, want DeadlineExceeded (no keepalive)", err)
		}
	})
}

func TestWebSocketCapture(t *testing.T) {
	bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Rate: 24000, ReplyDuration: 40 * time.Millisecond})
	capture := &adaptertest.SyncBuffer{}
	s := adaptertest.Session(t, 24000)
	s.Capture = capture
	ctx := t.Context()
	conn, err := wscodec.New(bot.URL, wscodec.RawPCM(24000)).Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	sent := adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000)
	if err := conn.SendAudio(ctx, sent); err != nil {
		t.Fatal(err)
	}
	adaptertest.SendPaced(t, ctx, conn, pcm.Silence(24000, 300*time.Millisecond))
	var got time.Duration
	adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool { got += ev.Audio.Duration(); return got >= 40*time.Millisecond })
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	firstSend, firstText := -1, -1
	for i, r := range recs {
		seq = append(seq, r.Dir+":"+r.Type)
		if r.Dir == "send" && firstSend < 0 {
			firstSend = i
		}
		if r.Dir == "recv" && r.Type == "text" && firstText < 0 {
			firstText = i
		}
	}
	if got := strings.Join(seq, " "); !strings.HasPrefix(got, "note:open") || !strings.Contains(got, "recv:binary") || !strings.HasSuffix(got, "note:closed") || firstSend < 0 || firstText < 0 {
		t.Fatalf("capture sequence: %s", got)
	}
	if r := recs[firstText]; r.Text != "" || string(r.Data) != `{"status":"ready"}` {
		t.Errorf("JSON text frame not kept verbatim: %+v", r)
	}
	p, err := recs[firstSend].Payload()
	if err != nil {
		t.Fatal(err)
	}
	if want := sent.Bytes(); string(p) != string(want) {
		t.Errorf("captured binary frame (%d bytes) differs from the audio sent (%d bytes)", len(p), len(want))
	}
}

func TestReadCaptureErrors(t *testing.T) {
	if _, err := wire.ReadCapture(strings.NewReader("{\"t_ms\":1,\"dir\":\"send\",\"type\":\"text\",\"data\":{}}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ReadCapture of a bad line: %v, want an error naming line 2", err)
	}
	if _, err := wire.ReadCapture(strings.NewReader(`{"t_ms":1}`)); err == nil {
		t.Error("ReadCapture accepted a record without dir and type")
	}
	r := wire.CaptureRecord{Type: "binary", Data: json.RawMessage(`"%%"`)}
	if _, err := r.Payload(); err == nil {
		t.Error("Payload accepted bad base64")
	}
}

func TestWebSocketNoCodec(t *testing.T) {
	_, err := (&wscodec.Agent{URL: "ws://127.0.0.1:1"}).Connect(t.Context(), adaptertest.Session(t, 24000))
	if err == nil || !strings.Contains(err.Error(), "Codec") {
		t.Errorf("Connect without a codec: %v", err)
	}
	_, err = wscodec.New("ws://127.0.0.1:1", wscodec.RawPCM(-1)).Connect(t.Context(), adaptertest.Session(t, 24000))
	if !errors.Is(err, pcm.ErrBadRate) {
		t.Errorf("RawPCM(-1): %v, want ErrBadRate", err)
	}
}

// panicCodec is a user codec with a bug: its Decode panics on text frames.
type panicCodec struct{ wscodec.Codec }

func (p panicCodec) Open(s voicetest.Session) (wscodec.CodecSession, []wscodec.Frame, error) {
	cs, hello, err := p.Codec.Open(s)
	return panicSession{cs}, hello, err
}

type panicSession struct{ wscodec.CodecSession }

func (p panicSession) Decode(dst []voicetest.AgentEvent, f wscodec.Frame) ([]voicetest.AgentEvent, error) {
	if !f.Binary {
		var m map[string]int
		//lint:ignore SA5000 the test needs a codec that panics
		m["boom"]++ // nil map: panics
	}
	return p.CodecSession.Decode(dst, f)
}

func TestWebSocketCodecPanicIsAFrameError(t *testing.T) {
	bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, ReplyDuration: 40 * time.Millisecond})
	conn := dialWS(t, wscodec.New(bot.URL, panicCodec{wscodec.RawPCM(24000)}), adaptertest.Session(t, 24000))
	_, err := conn.Recv(t.Context())
	var fe *wire.FrameError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "decoder panicked") {
		t.Fatalf("Recv: %v, want a FrameError about the panic", err)
	}
	// The connection survives: the bot still answers.
	adaptertest.SendPaced(t, t.Context(), conn, adaptertest.Tone(24000, 440, 200*time.Millisecond, 9000))
	adaptertest.SendPaced(t, t.Context(), conn, pcm.Silence(24000, 300*time.Millisecond))
	adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentAudio))
}

// A text turn with an agent that speaks the JSON protocol, on loopback.
func ExampleNew() {
	bot := wsbot.Start(wsbot.Config{Rate: 16000, Tools: true})
	defer bot.Close()

	agent := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{
		Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true,
	}))
	ctx := context.Background()
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: 24000, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	if err := conn.SendText(ctx, "a table for two"); err != nil {
		fmt.Println(err)
		return
	}
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
			continue
		case voicetest.AgentToolCall:
			fmt.Println(ev.Kind, ev.Tool.Name, string(ev.Tool.Arguments))
		case voicetest.AgentTranscript:
			fmt.Printf("%v %q\n", ev.Kind, ev.Text)
		case voicetest.AgentTurnEnd:
			fmt.Println(ev.Kind, "after", pcm.DurationOf(samples, 24000), "of audio")
			return
		default:
			fmt.Println(ev.Kind)
		}
	}
	// Output:
	// tool_call lookup {"turn":1}
	// tool_result
	// data
	// agent_transcript "you said a table for two"
	// agent_turn_end after 300ms of audio
}

func TestTwilioBotRejectsWrongOrder(t *testing.T) {
	// The test double itself: a client that skips "connected" is refused,
	// as Pipecat's runner refuses it.
	bot := twiliobot.New(t, twiliobot.Config{})
	conn, err := wscodec.New(bot.URL, wscodec.JSONBase64(wscodec.JSONOptions{})).Connect(t.Context(), adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SendText(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	c, err := bot.WaitCall(t.Context(), 0, func(c twiliobot.Call) bool { return c.Ended })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Errors) == 0 || !strings.Contains(c.Errors[0], "first message must be connected") {
		t.Errorf("bot errors = %q, want a complaint about the first message", c.Errors)
	}
	if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "1008") {
		t.Errorf("Recv: %v, want the bot's policy-violation close (1008)", err)
	}
}
