// Package adaptertest holds the helpers the adapters' tests and benchmarks
// share: sessions, test tones, receiving until an event, closing a Conn
// with a check that it leaked no goroutine, the scaffolding of the
// benchmarks, record-and-replay of cassettes (RecordReplay,
// RecordReplayOn), and an in-memory network (MemNet) on which a peer and
// its adapter run in one testing/synctest bubble, on virtual time. Only
// tests import it.
package adaptertest

import (
	"bytes"
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// DialAgent connects a and closes the Conn (checking for leaks) when the
// test ends.
func DialAgent(t testing.TB, a voicetest.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	conn, err := a.Connect(t.Context(), s)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	CloseConn(t, conn)
	return conn
}

// BenchConn connects a for a benchmark with a Session at rate, and closes
// the Conn when the benchmark ends.
func BenchConn(b *testing.B, a voicetest.Agent, rate int) voicetest.Conn {
	b.Helper()
	conn, err := a.Connect(context.Background(), BenchSession(rate))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}

// BenchSendFrame measures SendAudio of frame; bytes are its PCM16 size.
func BenchSendFrame(b *testing.B, conn voicetest.Conn, frame pcm.Chunk) {
	b.Helper()
	ctx := context.Background()
	b.SetBytes(int64(2 * frame.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := conn.SendAudio(ctx, frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchTurnFrames returns the user's side of a benchmark turn at rate:
// 300 ms of Tone and 300 ms of silence in 20 ms frames.
func BenchTurnFrames(rate int) []pcm.Chunk {
	return append(Tone(rate, 440, 300*time.Millisecond, 9000).Frames(20*time.Millisecond),
		pcm.Silence(rate, 300*time.Millisecond).Frames(20*time.Millisecond)...)
}

// SendUtterance sends frames and ends the utterance.
func SendUtterance(ctx context.Context, conn voicetest.Conn, frames []pcm.Chunk) error {
	for _, f := range frames {
		if err := conn.SendAudio(ctx, f); err != nil {
			return err
		}
	}
	return conn.EndUtterance(ctx)
}

// BenchTurns measures turns: each runs send, then receives until stop
// returns true. Besides ns/op it reports cpu-ns/op, the CPU time of the
// whole process (adapter and peer) per turn.
func BenchTurns(b *testing.B, conn voicetest.Conn, send func(context.Context) error, stop func(voicetest.AgentEvent) bool) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := CPUTime(b)
	for b.Loop() {
		if err := send(ctx); err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if stop(ev) {
				break
			}
		}
	}
	b.ReportMetric(float64(CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BargeInScenario runs a scenario against agent in which the user
// interrupts the agent's first reply with "Make it eight" 400 ms in, and
// waits for the answer to it. It fails the test unless the scenario
// succeeds and its timeline holds user_interrupt then agent_interrupted.
func BargeInScenario(t *testing.T, agent voicetest.Agent) *voicetest.Result {
	t.Helper()
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: fixtures.FakeTTS(),
		// How much of the interrupted reply was said (its transcript, the
		// correction) depends on how far the server had streamed when the
		// barge-in came, which varies from run to run: no golden files.
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.Interrupt("Make it eight", voicetest.After(400*time.Millisecond)),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	var types []string
	for _, e := range res.Timeline {
		switch e.Type {
		case voicetest.EventUserInterrupt, voicetest.EventAgentInterrupted:
			types = append(types, string(e.Type))
		}
	}
	if got := strings.Join(types, " "); got != "user_interrupt agent_interrupted" {
		t.Errorf("timeline interrupt events %q\n%s", got, res.TimelineText())
	}
	return res
}

// BenchServer starts a benchmark's minimal peer, h, on loopback and stops
// it when the benchmark ends.
func BenchServer(b *testing.B, h http.Handler) *peerkit.Server {
	b.Helper()
	srv := peerkit.Start(h)
	b.Cleanup(srv.Close)
	return srv
}

// BlastLoop is a minimal peer's sending side: for every n received on
// blast it sends msg n times, as fast as it can, until ctx ends or a
// write fails.
func BlastLoop(ctx context.Context, ws *websocket.Conn, blast <-chan int, msg []byte) {
	for {
		select {
		case n := <-blast:
			for range n {
				if ws.Write(ctx, websocket.MessageText, msg) != nil {
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// SyncBuffer is a bytes.Buffer safe for the adapters' concurrent capture
// writes and the test's reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Bytes returns a copy of what was written.
func (s *SyncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// Session returns a Session at rate that logs to t, each line attributed
// to the test's line that called Session (voicetest.TestLogf).
func Session(t testing.TB, rate int) voicetest.Session {
	t.Helper()
	return voicetest.Session{Name: t.Name(), Rate: rate, Logf: voicetest.TestLogf(t)}
}

// Tone returns d of a sine at freq Hz and amplitude amp, at rate.
func Tone(rate int, freq float64, d time.Duration, amp float64) pcm.Chunk {
	n := pcm.SamplesFor(rate, d)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return pcm.Chunk{Rate: rate, Samples: s}
}

// SendPaced sends c to conn in 20 ms chunks.
func SendPaced(t testing.TB, ctx context.Context, conn voicetest.Conn, c pcm.Chunk) {
	t.Helper()
	for _, f := range c.Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			t.Fatalf("SendAudio: %v", err)
		}
	}
}

// TurnResult is what the agent sent in one turn.
type TurnResult struct {
	// Audio is the length of the agent audio received.
	Audio time.Duration
	// Events are the events received, in order.
	Events []voicetest.AgentEvent
}

// RecvUntil receives events until stop returns true for one, and returns
// them all.
func RecvUntil(t testing.TB, ctx context.Context, conn voicetest.Conn, stop func(voicetest.AgentEvent) bool) TurnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var r TurnResult
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv after %d events: %v", len(r.Events), err)
		}
		r.Events = append(r.Events, ev)
		if ev.Kind == voicetest.AgentAudio {
			r.Audio += ev.Audio.Duration()
		}
		if stop(ev) {
			return r
		}
	}
}

// IsMark returns a stop function matching the AgentData mark named name.
func IsMark(name string) func(voicetest.AgentEvent) bool {
	return func(ev voicetest.AgentEvent) bool {
		return ev.Kind == voicetest.AgentData && ev.Text == "mark" && string(ev.Data) == `{"name":"`+name+`"}`
	}
}

// adapterFrame matches a stack frame of an adapter package
// (adapters/twilio, adapters/wire, …), not of a test package
// (adapters/twilio_test) or of this one.
var adapterFrame = regexp.MustCompile(`voicetest/adapters/[a-z0-9]+\.`)

// exemptLabel is the profiler label that marks the goroutines of a test
// that called Exempt.
const exemptLabel = "voicetest-adaptertest-exempt"

// Exempt leaves the goroutines of t out of Goroutines, and so out of
// every CheckNoLeak: t's goroutine (call Exempt from it, first thing)
// and every goroutine it starts from then on, and those start in turn
// (the adapter's, its SDK's), carry a profiler label that Goroutines
// skips. It is for a test that runs in parallel with checks that look at
// every adapter goroutine of the process (conformance.Run): its
// conversation's goroutines are not theirs to find. The exempt test's own
// leaks are then found only by a check of the whole package at its end
// (leakcheck.Main).
func Exempt(t testing.TB) {
	t.Helper()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(exemptLabel, t.Name())))
}

// Goroutines returns the stacks of running goroutines of the adapter
// packages, or "" when there are none. Only the goroutines of the
// caller's testing/synctest bubble count, or, called outside any bubble,
// only those outside every bubble: a check in a bubble and one on the real
// clock may then run at the same time (conformance.Subject.Alongside)
// without either seeing the other's goroutines. Goroutines of tests that
// called Exempt are left out too (outside bubbles): the stacks are then the
// goroutine profile's (grouped, with their labels). The profile does not
// name bubbles, so while an adapter goroutine runs in some bubble, an
// Exempt test's goroutines are not told apart (no package mixes the two).
func Goroutines() string {
	buf := make([]byte, 1<<20)
	self := bubble(string(buf[:runtime.Stack(buf, false)]))
	var out []string
	bubbled := false
	for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !adapterFrame.MatchString(g) {
			continue
		}
		if bubble(g) == self {
			out = append(out, g)
		}
		bubbled = bubbled || bubble(g) != ""
	}
	if len(out) == 0 || self != "" || bubbled {
		return strings.Join(out, "\n\n")
	}
	// runtime.Stack does not show labels; the profile does.
	mark := strconv.Quote(exemptLabel) + ":"
	var prof bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&prof, 1); err != nil || !strings.Contains(prof.String(), mark) {
		return strings.Join(out, "\n\n")
	}
	var own []string
	for g := range strings.SplitSeq(prof.String(), "\n\n") {
		if adapterFrame.MatchString(g) && !strings.Contains(g, mark) {
			own = append(own, g)
		}
	}
	return strings.Join(own, "\n\n")
}

// bubble returns the synctest bubble a goroutine's stack names in its
// header ("goroutine 7 [chan receive (durable), synctest bubble 3]:"),
// or "" for a goroutine outside any bubble.
func bubble(stack string) string {
	header, _, _ := strings.Cut(stack, "\n")
	if i := strings.LastIndex(header, "synctest bubble "); i >= 0 {
		return header[i:]
	}
	return ""
}

// CheckNoLeak fails if goroutines of the adapter packages are still
// running shortly after a Conn was closed: of the caller's bubble, or
// outside any bubble (see Goroutines).
func CheckNoLeak(t testing.TB) {
	t.Helper()
	var stacks string
	for range 200 {
		if stacks = Goroutines(); stacks == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("adapter goroutines still running after Close:\n%s", stacks)
}

// CloseConn closes conn when the test ends and checks that it leaked
// nothing.
func CloseConn(t testing.TB, conn voicetest.Conn) {
	t.Helper()
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := conn.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		CheckNoLeak(t)
	})
}

// WantDurationNear checks that d is within tol of want.
func WantDurationNear(t testing.TB, what string, d, want, tol time.Duration) {
	t.Helper()
	if d < want-tol || d > want+tol {
		t.Errorf("%s = %v, want %v ± %v", what, d, want, tol)
	}
}

// WantDurationIn fails t unless lo <= d <= hi: a figure measured on the
// real clock, within its tolerance.
func WantDurationIn(t testing.TB, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Errorf("%s = %v, want %v to %v", what, d, lo, hi)
	}
}

// BlackHole listens on loopback, accepts TCP connections and never answers,
// so a WebSocket handshake against it times out.
func BlackHole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	holdConns(t, ln)
	return "ws://" + ln.Addr().String() + "/media"
}

