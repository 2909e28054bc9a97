package pipecat_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/internal/peers/pipecatpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// say sends text as one utterance of fake speech at 24 kHz, which the
// peer decodes.
func say(t *testing.T, ctx context.Context, conn voicetest.Conn, text string) {
	t.Helper()
	adaptertest.SayFake(t, ctx, conn, 24000, text)
}

func dial(t *testing.T, bot *pipecatpeer.Server, ser pipecat.Serializer, rtvi bool) voicetest.Conn {
	t.Helper()
	return dialOn(t, nil, bot, ser, rtvi)
}

// dialOn is dial through n, the in-memory network bot serves on (nil:
// loopback TCP), for a test in a testing/synctest bubble.
func dialOn(t *testing.T, n *adaptertest.MemNet, bot *pipecatpeer.Server, ser pipecat.Serializer, rtvi bool) voicetest.Conn {
	t.Helper()
	a := pipecat.New(bot.URL, ser)
	a.RTVI = rtvi
	if n != nil {
		a.NetDial = n.Dial
	}
	return adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))
}

// Under the Twilio serializer the adapter opens the stream as Pipecat's
// runner expects (connected, then start with the SIDs), sends µ-law
// media, an utterance_end mark after each utterance and dtmf events, and
// stop when it closes; the bot's media comes back as audio.
func TestPipecatTwilio(t *testing.T) {
	bot := pipecatpeer.New(t, pipecatpeer.Config{Serializer: pipecatpeer.Twilio})
	a := pipecat.New(bot.URL, pipecat.Twilio)
	a.CallSid = "CA0123456789abcdef0123456789abcdef"
	conn, err := a.Connect(t.Context(), adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	caps := conn.Capabilities()
	if caps.InputFormat.Encoding != "mulaw" || caps.InputFormat.Rate != 8000 || !caps.DTMF || caps.NativeInterrupt || caps.StreamingTranscripts {
		t.Errorf("capabilities %+v", caps)
	}
	readmecaps.Check(t, "`pipecat`, Twilio", caps)
	say(t, ctx, conn, "Hello.")
	if r := adaptertest.RecvUntil(t, ctx, conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentAudio }); r.Audio == 0 {
		t.Error("no reply audio")
	}
	if err := conn.SendDTMF(ctx, "12#"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := waitEnded(t, bot)
	if err != nil {
		t.Fatal(err)
	}
	if c.CallSid != a.CallSid || !strings.HasPrefix(c.StreamSid, "MZ") || len(c.StreamSid) != 34 {
		t.Errorf("bot saw stream %q, call %q", c.StreamSid, c.CallSid)
	}
	if strings.Join(c.Heard, "|") != "Hello." || c.DTMF != "12#" || strings.Join(c.Marks, ",") != "utterance_end" || len(c.Errors) > 0 {
		t.Errorf("bot heard %q, DTMF %q, marks %q, errors %q", c.Heard, c.DTMF, c.Marks, c.Errors)
	}
	if len(c.InputRates) != 1 || c.InputRates[0] != 8000 {
		t.Errorf("input rates %v", c.InputRates)
	}
}

// waitEnded waits for the bot's first call to end.
func waitEnded(t *testing.T, bot *pipecatpeer.Server) (pipecatpeer.Call, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		if cs := bot.Calls(); len(cs) > 0 && cs[0].Ended {
			return cs[0], nil
		}
		select {
		case <-ctx.Done():
			return pipecatpeer.Call{}, errors.New("the call did not end")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Under the protobuf serializer with RTVI: client-ready at connect, 16 kHz
// AudioRawFrames, the bot's RTVI transcripts of both sides, its speaking
// state as data and bot-stopped-speaking as the end of its turn.
func TestPipecatProtobufRTVI(t *testing.T) {
	bot := pipecatpeer.New(t, pipecatpeer.Config{RTVI: true, Turns: []pipecatpeer.Turn{{Reply: "Sure, {heard}"}}})
	conn := dial(t, bot, pipecat.Protobuf, true)
	ctx := t.Context()
	say(t, ctx, conn, "A table for two.")
	readmecaps.Check(t, "`pipecat`, protobuf", conn.Capabilities(), "RTVI")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	user, _ := adaptertest.TurnText(r.Events, voicetest.UserTranscript)
	agent, deltas := adaptertest.TurnText(r.Events, voicetest.AgentTranscript)
	if user != "A table for two." || agent != "Sure, A table for two." || deltas != "Sure,Atablefortwo." {
		t.Errorf("user %q, agent %q (deltas, one a word: %q)", user, agent, deltas)
	}
	var data []string
	for _, ev := range r.Events {
		if ev.Kind == voicetest.AgentData {
			data = append(data, ev.Text)
		}
	}
	if strings.Join(data, " ") != "bot-started-speaking bot-stopped-speaking" {
		t.Errorf("data events %q", data)
	}
	want, _ := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "Sure, A table for two.", Rate: 24000})
	adaptertest.WantDurationNear(t, "reply audio", r.Audio, want.Duration(), 20*time.Millisecond)
	c := bot.Calls()[0]
	if !c.ClientReady || len(c.InputRates) != 1 || c.InputRates[0] != 16000 || len(c.Errors) > 0 {
		t.Errorf("bot: client-ready %v, input rates %v, errors %q", c.ClientReady, c.InputRates, c.Errors)
	}
	// send-text and RTVI dtmf are turns too.
	if err := conn.SendText(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if got, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); got != "Reply 2." {
		t.Errorf("reply to send-text %q", got)
	}
	if err := conn.SendDTMF(ctx, "5"); err != nil {
		t.Fatal(err)
	}
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if got, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); got != "You pressed 5." {
		t.Errorf("reply to dtmf %q", got)
	}
	if err := conn.SendDTMF(ctx, "A"); err == nil {
		t.Error("RTVI dtmf took A")
	}
}

