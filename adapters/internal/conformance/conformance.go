// Package conformance is the suite every wire adapter runs: the same
// conversation, barge-in, hang-up, malformed frames, timeouts, bounded
// memory, secrets and capture checks, written once and run from each
// protocol package's tests against that protocol's loopback peer.
//
// An adapter joins the suite with a Subject: how to start its peer in each
// of the behaviours the suite needs (a Peer), and a few frames of its
// protocol (agent audio, a frame that echoes a text, malformed frames).
// The suite asserts only what voicetest.Conn promises every adapter, so
// that a green run means the same thing for Twilio, Realtime, Gemini Live
// or Pipecat. Only tests import it.
//
// A Subject whose peer can serve on an in-memory listener (InMemory) runs
// every check on virtual time, each in its own testing/synctest bubble
// with the peer in the test's process over an adaptertest.MemNet: the
// checks' real-time waits (a paced reply, a barge-in 400 ms in, a dial
// timeout) then cost no wall time, and no machine load moves an event.
// One exchange of the conversation (a user turn and its reply) runs once
// more over loopback TCP on the real clock (RealTimeConversation), so
// that the real socket and clock stay tested; with Subject.Alongside it
// runs at the same time as the virtual-time checks.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Frame is one WebSocket frame a peer sends verbatim (or, for a peer that
// is not reached over a plain WebSocket, one server message).
type Frame struct {
	// Data is the frame's payload.
	Data []byte
	// Binary sends it as a binary frame; otherwise it is a text frame.
	Binary bool
}

// Text returns a text frame holding s.
func Text(s string) Frame { return Frame{Data: []byte(s)} }

// Stall says where a peer stops answering.
type Stall int

// The stalls.
const (
	// NoStall: the peer behaves.
	NoStall Stall = iota
	// StallDial: the peer's address accepts TCP connections and never
	// answers the HTTP upgrade (a black hole).
	StallDial
	// StallHandshake: the peer accepts the WebSocket but never completes
	// the protocol's opening handshake (Subject.Handshake).
	StallHandshake
	// StallAnswer: the peer completes its handshake and then answers
	// nothing.
	StallAnswer
)

// Peer is the behaviour the suite asks of the loopback peer, and the
// settings of the agent that reaches it.
type Peer struct {
	// Key is the credential. The agent is configured with it, and a
	// Subject whose peer checks credentials (ChecksKey) refuses any
	// other. Subjects without credentials send it as an
	// "Authorization: Bearer" header, which the adapter must treat as a
	// secret all the same.
	Key string
	// PeerKey, when set, is the credential the peer expects instead of
	// Key: the agent's Key is then wrong.
	PeerKey string
	// LongReply makes the reply to the first user turn last at least 3 s
	// of audio, so that a barge-in 400 ms into it lands in it; later
	// replies may be short.
	LongReply bool
	// Brief asks for short replies (a word or a few hundred
	// milliseconds of audio): the check depends on no reply's length
	// (RealTimeConversation, where each reply costs its length in wall
	// time). A Start may ignore it.
	Brief bool
	// HangUpAfter, when positive, makes the peer end the call (close the
	// WebSocket normally, or send its protocol's hang-up) after its
	// HangUpAfter-th reply.
	HangUpAfter int
	// Stall is where the peer stops answering.
	Stall Stall
	// MeasuresHeap marks the peer of a check that measures the whole
	// process's heap around its conversation (BoundedMemory/Queue): a
	// Start whose package runs other conversations in parallel runs this
	// one alone.
	MeasuresHeap bool
	// Send holds frames the peer sends verbatim right after its
	// handshake, before anything else.
	Send []Frame
	// DialTimeout, MaxQueueBytes and MaxFrameBytes are the agent's
	// settings of the same names (wire.WSOptions, or the adapter's
	// equivalents); zero leaves the defaults.
	DialTimeout   time.Duration
	MaxQueueBytes int64
	MaxFrameBytes int64
	// Net, when not nil, is the in-memory network of a check that runs on
	// virtual time (Subject.InMemory): Start serves the peer on a
	// listener of it (Peer.Listener), has the agent reach it through it
	// (Net.Dial as wire.WSOptions.NetDial, Net.HTTPClient for an HTTP
	// request), and takes the stalled peers of Peer.BlackHole and
	// Peer.SilentServer. Nil: the peer serves on loopback TCP.
	Net *adaptertest.MemNet
}

