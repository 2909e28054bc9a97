package webrtc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/webrtc"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// parallelOK: a test runs in parallel (t.Parallel) only when it has no
// per-test leak check (adaptertest.CloseConn, the conformance suite's):
// those look at every adapter goroutine of the process, so they run in
// the sequential tests, which never overlap the parallel ones. The
// parallel ones' goroutines are still checked by TestMain's
// leakcheck.Main.
//
// Every test of a call runs on virtual time (onVirtualTime, see
// network): the 20 ms pacing both ways, the bot's end-of-speech silence,
// ICE and DTLS cost CPU only, so nothing is gained by overlapping them,
// and they run one after another (pion's vnet.NewNet also numbers its
// MAC addresses in an unguarded package variable: two bubbles making
// networks at once race under -race).
// TestConformance/rtvi/RealTimeConversation is the one call on the
// machine's loopback and the real clock.

// run runs script against agent, with fake speech both ways.
func run(t *testing.T, agent voicetest.Agent, script ...voicetest.Step) *voicetest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := voicetest.Run(ctx, voicetest.Config{
		Name: t.Name(), Agent: agent, UserVoice: fixtures.FakeTTS(), AgentSTT: fixtures.FakeSTT(),
		Pacing: voicetest.PaceFast, Logf: t.Logf, Script: script,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.TimelineText())
	}
	return res
}

// TestOpusBothWays: the user's speech reaches the bot through Opus intact
// (its fake STT reads the words), and the bot's reply comes back intact
// (the runner's fake STT reads it), with no RTVI transcript to help.
func TestOpusBothWays(t *testing.T) {
	onVirtualTime(t, testOpusBothWays)
}

func testOpusBothWays(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{Turns: []webrtcpeer.Turn{{Reply: "Seven it is, for {heard}"}}})
	res := run(t, n.agent(bot.URL), voicetest.UserSays("two people"), voicetest.AgentTurn())
	calls := bot.Calls()
	if len(calls) != 1 || len(calls[0].Heard) != 1 || calls[0].Heard[0] != "two people" {
		t.Fatalf("the bot heard %+v, want one call that heard \"two people\"", calls)
	}
	want := "user: two people\nagent: Seven it is, for two people\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if len(calls[0].Errors) > 0 {
		t.Errorf("the bot saw protocol errors: %q", calls[0].Errors)
	}
}

// TestSignalling: the offer is Pipecat's SmallWebRTCRequest (with
// requestData), the data channel is "chat", the microphone's trackStatus
// and the keepalive pings arrive, and an RTVI client sends client-ready.
func TestSignalling(t *testing.T) { onVirtualTime(t, testSignalling) }

func testSignalling(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{RTVI: true})
	a := n.agent(bot.URL)
	a.RTVI = true
	a.RequestData = map[string]any{"persona": "tester"}
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	readmecaps.Check(t, "`webrtc`", conn.Capabilities(), "RTVI")
	adaptertest.CloseConn(t, conn)
	deadline := time.Now().Add(10 * time.Second)
	var c webrtcpeer.Call
	for time.Now().Before(deadline) {
		if cs := bot.Calls(); len(cs) == 1 && cs[0].Pings >= 2 && cs[0].ClientReady && len(cs[0].TrackStatus) > 0 {
			c = cs[0]
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.Pings < 2 || !c.ClientReady {
		t.Fatalf("after 10 s the bot saw %+v: want keepalive pings and client-ready", bot.Calls())
	}
	if c.Offers != 1 || c.Label != "chat" || c.RequestData != `{"persona":"tester"}` {
		t.Errorf("offers %d, label %q, requestData %s; want 1, \"chat\", the Agent's RequestData", c.Offers, c.Label, c.RequestData)
	}
	if want := `{"enabled":true,"receiver_index":0,"type":"trackStatus"}`; len(c.TrackStatus) != 1 || c.TrackStatus[0] != want {
		t.Errorf("trackStatus messages %q, want [%s]", c.TrackStatus, want)
	}
	if len(c.Errors) > 0 {
		t.Errorf("the bot saw protocol errors: %q", c.Errors)
	}
}

// TestPeerLeft: the bot's peerLeft is the agent hanging up, with that
// reason.
func TestPeerLeft(t *testing.T) {
	onVirtualTime(t, testPeerLeft)
}

func testPeerLeft(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{RTVI: true, HangUpAfter: 1})
	a := n.agent(bot.URL)
	a.RTVI = true
	res := run(t, a, voicetest.UserSays("Goodbye."), voicetest.AgentTurn(), voicetest.ExpectHangUp())
	var reason string
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventAgentHangUp {
			reason = e.Text
		}
	}
	if !strings.Contains(reason, "peerLeft") {
		t.Errorf("hang-up reason %q, want the bot's peerLeft:\n%s", reason, res.TimelineText())
	}
}

