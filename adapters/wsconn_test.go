package adapters_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// syncBuffer is a bytes.Buffer safe for the adapters' concurrent capture
// writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// session returns a Session at rate that logs to t.
func session(t testing.TB, rate int) voicetest.Session {
	return voicetest.Session{Name: t.Name(), Rate: rate, Logf: t.Logf}
}

// tone returns d of a sine at freq Hz and amplitude amp, at rate.
func tone(rate int, freq float64, d time.Duration, amp float64) pcm.Chunk {
	n := pcm.SamplesFor(rate, d)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return pcm.Chunk{Rate: rate, Samples: s}
}

// sendPaced sends c to conn in 20 ms chunks.
func sendPaced(t testing.TB, ctx context.Context, conn voicetest.Conn, c pcm.Chunk) {
	t.Helper()
	for _, f := range c.Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(ctx, f); err != nil {
			t.Fatalf("SendAudio: %v", err)
		}
	}
}

// turnResult is what the agent sent in one turn.
type turnResult struct {
	audio  time.Duration
	events []voicetest.AgentEvent
}

// recvUntil receives events until stop returns true for one, and returns
// them all.
func recvUntil(t testing.TB, ctx context.Context, conn voicetest.Conn, stop func(voicetest.AgentEvent) bool) turnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var r turnResult
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv after %d events: %v", len(r.events), err)
		}
		r.events = append(r.events, ev)
		if ev.Kind == voicetest.AgentAudio {
			r.audio += ev.Audio.Duration()
		}
		if stop(ev) {
			return r
		}
	}
}

// isMark returns a stop function matching the AgentData mark named name.
func isMark(name string) func(voicetest.AgentEvent) bool {
	return func(ev voicetest.AgentEvent) bool {
		return ev.Kind == voicetest.AgentData && ev.Text == "mark" && string(ev.Data) == `{"name":"`+name+`"}`
	}
}

// adapterGoroutines returns the stacks of running goroutines of the
// adapters package, or "" when there are none.
func adapterGoroutines() string {
	buf := make([]byte, 1<<20)
	var out []string
	for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "voicetest/adapters.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// checkNoLeak fails if goroutines of the adapters package are still
// running shortly after a Conn was closed.
func checkNoLeak(t testing.TB) {
	t.Helper()
	var stacks string
	for range 200 {
		if stacks = adapterGoroutines(); stacks == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("adapter goroutines still running after Close:\n%s", stacks)
}

func TestLeakCheckSeesOpenConns(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{})
	conn, err := adapters.Twilio(bot.URL).Connect(t.Context(), session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	// The reader, the keepalive, the mark echoer and the RealTime line.
	stacks := adapterGoroutines()
	if n := strings.Count(stacks, "created by github.com/voicetest-go/voicetest/adapters."); n != 4 {
		t.Errorf("the leak check sees %d goroutines of an open RealTime Twilio conn, want 4:\n%s", n, stacks)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t)
}

// closeConn closes conn when the test ends and checks that it leaked
// nothing.
func closeConn(t testing.TB, conn voicetest.Conn) {
	t.Helper()
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := conn.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		checkNoLeak(t)
	})
}

// wantAgentAudioNear checks that d is within tol of want.
func wantDurationNear(t testing.TB, what string, d, want, tol time.Duration) {
	t.Helper()
	if d < want-tol || d > want+tol {
		t.Errorf("%s = %v, want %v ± %v", what, d, want, tol)
	}
}

// blackHole listens on loopback, accepts TCP connections and never answers,
// so a WebSocket handshake against it times out.
func blackHole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "ws://" + ln.Addr().String() + "/media"
}

func TestDialTimeout(t *testing.T) {
	url := blackHole(t)
	for _, agent := range []voicetest.Agent{
		&adapters.TwilioAgent{URL: url, WSOptions: adapters.WSOptions{DialTimeout: 100 * time.Millisecond}},
		&adapters.WebSocketAgent{URL: url, Codec: adapters.RawPCM(16000), WSOptions: adapters.WSOptions{DialTimeout: 100 * time.Millisecond}},
	} {
		_, err := agent.Connect(t.Context(), session(t, 24000))
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || te.Timeout != 100*time.Millisecond {
			t.Fatalf("Connect to a silent server: %v, want a connect TimeoutError after 100ms", err)
		}
		if !strings.Contains(err.Error(), "DialTimeout") {
			t.Errorf("error %q does not name the option to change", err)
		}
	}
}

func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close()
	_, err = adapters.Twilio(url).Connect(t.Context(), session(t, 24000))
	if err == nil || !strings.Contains(err.Error(), "dial "+url) {
		t.Fatalf("Connect to a closed port: %v, want a dial error naming the URL", err)
	}
}

func TestBadSessionRate(t *testing.T) {
	for _, agent := range []voicetest.Agent{adapters.Twilio("ws://127.0.0.1:1"), adapters.WebSocket("ws://127.0.0.1:1", adapters.RawPCM(16000))} {
		_, err := agent.Connect(t.Context(), session(t, 0))
		if !errors.Is(err, pcm.ErrBadRate) {
			t.Errorf("Connect with rate 0: %v, want ErrBadRate", err)
		}
	}
}