// Listener returns a new listener of p.Net for the peer to serve on, or
// nil (loopback TCP) when p has no Net.
func (p Peer) Listener() net.Listener {
	if p.Net == nil {
		return nil
	}
	return p.Net.Listen()
}

// BlackHole returns the ws:// URL of a peer that accepts connections and
// never answers (StallDial): adaptertest.BlackHole, or its in-memory
// double on p.Net.
func (p Peer) BlackHole(t testing.TB) string {
	t.Helper()
	if p.Net == nil {
		return adaptertest.BlackHole(t)
	}
	return p.Net.BlackHole(t)
}

// SilentServer returns the ws:// URL of a WebSocket server that accepts
// the connection and never answers (a StallHandshake for protocols whose
// peer speaks first): adaptertest.SilentServer, or its in-memory double
// on p.Net.
func (p Peer) SilentServer(t testing.TB) string {
	t.Helper()
	if p.Net == nil {
		return adaptertest.SilentServer(t)
	}
	return p.Net.SilentServer(t)
}

// Subject describes one adapter and its loopback peer to the suite.
type Subject struct {
	// Adapter is the name the adapter's Capabilities report.
	Adapter string
	// Start starts a loopback peer that behaves as p says, stopped when
	// the test ends, and returns an agent that reaches it configured
	// with p's settings: over p.Net when it is set (see Peer.Net and
	// InMemory), otherwise over loopback TCP.
	Start func(t *testing.T, p Peer) voicetest.Agent
	// Handshake reports that the protocol has an opening handshake the
	// peer completes (a session confirmation, initiation metadata), so
	// that StallHandshake applies. Protocols where the client speaks
	// first and the server owes no answer (Twilio, plain WebSocket)
	// leave it false.
	Handshake bool
	// ChecksKey reports that the peer refuses a wrong Peer.Key at the
	// handshake.
	ChecksKey bool
	// Interrupts reports that the protocol tells of a barge-in (Twilio's
	// clear, a cancelled response, an interruption event): the suite then
	// expects an agent_interrupted event after the user's barge-in.
	Interrupts bool
	// Audio returns a well-formed frame of agent audio holding n samples
	// at the protocol's wire rate.
	Audio func(n int) Frame
	// Echo returns a well-formed frame in which the agent says s where the
	// adapter reports it (a transcript, a log line, a data payload).
	Echo func(s string) Frame
	// Malformed are frames the adapter must report as *wire.FrameError,
	// each, without ending the conversation.
	Malformed []Frame
	// Pacing is the runner's pacing in the scenarios (default
	// voicetest.PaceFast).
	Pacing voicetest.Pacing
	// Rate is the session rate (default pcm.DefaultRate).
	Rate int
	// InMemory reports that Start honours Peer.Net. Run then runs every
	// check on virtual time, each in its own testing/synctest bubble with
	// the peer on an in-memory network, and one exchange of the
	// conversation once more over loopback TCP on the real clock
	// (RealTimeConversation). Without
	// it every check runs over loopback TCP on the real clock.
	InMemory bool
	// Alongside (with InMemory) runs RealTimeConversation at the same time
	// as the virtual-time checks rather than after Conversation: its wall
	// time then overlaps theirs. BoundedMemory, which measures the
	// process's heap, still runs alone, last, once the conversation is
	// over; each check's leak check sees only its own goroutines (those of
	// its bubble, or outside any bubble: adaptertest.Goroutines). Leave it
	// off when Start changes process-wide state for a check in a bubble
	// (Gemini Live's tests point gorilla/websocket's package-level
	// DefaultDialer at the bubble's network), which the real-time
	// conversation would then use.
	Alongside bool
	// MemoryFirst (without InMemory) runs BoundedMemory first, before
	// Capabilities, rather than after Timeouts: a package that runs other
	// conversations beside the suite, and keeps them off the heap check
	// (Peer.MeasuresHeap), can then hold them back for the first seconds
	// only, not wait for those under way in the middle of the suite.
	MemoryFirst bool
	// Unordered reports that frames the peer sends on separate streams
	// may reach the adapter out of the order they were sent (LiveKit's
	// SDK reads each text stream on a goroutine of its own). With it,
	// MalformedFrames waits for a frame error for every malformed frame
	// as well as for the frame sent after them, rather than stopping at
	// that frame; without it, errors that come after that frame fail the
	// check. BoundedMemory/Frame then takes the frame sent after the
	// oversized one if it comes before the limit's error (a small stream
	// read to its end before the oversized one's reader passed the
	// bound); without it, that frame fails the check. Either way the
	// error must come, and no audio of the oversized frame.
	Unordered bool

	// net is the in-memory network of the check being run (InMemory).
	net *adaptertest.MemNet
}