// TestRenegotiate: the bot's renegotiate makes the adapter post a new
// offer for the same pc_id, and the call goes on.
func TestRenegotiate(t *testing.T) { onVirtualTime(t, testRenegotiate) }

func testRenegotiate(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{Send: []webrtcpeer.Message{{Data: []byte(`{"type":"signalling","message":{"type":"renegotiate"}}`)}}})
	conn, err := n.agent(bot.URL).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CloseConn(t, conn)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (len(bot.Calls()) != 1 || bot.Calls()[0].Offers < 2) {
		time.Sleep(20 * time.Millisecond)
	}
	if cs := bot.Calls(); len(cs) != 1 || cs[0].Offers != 2 {
		t.Fatalf("the bot saw %+v: want one connection with two offers", cs)
	}
	res := run(t, agentOf(conn), voicetest.UserSays("still there?"), voicetest.AgentTurn())
	if !strings.Contains(res.TranscriptText(), "agent: Reply 1.") {
		t.Errorf("no reply after the renegotiation:\n%s", res.TranscriptText())
	}
}

// connAgent is an Agent whose Connect returns an open Conn once.
type connAgent struct{ conn voicetest.Conn }

func (a connAgent) Connect(context.Context, voicetest.Session) (voicetest.Conn, error) {
	return nopClose{a.conn}, nil
}

// nopClose leaves closing to the test's cleanup.
type nopClose struct{ voicetest.Conn }

func (nopClose) Close() error { return nil }

func agentOf(conn voicetest.Conn) voicetest.Agent { return connAgent{conn} }

// TestTextAndDTMF: with RTVI, text goes as send-text and key presses as
// the dtmf message, each answered by the bot.
func TestTextAndDTMF(t *testing.T) { onVirtualTime(t, testTextAndDTMF) }

func testTextAndDTMF(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{RTVI: true, Turns: []webrtcpeer.Turn{{Reply: "You wrote {heard}"}}})
	a := n.agent(bot.URL)
	a.RTVI = true
	res := run(t, a, voicetest.UserSays("Hello."), voicetest.AgentTurn(), voicetest.DTMF("42#"), voicetest.AgentTurn())
	c := bot.Calls()[0]
	if c.DTMF != "42#" {
		t.Errorf("the bot got keys %q, want 42#", c.DTMF)
	}
	if !strings.Contains(res.TranscriptText(), "You pressed 42#.") {
		t.Errorf("transcript:\n%s", res.TranscriptText())
	}
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CloseConn(t, conn)
	if err := conn.SendText(t.Context(), "book a table"); err != nil {
		t.Fatal(err)
	}
	r := adaptertest.RecvUntil(t, t.Context(), conn, func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.AgentTurnEnd })
	var text string
	for _, ev := range r.Events {
		if ev.Kind == voicetest.AgentTranscript && ev.Final {
			text = ev.Text
		}
	}
	if text != "You wrote book a table" {
		t.Errorf("the reply's transcript to send-text is %q, want \"You wrote book a table\"", text)
	}
	if err := conn.SendDTMF(t.Context(), "A"); err == nil || !strings.Contains(err.Error(), "0-9, * and #") {
		t.Errorf("SendDTMF(A): %v, want an error naming the keys RTVI takes", err)
	}
}