// Interrupt sends an InterruptionFrame; the bot's InterruptionFrame and
// bot-interrupted make one AgentInterrupted.
func TestPipecatInterrupt(t *testing.T) { synctest.Test(t, testPipecatInterrupt) }

func testPipecatInterrupt(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := pipecatpeer.New(t, pipecatpeer.Config{Listener: n.Listen(), RTVI: true, ChunkDelay: 20 * time.Millisecond,
		Turns: []pipecatpeer.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}})
	conn := dialOn(t, n, bot, pipecat.Protobuf, true)
	ctx := t.Context()
	say(t, ctx, conn, "Tell me a story.")
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTranscript))
	if err := conn.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentInterrupted))
	if final, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); final == "" || strings.HasSuffix(final, "long time.") {
		t.Errorf("the cut reply's transcript %q: want what was said before the cut", final)
	}
	// The next turn: no second AgentInterrupted, no early turn end.
	say(t, ctx, conn, "Hello.")
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if k := adaptertest.Kinds(r.Events); strings.Contains(k, "agent_interrupted") {
		t.Errorf("events after the barge-in: %s", k)
	}
	if got, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); got != "Reply 2." {
		t.Errorf("reply %q", got)
	}
	if c := bot.Calls()[0]; c.Interruptions != 1 || len(c.Errors) > 0 {
		t.Errorf("bot: %d interruptions, errors %q", c.Interruptions, c.Errors)
	}
	if w := conn.(voicetest.WireStatsReporter).WireStats(); w.Cancels != 1 || w.MarksSent != 0 {
		t.Errorf("wire stats %+v, want the one InterruptionFrame counted as a cancel", w)
	}
}

// The bot's own function calls are reported with their results; a
// function the bot asks the client to run is answered by OnToolCall.
func TestPipecatFunctionCalls(t *testing.T) {
	bot := pipecatpeer.New(t, pipecatpeer.Config{RTVI: true, Turns: []pipecatpeer.Turn{
		{ToolCall: &pipecatpeer.ToolCall{Name: "weather", Args: map[string]any{"city": "Paris"}, Result: map[string]any{"temp": 21}}, Reply: "It is {result}"},
		{ToolCall: &pipecatpeer.ToolCall{Name: "book", Args: map[string]any{"size": 2}, Client: true}, Reply: "Booked {result}"},
	}})
	a := pipecat.New(bot.URL, pipecat.Protobuf)
	a.RTVI = true
	a.OnToolCall = func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
		if call.Name != "book" || string(call.Arguments) != `{"size":2}` {
			return nil, errors.New("unexpected call " + call.Name)
		}
		return json.RawMessage(`{"table":7}`), nil
	}
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 24000))
	ctx := t.Context()
	say(t, ctx, conn, "Weather?")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	var calls []string
	for _, ev := range r.Events {
		if ev.Tool != nil {
			calls = append(calls, ev.Kind.String()+" "+ev.Tool.Name+" "+string(ev.Tool.Arguments)+string(ev.Tool.Result))
		}
	}
	if strings.Join(calls, "|") != `tool_call weather {"city":"Paris"}|tool_result weather {"temp":21}` {
		t.Errorf("tool events %q", calls)
	}
	say(t, ctx, conn, "Book it.")
	r = adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
	if k := adaptertest.Kinds(r.Events); !strings.Contains(k, "tool_call tool_result") {
		t.Errorf("events %s", k)
	}
	if got, _ := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); got != `Booked {"table":7}` {
		t.Errorf("reply %q", got)
	}
	c := bot.Calls()[0]
	if len(c.ToolResults) != 1 || c.ToolResults[0] != `{"arguments":{"size":2},"function_name":"book","result":{"table":7},"tool_call_id":"call_2"}` {
		t.Errorf("bot got results %q", c.ToolResults)
	}
}