// canary is a credential that must appear nowhere but on the wire to the
// peer.
const canary = "sk-conformance-4f1c9a0e77b2-MUST-NOT-LEAK"

// sentinel marks the frame the suite waits for after others.
const sentinel = "sentinel-7e21"

// Run runs the whole suite against s, one subtest per case. The cases run
// one after another: the memory and leak checks look at the whole process.
// With s.InMemory each case runs on virtual time (see the package
// comment), and RealTimeConversation runs the conversation on the real
// clock over loopback TCP; with s.Alongside as well, it runs at the same
// time as the virtual-time cases, and BoundedMemory runs last, alone.
// With s.MemoryFirst (and without s.InMemory) BoundedMemory runs first.
func Run(t *testing.T, s Subject) {
	if s.Rate == 0 {
		s.Rate = pcm.DefaultRate
	}
	if s.Pacing == 0 {
		s.Pacing = voicetest.PaceFast
	}
	s.net = nil
	memory := func() { t.Run("BoundedMemory", func(t *testing.T) { testBoundedMemory(t, s) }) }
	memoryFirst := s.MemoryFirst && !s.InMemory
	if memoryFirst {
		memory()
	}
	realTime := func() {
		t.Run("RealTimeConversation", func(t *testing.T) { testRealTimeConversation(t, s) })
	}
	along := s.InMemory && s.Alongside
	var alongside sync.WaitGroup
	if along {
		// t.Run may be called from several goroutines; Run returns only
		// once this one's has (alongside.Wait).
		alongside.Go(realTime)
	}
	s.sub(t, "Capabilities", testCapabilities)
	s.sub(t, "Conversation", testConversation)
	if s.InMemory && !along {
		realTime()
	}
	s.sub(t, "BargeIn", testBargeIn)
	s.sub(t, "HangUp", testHangUp)
	s.sub(t, "MalformedFrames", testMalformed)
	t.Run("Timeouts", func(t *testing.T) { testTimeouts(t, s) })
	if !along && !memoryFirst {
		memory()
	}
	t.Run("Secrets", func(t *testing.T) { testSecrets(t, s) })
	s.sub(t, "Capture", testCapture)
	if along {
		alongside.Wait() // the heap is measured with nothing else running
		memory()
	}
}

// sub runs check as the subtest name of t: in a testing/synctest bubble
// of its own over a fresh in-memory network when s.InMemory, otherwise
// directly (loopback TCP, the real clock).
func (s Subject) sub(t *testing.T, name string, check func(*testing.T, Subject)) {
	t.Run(name, func(t *testing.T) {
		if !s.InMemory {
			check(t, s)
			return
		}
		synctest.Test(t, func(t *testing.T) {
			s.net = adaptertest.NewMemNet(t)
			check(t, s)
		})
	})
}

// start starts the peer of p with s.Start, on the check's in-memory
// network when it has one.
func (s Subject) start(t *testing.T, p Peer) voicetest.Agent {
	t.Helper()
	p.Net = s.net
	return s.Start(t, p)
}

// session returns the suite's Session for t.
func (s Subject) session(t *testing.T, logf func(string, ...any)) voicetest.Session {
	if logf == nil {
		logf = t.Logf
	}
	return voicetest.Session{Name: t.Name(), Rate: s.Rate, Logf: logf}
}

// leakCheck makes sure, once the test's peers have stopped, that no
// adapter goroutine is left. Call it before starting the peer, so that it
// runs after the peer's cleanup.
func leakCheck(t *testing.T) {
	t.Cleanup(func() { adaptertest.CheckNoLeak(t) })
}

// connect starts a peer and connects to it; the Conn is closed (and
// checked for leaks) when the test ends.
func (s Subject) connect(t *testing.T, p Peer) voicetest.Conn {
	t.Helper()
	conn, err := s.tryConnect(t, p)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return conn
}

// tryConnect is connect for a check that accepts Connect's error: a peer
// whose first frames break a rule may do so before Connect returns.
func (s Subject) tryConnect(t *testing.T, p Peer) (voicetest.Conn, error) {
	t.Helper()
	leakCheck(t)
	a := s.start(t, p)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := a.Connect(ctx, s.session(t, nil))
	if err != nil {
		return nil, err
	}
	adaptertest.CloseConn(t, conn)
	return conn, nil
}