// holdConns accepts l's connections and holds them, never reading nor
// answering, until the test ends; then it closes l and them.
func holdConns(t testing.TB, l net.Listener) {
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// BenchSession returns a benchmark's Session at rate, which logs nothing.
func BenchSession(rate int) voicetest.Session {
	return voicetest.Session{Name: "bench", Rate: rate, Logf: func(string, ...any) {}}
}

// CPUTime returns the CPU time this process has used.
func CPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// IsKind returns a stop function matching events of kind k.
func IsKind(k voicetest.EventKind) func(voicetest.AgentEvent) bool {
	return func(ev voicetest.AgentEvent) bool { return ev.Kind == k }
}

// ToneTTS "says" every line as 300 ms of a 440 Hz tone, enough for the
// loopback bots' energy detectors.
type ToneTTS struct{}

// Synthesize returns 300 ms of tone at the default rate, whatever the text.
func (ToneTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return Tone(pcm.DefaultRate, 440, 300*time.Millisecond, 9000), nil
}

// EventTypes lists the timeline's event types, leaving out those in skip.
func EventTypes(res *voicetest.Result, skip ...voicetest.EventType) string {
	var out []string
	for _, ev := range res.Timeline {
		if !contains(skip, ev.Type) {
			out = append(out, string(ev.Type))
		}
	}
	return strings.Join(out, " ")
}
func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// SNR returns the signal-to-noise ratio in dB of got against the ideal
// sine want, over got's samples from skip to len-skip.
func SNR(got, want []int16, skip int) float64 {
	var sig, noise float64
	for i := skip; i < len(got)-skip && i < len(want); i++ {
		d := float64(got[i]) - float64(want[i])
		sig += float64(want[i]) * float64(want[i])
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// TurnText returns the final agent transcript among evs, and the deltas
// joined.
func TurnText(evs []voicetest.AgentEvent, kind voicetest.EventKind) (final, deltas string) {
	for _, ev := range evs {
		if ev.Kind != kind {
			continue
		}
		if ev.Final {
			final = ev.Text
		} else {
			deltas += ev.Text
		}
	}
	return final, deltas
}

// Say sends one user utterance of WordTones and ends it.
func Say(t testing.TB, ctx context.Context, conn voicetest.Conn, rate int, text string) {
	t.Helper()
	SendPaced(t, ctx, conn, fixtures.WordTones(text, rate))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
}

// SayFake sends text as one user utterance of fixtures.FakeTTS speech at
// rate, which peers decode with fixtures.FakeSTT, and ends it.
func SayFake(t testing.TB, ctx context.Context, conn voicetest.Conn, rate int, text string) {
	t.Helper()
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	SendPaced(t, ctx, conn, speech)
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
}

// SilentServer is a WebSocket server that accepts the connection and
// reads, but never answers (a Realtime server that never confirms the
// session, an ElevenLabs one that never sends its metadata).
func SilentServer(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(silentHandler))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// silentHandler accepts a WebSocket and reads it until it closes, never
// answering.
func silentHandler(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	for {
		if _, _, err := ws.Read(r.Context()); err != nil {
			return
		}
	}
}

// Kinds lists the Kinds of events other than audio.
func Kinds(evs []voicetest.AgentEvent) string {
	var out []string
	for _, ev := range evs {
		if ev.Kind != voicetest.AgentAudio {
			out = append(out, ev.Kind.String())
		}
	}
	return strings.Join(out, " ")
}

// FakeSpeech is fixtures.FakeTTS as the peer's voice.
func FakeSpeech(text string, rate int) pcm.Chunk {
	c, err := fixtures.FakeTTS().Synthesize(context.Background(), voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		panic(err)
	}
	return c
}