// What a serializer cannot carry is unsupported, with the alternative.
func TestPipecatUnsupported(t *testing.T) {
	t.Run("twilio", func(t *testing.T) {
		bot := pipecatpeer.New(t, pipecatpeer.Config{Serializer: pipecatpeer.Twilio})
		conn := dial(t, bot, pipecat.Twilio, false)
		for name, err := range map[string]error{
			"SendText":  conn.SendText(t.Context(), "hi"),
			"Interrupt": conn.Interrupt(t.Context()),
		} {
			if !errors.Is(err, voicetest.ErrUnsupported) {
				t.Errorf("%s under Twilio: %v", name, err)
			}
		}
		a := pipecat.New(bot.URL, pipecat.Twilio)
		a.CallSid = "CA-not-a-sid"
		if _, err := a.Connect(t.Context(), adaptertest.Session(t, 24000)); err == nil || !strings.Contains(err.Error(), "CallSid") {
			t.Errorf("Connect with a bad CallSid: %v", err)
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		bot := pipecatpeer.New(t, pipecatpeer.Config{})
		conn := dial(t, bot, pipecat.Protobuf, false)
		readmecaps.Check(t, "`pipecat`, protobuf", conn.Capabilities())
		for name, err := range map[string]error{
			"SendText": conn.SendText(t.Context(), "hi"),
			"SendDTMF": conn.SendDTMF(t.Context(), "1"),
		} {
			if !errors.Is(err, voicetest.ErrUnsupported) {
				t.Errorf("%s under protobuf without RTVI: %v", name, err)
			}
		}
	})
}

// A conversation through the runner with the Twilio serializer and a bot
// that passes RTVI messages: transcripts without STT, and the bot's
// hang-up after its second reply.
func TestPipecatScenario(t *testing.T) { synctest.Test(t, testPipecatScenario) }

func testPipecatScenario(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := pipecatpeer.New(t, pipecatpeer.Config{Listener: n.Listen(), Serializer: pipecatpeer.Twilio, RTVI: true, HangUpAfter: 2,
		Turns: []pipecatpeer.Turn{{Reply: "Sure, {heard}"}, {Reply: "Goodbye."}}})
	a := pipecat.New(bot.URL, pipecat.Twilio)
	a.NetDial = n.Dial
	a.RTVI = true
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("two at seven."),
			voicetest.AgentTurn(),
			voicetest.UserSays("thanks."),
			voicetest.AgentTurn(),
		},
	})
	want := "user: two at seven.\nagent: Sure, two at seven.\nuser: thanks.\nagent: Goodbye.\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if res.Ended != "the agent hung up" {
		t.Errorf("ended %q", res.Ended)
	}
	// Wire statistics: frames both ways and one utterance_end mark per
	// user line (the Twilio serializer). The second mark follows the last
	// line's trailing silence, which the bot may cut short by hanging up
	// first, so 1 or 2 marks are both right; 0 or 3 are not.
	if w := res.Metrics.Wire; w == nil || w.Adapter != "pipecat" || w.FramesIn == 0 || w.FramesOut == 0 || w.BytesIn == 0 || w.MarksSent < 1 || w.MarksSent > 2 || w.Cancels != 0 {
		t.Errorf("wire stats %+v, want frames both ways and 1 or 2 marks sent", w)
	}
}