// say sends one user utterance of fake speech and ends it.
func (s Subject) say(t *testing.T, ctx context.Context, conn voicetest.Conn, text string) {
	t.Helper()
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: s.Rate})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.SendPaced(t, ctx, conn, speech)
	adaptertest.SendPaced(t, ctx, conn, pcm.Silence(s.Rate, 300*time.Millisecond))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
}

// run runs a scenario against a fresh peer.
func (s Subject) run(t *testing.T, p Peer, cfg voicetest.Config) (*voicetest.Result, error) {
	t.Helper()
	leakCheck(t)
	cfg.Agent = s.start(t, p)
	cfg.Name = t.Name()
	if cfg.UserVoice == nil {
		cfg.UserVoice = fixtures.FakeTTS()
	}
	cfg.Pacing = s.Pacing
	cfg.Rate = s.Rate
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	return voicetest.Run(ctx, cfg)
}

// testCapabilities: the adapter names itself, takes audio, states its wire
// formats, is not in-process, and every method whose capability it lacks
// returns an *UnsupportedError rather than doing something else.
func testCapabilities(t *testing.T, s Subject) {
	conn := s.connect(t, Peer{})
	caps := conn.Capabilities()
	if caps.Adapter != s.Adapter {
		t.Errorf("Capabilities().Adapter = %q, want %q", caps.Adapter, s.Adapter)
	}
	if !caps.Audio || caps.VirtualTime {
		t.Errorf("Capabilities() = %+v: a wire adapter takes audio and runs on the real clock", caps)
	}
	for name, f := range map[string]voicetest.AudioFormat{"InputFormat": caps.InputFormat, "OutputFormat": caps.OutputFormat} {
		if f.Encoding == "" || f.Rate < 8000 {
			t.Errorf("Capabilities().%s = %+v: name the wire encoding and rate", name, f)
		}
	}
	if caps != conn.Capabilities() {
		t.Error("Capabilities changed between calls")
	}
	ctx := t.Context()
	unsupported := func(what string, has bool, err error) {
		if !has && !errors.Is(err, voicetest.ErrUnsupported) {
			t.Errorf("%s without the capability: %v, want an *UnsupportedError", what, err)
		}
		var ue *voicetest.UnsupportedError
		if errors.As(err, &ue) && (ue.Adapter != s.Adapter || ue.Alternative == "") {
			t.Errorf("%s: %+v: name the adapter and the alternative", what, ue)
		}
	}
	unsupported("SendDTMF", caps.DTMF, conn.SendDTMF(ctx, "1"))
	unsupported("Interrupt", caps.NativeInterrupt, conn.Interrupt(ctx))
	if !caps.Text {
		unsupported("SendText", false, conn.SendText(ctx, "hello"))
	}
	// A chunk at the wrong rate is refused with an error, not sent.
	wrong := pcm.Silence(s.Rate/2, 20*time.Millisecond)
	if err := conn.SendAudio(ctx, wrong); err == nil {
		t.Errorf("SendAudio of a %d Hz chunk on a %d Hz session succeeded", wrong.Rate, s.Rate)
	}
}

// testConversation: three user turns, each answered with audio (and with
// its transcript where the adapter streams them), through the runner.
func testConversation(t *testing.T, s Subject) {
	conversation(t, s, Peer{}, voicetest.Timeouts{}, "A table for two.", "At seven.", "Thank you.")
}

// realTimeTailSilence is RealTimeConversation's Timeouts.TailSilence: the
// quiet, on the real clock, after which the runner ends the agent's turn
// where the protocol has no turn end of its own (Twilio, a phone line,
// LayerCode, ElevenLabs, Pipecat's Twilio serializer). Half the default:
// the peers send their brief replies at once, the check is that the turn
// ends on the real clock after that much quiet since the agent's last
// act, and no check depends on how long the quiet is.
const realTimeTailSilence = 300 * time.Millisecond

// testRealTimeConversation is the conversation over loopback TCP on the
// real clock, as short as its checks allow: each second of it is a second
// of wall time (on a phone line or a WebRTC track the user's audio plays
// in real time, whatever the runner's pacing). One exchange: the user's
// utterance ("I do.", 580 ms of fake speech) has a word gap (150 ms of
// silence inside one utterance, which a line that sent its audio late
// would stretch into an end of speech), the peer detects its end of
// speech on the real clock, answers briefly (Peer.Brief: no check depends
// on the reply's length), and the runner ends the agent's turn on the
// real clock (the protocol's turn end, or realTimeTailSilence of quiet).
// Turn after turn is Conversation's (three turns, on virtual time where
// the Subject is InMemory).
func testRealTimeConversation(t *testing.T, s Subject) {
	conversation(t, s, Peer{Brief: true}, voicetest.Timeouts{TailSilence: realTimeTailSilence}, "I do.")
}