// TestOfferErrors: an endpoint that refuses the offer, or answers
// something that is not an answer, fails Connect with an error that says
// what came back.
func TestOfferErrors(t *testing.T) {
	t.Parallel() // no per-test leak check (see parallelOK)
	for _, tc := range []struct {
		name, want string
		h          http.HandlerFunc
	}{
		{"500", "HTTP 500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "pipeline crashed", 500) }},
		{"not an answer", `not {"sdp","type":"answer","pc_id"}`, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"type":"offer"}`)) }},
		{"bad SDP", "the agent's answer", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"type":"answer","sdp":"v=0 nonsense","pc_id":"x"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			conn, err := webrtc.New(srv.URL+"/api/offer").Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf})
			if err == nil {
				conn.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Connect: %v, want it to say %q", err, tc.want)
			}
			var te *voicetest.TimeoutError
			if errors.As(err, &te) {
				t.Errorf("a refused offer is not a timeout: %v", err)
			}
		})
	}
	if _, err := webrtc.New("ws://127.0.0.1:1/x").Connect(t.Context(), voicetest.Session{Rate: 24000, Logf: t.Logf}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("a ws:// URL: %v, want an error asking for http://", err)
	}
}

// TestWireStats: the adapter counts what crossed the wire: the offer and
// its answer, the data channel messages and the RTP packets each way.
func TestWireStats(t *testing.T) {
	onVirtualTime(t, testWireStats)
}

func testWireStats(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{RTVI: true})
	a := n.agent(bot.URL)
	a.RTVI = true
	res := run(t, a, voicetest.UserSays("Hello there."), voicetest.AgentTurn())
	ws := res.Metrics.Wire
	if ws == nil {
		t.Fatal("no wire statistics: the Conn does not report them")
	}
	// 1 s of speech and 1 s of end silence at least: 100 packets out.
	if ws.Adapter != "webrtc" || ws.FramesOut < 100 || ws.FramesIn < 20 || ws.BytesIn == 0 || ws.BytesOut == 0 {
		t.Errorf("wire statistics %+v: want the offer, data channel messages and RTP packets counted", *ws)
	}
	if ws.DroppedFrames != 0 {
		t.Errorf("%d packets lost on the (virtual) loopback", ws.DroppedFrames)
	}
}

// TestPlainBot: without RTVI the adapter declares only audio: no
// transcripts, turn ends, text, DTMF or tools, and the methods that need
// them say so with an *UnsupportedError naming the alternative; the
// bot's data channel JSON still arrives as AgentData.
func TestPlainBot(t *testing.T) { onVirtualTime(t, testPlainBot) }

func testPlainBot(t *testing.T, n *network) {
	bot := n.bot(t, webrtcpeer.Config{Send: []webrtcpeer.Message{{Data: []byte(`{"hello":"there"}`)}}})
	conn, err := n.agent(bot.URL).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 16000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CloseConn(t, conn)
	caps := conn.Capabilities()
	if caps.StreamingTranscripts || caps.TurnEnd || caps.Text || caps.DTMF || caps.ToolEvents || caps.NativeInterrupt || !caps.NativeVAD {
		t.Errorf("Capabilities() = %+v: a plain bot gives audio only, and detects the end of speech itself", caps)
	}
	readmecaps.Check(t, "`webrtc`", caps)
	for name, err := range map[string]error{"SendText": conn.SendText(t.Context(), "hi"), "SendDTMF": conn.SendDTMF(t.Context(), "1"), "Interrupt": conn.Interrupt(t.Context())} {
		var ue *voicetest.UnsupportedError
		if !errors.As(err, &ue) || ue.Adapter != "webrtc" || ue.Alternative == "" {
			t.Errorf("%s: %v, want an *UnsupportedError with an alternative", name, err)
		}
	}
	r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentData))
	if ev := r.Events[len(r.Events)-1]; string(ev.Data) != `{"hello":"there"}` {
		t.Errorf("the bot's message arrived as %+v", ev)
	}
}

// TestConnectionIDsPerBot: each bot numbers its peer connections (Call.PCID)
// from 1, whatever other bots of the process have made: the count is the
// bot's, not the package's.
func TestConnectionIDsPerBot(t *testing.T) { onVirtualTime(t, testConnectionIDsPerBot) }

func testConnectionIDsPerBot(t *testing.T, n *network) {
	for i := range 2 {
		bot := n.bot(t, webrtcpeer.Config{})
		conn, err := n.agent(bot.URL).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 16000, Logf: voicetest.TestLogf(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Close(); err != nil { // before the next bot's call: one open at a time
			t.Fatal(err)
		}
		var ids []string
		for _, c := range bot.Calls() {
			ids = append(ids, c.PCID)
		}
		if len(ids) != 1 || ids[0] != "SmallWebRTCConnection#1" {
			t.Errorf("bot %d: connection IDs %q, want [SmallWebRTCConnection#1]", i+1, ids)
		}
	}
}