// conversation runs one user turn per utterance, each answered by an
// agent turn, against a peer behaving as p with the runner's timeouts
// (zero fields: the defaults), and checks them: every turn answered with
// audio (and its transcript where the adapter streams them), as many user
// turns as utterances.
func conversation(t *testing.T, s Subject, p Peer, timeouts voicetest.Timeouts, utterances ...string) {
	var script []voicetest.Step
	for _, u := range utterances {
		script = append(script, voicetest.UserSays(u), voicetest.AgentTurn())
	}
	res, err := s.run(t, p, voicetest.Config{
		Golden:   voicetest.GoldenOptions{Disable: true},
		Script:   script,
		Timeouts: timeouts,
	})
	if err != nil {
		t.Fatalf("conversation failed: %v\n%s", err, timeline(res))
	}
	want := len(utterances)
	var agentTurns int
	for _, m := range res.Transcript {
		if m.Role != voicetest.RoleAgent {
			continue
		}
		agentTurns++
		if res.Capabilities.StreamingTranscripts && strings.TrimSpace(m.Text) == "" {
			t.Errorf("agent turn %d has no transcript, though the adapter streams them", agentTurns)
		}
	}
	if agentTurns < want {
		t.Errorf("%d agent turns in the transcript, want %d:\n%s", agentTurns, want, res.TranscriptText())
	}
	if n := count(res, voicetest.EventAgentStartSpeaking); n < want {
		t.Errorf("%d agent_start_speaking events, want one per turn (%d):\n%s", n, want, res.TimelineText())
	}
	if res.Turns != want {
		t.Errorf("%d user turns, want %d", res.Turns, want)
	}
}

// testBargeIn: the user speaks over the agent's long reply; the runner
// records the interrupt, the protocol's interruption where it has one,
// and the conversation goes on.
func testBargeIn(t *testing.T, s Subject) {
	res, err := s.run(t, Peer{LongReply: true}, voicetest.Config{
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("Tell me a story."),
			voicetest.Interrupt("Make it short.", voicetest.After(400*time.Millisecond)),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatalf("barge-in scenario failed: %v\n%s", err, timeline(res))
	}
	types := adaptertest.EventTypes(res)
	i := strings.Index(types, string(voicetest.EventUserInterrupt))
	if i < 0 {
		t.Fatalf("no user_interrupt in the timeline: %s", types)
	}
	if s.Interrupts && !strings.Contains(types[i:], string(voicetest.EventAgentInterrupted)) {
		t.Errorf("the protocol reports barge-ins, but no agent_interrupted follows user_interrupt: %s", types)
	}
	if !strings.Contains(types[i:], string(voicetest.EventAgentStartSpeaking)) {
		t.Errorf("the agent did not answer the barge-in: %s", types)
	}
}

// testHangUp: the agent ends the call after its first reply: Recv returns
// AgentHangUp (with a reason), then a *TransportClosedError; sending
// fails with one too, and Close still succeeds.
func testHangUp(t *testing.T, s Subject) {
	conn := s.connect(t, Peer{HangUpAfter: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The agent may answer and hang up while the end of the utterance is
	// still being sent: sending then fails as closed, which is right.
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "Goodbye.", Rate: s.Rate})
	if err != nil {
		t.Fatal(err)
	}
	frames := append(speech.Frames(20*time.Millisecond), pcm.Silence(s.Rate, 300*time.Millisecond).Frames(20*time.Millisecond)...)
	for _, f := range frames {
		err = conn.SendAudio(ctx, f)
		if err != nil {
			break
		}
	}
	if err == nil {
		err = conn.EndUtterance(ctx)
	}
	if err != nil && !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Fatalf("sending the utterance: %v", err)
	}
	var audio time.Duration
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv before the hang-up: %v", err)
		}
		if ev.Kind == voicetest.AgentAudio {
			audio += ev.Audio.Duration()
		}
		if ev.Kind == voicetest.AgentHangUp {
			if ev.Text == "" {
				t.Error("AgentHangUp without a reason")
			}
			break
		}
	}
	if audio == 0 {
		t.Error("no reply audio before the hang-up")
	}
	_, err = conn.Recv(ctx)
	var tc *voicetest.TransportClosedError
	if !errors.As(err, &tc) || tc.Adapter != s.Adapter {
		t.Errorf("Recv after the hang-up: %v, want a *TransportClosedError of %s", err, s.Adapter)
	}
	if _, err2 := conn.Recv(ctx); !errors.Is(err2, voicetest.ErrTransportClosed) {
		t.Errorf("second Recv after the hang-up: %v", err2)
	}
	if err := conn.SendAudio(ctx, pcm.Silence(s.Rate, 20*time.Millisecond)); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Errorf("SendAudio after the hang-up: %v, want ErrTransportClosed", err)
	}
}

// testMalformed: each malformed frame is one *wire.FrameError from Recv,
// naming the adapter; the frames after it are still delivered and the
// conversation goes on. Without s.Unordered the errors must all come
// before the frame sent after the malformed ones.
func testMalformed(t *testing.T, s Subject) {
	if len(s.Malformed) == 0 {
		t.Fatal("Subject.Malformed is empty: give the suite frames the adapter must reject")
	}
	conn := s.connect(t, Peer{Send: append(append([]Frame(nil), s.Malformed...), s.Echo(sentinel))})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var errs []error
	seen := false // the sentinel
	for !seen || s.Unordered && len(errs) < len(s.Malformed) {
		ev, err := conn.Recv(ctx)
		if err != nil {
			var fe *wire.FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("Recv after %d frame errors: %v, want a *wire.FrameError (the Conn must stay usable)", len(errs), err)
			}
			if fe.Adapter != s.Adapter || fe.Err == nil {
				t.Errorf("frame error %+v: name the adapter and the cause", fe)
			}
			errs = append(errs, err)
			continue
		}
		if mentions(ev, sentinel) {
			seen = true
		}
	}
	if len(errs) != len(s.Malformed) {
		t.Errorf("%d frame errors for %d malformed frames: %v", len(errs), len(s.Malformed), errs)
	}
	s.say(t, ctx, conn, "Are you still there?")
	r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))
	if r.Audio == 0 {
		t.Error("no reply after the malformed frames")
	}
}

// testTimeouts: a dial and a handshake that never finish fail Connect
// with a *TimeoutError naming the connect phase; an agent that never
// answers fails the run with one naming the first audio; and a Recv whose
// ctx ends returns ctx's error and leaves the Conn usable.
func testTimeouts(t *testing.T, s Subject) {
	connectTimeout := func(t *testing.T, s Subject, stall Stall) {
		leakCheck(t)
		a := s.start(t, Peer{Stall: stall, DialTimeout: 300 * time.Millisecond})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		conn, err := a.Connect(ctx, s.session(t, nil))
		if err == nil {
			conn.Close()
			t.Fatal("Connect succeeded against a peer that never answers")
		}
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || te.Hint == "" {
			t.Errorf("Connect: %v, want a *TimeoutError in phase %q with a hint", err, voicetest.PhaseConnect)
		}
		if ctx.Err() != nil {
			t.Errorf("Connect returned only when the test's own deadline ended: %v", err)
		}
	}
	s.sub(t, "Dial", func(t *testing.T, s Subject) { connectTimeout(t, s, StallDial) })
	if s.Handshake {
		s.sub(t, "Handshake", func(t *testing.T, s Subject) { connectTimeout(t, s, StallHandshake) })
	}
	s.sub(t, "FirstChunk", func(t *testing.T, s Subject) {
		_, err := s.run(t, Peer{Stall: StallAnswer}, voicetest.Config{
			Golden:   voicetest.GoldenOptions{Disable: true},
			Timeouts: voicetest.Timeouts{FirstChunk: time.Second},
			Script:   []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn()},
		})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk {
			t.Errorf("run against a mute agent: %v, want a *TimeoutError in phase %q", err, voicetest.PhaseFirstChunk)
		}
	})
	s.sub(t, "RecvDeadline", func(t *testing.T, s Subject) {
		conn := s.connect(t, Peer{})
		var err error
		for range 100 { // events the peer sends unasked come first
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			_, err = conn.Recv(ctx)
			cancel()
			if err != nil {
				break
			}
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Recv with a short deadline: %v, want context.DeadlineExceeded", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		s.say(t, ctx, conn, "Hello?")
		if r := adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio)); r.Audio == 0 {
			t.Error("no reply after a Recv timed out")
		}
	})
}

// heapLive returns the bytes of live heap objects after a full GC.
func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// testBoundedMemory: an agent that floods audio while nobody reads fills
// at most MaxQueueBytes, then the connection ends with a
// *voicetest.LimitError after the events queued before it; a frame larger
// than MaxFrameBytes ends the connection with an error naming the bound
// (the frame sent after it may come first with Subject.Unordered).
func testBoundedMemory(t *testing.T, s Subject) {
	s.sub(t, "Queue", func(t *testing.T, s Subject) {
		const limit = 1 << 20
		const frames = 400
		flood := make([]Frame, frames)
		frame := s.Audio(16000)
		for i := range flood {
			flood[i] = frame
		}
		leakCheck(t)
		a := s.start(t, Peer{Send: flood, MaxQueueBytes: limit, MeasuresHeap: true})
		before := heapLive()
		conn, err := a.Connect(t.Context(), s.session(t, nil))
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		// A limit hit is never silent: Close reports it (every time).
		t.Cleanup(func() {
			for i := range 2 {
				if err := conn.Close(); !errors.Is(err, voicetest.ErrLimit) {
					t.Errorf("Close #%d after the flood: %v, want the *voicetest.LimitError", i+1, err)
				}
			}
			adaptertest.CheckNoLeak(t)
		})
		// Nobody reads: wait for the adapter to end the connection, which
		// it must do once the queue is full.
		silence := pcm.Silence(s.Rate, 20*time.Millisecond)
		deadline := time.Now().Add(60 * time.Second)
		for conn.SendAudio(t.Context(), silence) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("the connection still takes audio after a flood of %d frames of %d bytes", frames, len(frame.Data))
			}
			time.Sleep(10 * time.Millisecond)
		}
		held := heapLive() - before
		const slack = 8 << 20 // socket and read buffers, the test's own
		t.Logf("a flood of %d MiB held %.1f MiB while nobody read", frames*len(frame.Data)>>20, float64(held)/(1<<20))
		if held > limit+slack {
			t.Errorf("the adapter holds %.1f MiB of the flood, above the %d MiB bound + %d MiB", float64(held)/(1<<20), limit>>20, slack>>20)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		audio := 0
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				var le *voicetest.LimitError
				if !errors.As(err, &le) || le.Limit != limit || le.Setting == "" {
					t.Fatalf("after %d audio events: %v, want a *voicetest.LimitError of %d bytes naming its setting", audio, err, limit)
				}
				break
			}
			if ev.Kind == voicetest.AgentAudio {
				audio++
			}
		}
		if audio == 0 {
			t.Error("no audio was delivered before the limit error")
		}
	})
	s.sub(t, "Frame", func(t *testing.T, s Subject) {
		const limit = 64 << 10
		big := s.Audio(96000)
		if len(big.Data) <= limit {
			t.Fatalf("Subject.Audio(96000) is only %d bytes", len(big.Data))
		}
		// The peer sends the big frame first: an adapter that reads the
		// stream during Connect (Twilio phone: the media stream's start)
		// may meet it there, and Connect must then fail the same way.
		conn, err := s.tryConnect(t, Peer{Send: []Frame{big, s.Echo(sentinel)}, MaxFrameBytes: limit})
		if err != nil {
			if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "MaxFrameBytes") {
				t.Fatalf("Connect: %v, want it to succeed, or to fail with the connection closed by an error naming MaxFrameBytes", err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "MaxFrameBytes") {
					t.Fatalf("Recv: %v, want the connection closed with an error naming MaxFrameBytes", err)
				}
				break
			}
			if ev.Kind == voicetest.AgentAudio || mentions(ev, sentinel) && !s.Unordered {
				t.Fatalf("got %s after a frame over MaxFrameBytes", ev.Kind)
			}
		}
	})
}

// logBuf collects log lines from the adapters' goroutines.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testSecrets: the credential, also where the agent echoes it, reaches
// neither the capture, the log, the result's artifacts nor its golden
// files; a rejected credential is not repeated in the error.
func testSecrets(t *testing.T, s Subject) {
	s.sub(t, "Echoed", func(t *testing.T, s Subject) {
		var log logBuf
		capture := &adaptertest.SyncBuffer{}
		res, err := s.run(t, Peer{Key: canary, Send: []Frame{s.Echo("the key is " + canary)}}, voicetest.Config{
			Capture: capture, Logf: log.logf,
			Script: []voicetest.Step{voicetest.UserSays("Hello."), voicetest.AgentTurn()},
		})
		if err != nil {
			if strings.Contains(err.Error(), canary) {
				t.Error("the error holds the key")
			}
			t.Fatalf("scenario failed: %v\n%s", err, timeline(res))
		}
		// Binary frames are base64 in the capture: look at the payloads.
		recs, err := wire.ReadCapture(bytes.NewReader(capture.Bytes()))
		if err != nil {
			t.Fatalf("ReadCapture: %v", err)
		}
		redacted := false
		for _, r := range recs {
			b, _ := r.Payload()
			redacted = redacted || bytes.Contains(b, []byte("REDACTED"))
			if bytes.Contains(b, []byte(canary)) {
				t.Errorf("the capture holds the key in %s %s record at %v ms", r.Dir, r.Type, r.TMs)
			}
		}
		if !redacted {
			t.Error("the capture shows no redacted echo: the echo was not received, or not scrubbed")
		}
		if bytes.Contains(capture.Bytes(), []byte(canary)) {
			t.Error("the capture holds the key")
		}
		if strings.Contains(log.String(), canary) {
			t.Errorf("the log holds the key:\n%s", log.String())
		}
		dir := t.TempDir()
		if err := res.Save(filepath.Join(dir, "artifacts")); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteGolden(filepath.Join(dir, "golden"), voicetest.GoldenOptions{}); err != nil {
			t.Fatal(err)
		}
		files := 0
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if bytes.Contains(b, []byte(canary)) {
				t.Errorf("%s holds the key", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files < 4 {
			t.Errorf("only %d files written: nothing to check", files)
		}
	})
	if s.ChecksKey {
		s.sub(t, "Rejected", func(t *testing.T, s Subject) {
			var log logBuf
			leakCheck(t)
			a := s.start(t, Peer{Key: canary, PeerKey: "the-right-key"})
			conn, err := a.Connect(t.Context(), s.session(t, log.logf))
			if err == nil {
				conn.Close()
				t.Fatal("a wrong key was accepted")
			}
			if strings.Contains(err.Error(), canary) || strings.Contains(log.String(), canary) {
				t.Errorf("the error or the log repeats the key: %v\n%s", err, log.String())
			}
		})
	}
}

// testCapture: a run's wire capture reads back with wire.ReadCapture: it
// notes the open before any frame, holds frames both ways in time order, each
// payload decodable, and ends with a note of the close.
func testCapture(t *testing.T, s Subject) {
	capture := &adaptertest.SyncBuffer{}
	res, err := s.run(t, Peer{}, voicetest.Config{
		Capture: capture,
		Golden:  voicetest.GoldenOptions{Disable: true},
		Script:  []voicetest.Step{voicetest.UserSays("Hello."), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatalf("scenario failed: %v\n%s", err, timeline(res))
	}
	recs, err := wire.ReadCapture(bytes.NewReader(capture.Bytes()))
	if err != nil {
		t.Fatalf("ReadCapture: %v", err)
	}
	if len(recs) < 4 {
		t.Fatalf("%d capture records", len(recs))
	}
	// Notes of the adapter's own (LayerCode's authorize) may come first;
	// the open note comes before any frame.
	opened := false
	for _, r := range recs {
		if r.Dir == "note" && r.Type == "open" {
			opened = true
		}
		if r.Dir != "note" {
			if !opened {
				t.Errorf("frame %+v before the open note", r)
			}
			break
		}
	}
	if last := recs[len(recs)-1]; last.Dir != "note" || !strings.HasPrefix(last.Type, "close") {
		t.Errorf("last record %+v, want a close note", last)
	}
	dirs := map[string]int{}
	for i, r := range recs {
		dirs[r.Dir]++
		if i > 0 && r.TMs < recs[i-1].TMs {
			t.Errorf("record %d at %v ms comes after one at %v ms", i, r.TMs, recs[i-1].TMs)
		}
		if _, err := r.Payload(); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if dirs["send"] == 0 || dirs["recv"] == 0 {
		t.Errorf("capture records by direction %v: want frames sent and received", dirs)
	}
}

// mentions reports whether ev carries s in its text or data.
func mentions(ev voicetest.AgentEvent, s string) bool {
	if strings.Contains(ev.Text, s) || bytes.Contains(ev.Data, []byte(s)) {
		return true
	}
	return ev.Tool != nil && (bytes.Contains(ev.Tool.Arguments, []byte(s)) || strings.Contains(ev.Tool.Name, s))
}

// count returns how many timeline events of type typ res has.
func count(res *voicetest.Result, typ voicetest.EventType) int {
	n := 0
	for _, e := range res.Timeline {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// timeline returns res's timeline for a failure message ("" for none).
func timeline(res *voicetest.Result) string {
	if res == nil {
		return ""
	}
	return res.TimelineText()
}
