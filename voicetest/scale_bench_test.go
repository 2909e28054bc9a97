package voicetest_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Scale benchmarks: many scenarios at once, and the accuracy of the latency
// the runner measures against a real loopback socket.

// processCPU returns the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sharedTTS is cachedTTS made safe for concurrent scenarios.
type sharedTTS struct {
	mu sync.Mutex
	c  cachedTTS
}

func (s *sharedTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.Synthesize(ctx, req)
}

// BenchmarkScale100Parallel runs 100 ten-turn scenarios at once, each with
// its own zero-latency in-process fake agent, through Run outside a synctest
// bubble (the fakes keep the runner's virtual Clock since issue 21; before,
// they ran on the real clock) with fast pacing. One op is the whole batch
// of 100. It reports the wall time per scenario, the bytes allocated per
// scenario, the heap still live per scenario while all 100 results are held,
// and how many cores the batch kept busy (process CPU time / wall time);
// run it with -cpu 1,2 to see how it scales with cores.
func BenchmarkScale100Parallel(b *testing.B) {
	const n = 100
	tts := &sharedTTS{c: cachedTTS{m: map[string]pcm.Chunk{}}}
	// Warm the TTS so every batch does the same work.
	if _, err := voicetest.Run(b.Context(), fastTenTurns(tts)); err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	var totalWall, totalCPU time.Duration
	var totalAlloc, totalLive uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		alloc0, live0 := ms.TotalAlloc, ms.HeapAlloc
		b.StartTimer()
		cpu0, wall0 := processCPU(), time.Now()
		results := make([]*voicetest.Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = voicetest.Run(b.Context(), fastTenTurns(tts)) })
		}
		wg.Wait()
		totalWall += time.Since(wall0)
		totalCPU += processCPU() - cpu0
		b.StopTimer()
		for i, err := range errs {
			if err != nil || results[i].Turns != 10 || !results[i].Success {
				b.Fatalf("scenario %d: err %v", i, err)
			}
		}
		runtime.ReadMemStats(&ms)
		totalAlloc += ms.TotalAlloc - alloc0
		runtime.GC()
		runtime.ReadMemStats(&ms)
		totalLive += ms.HeapAlloc - min(live0, ms.HeapAlloc)
		runtime.KeepAlive(results)
		b.StartTimer()
	}
	ops := float64(b.N)
	b.ReportMetric(float64(totalWall.Microseconds())/ops/n, "wall-µs/scenario")
	b.ReportMetric(float64(totalAlloc)/ops/n/(1<<20), "alloc-MB/scenario")
	b.ReportMetric(float64(totalLive)/ops/n/(1<<20), "live-MB/scenario")
	b.ReportMetric(float64(totalCPU)/float64(totalWall), "cores-busy")
}

// loopbackAgent is an agent on a real TCP loopback socket that answers
// each end of utterance after a known delay: the test's ground truth for
// latency. Frames are a type byte, a big-endian uint32 length and the
// payload: 'A' user audio, 'E' end of utterance from the runner; 'a' agent
// audio and 'T' turn end from the agent.
type loopbackAgent struct {
	ln    net.Listener
	delay time.Duration
	reply []byte // PCM16 of the agent's reply
	// onEnd, when set, replaces the reply to an end of utterance (the fault
	// tests' misbehaving agents). It runs on the connection's goroutine.
	onEnd func(c *net.TCPConn)
	wg    sync.WaitGroup
}

func startLoopbackAgent(tb testing.TB, delay time.Duration) *loopbackAgent {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	a := &loopbackAgent{ln: ln, delay: delay, reply: frame(pcm.DefaultRate, 200*time.Millisecond).Bytes()}
	a.wg.Go(a.serve)
	tb.Cleanup(func() { ln.Close(); a.wg.Wait() })
	return a
}

func (a *loopbackAgent) serve() {
	for {
		c, err := a.ln.Accept()
		if err != nil {
			return
		}
		a.wg.Go(func() { a.talk(c) })
	}
}

// writeFrame writes the frame in one Write: a frame split over two writes
// would let the peer act on a complete header before the second write
// (even an empty one) reached the socket, and a peer that resets the
// connection on the header would then fail that write with EPIPE.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	buf := make([]byte, 5+len(payload))
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(payload)))
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return hdr[0], p, err
}

// talk answers every 'E' with the reply after the delay, on the real clock.
func (a *loopbackAgent) talk(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var mu sync.Mutex
	var timers []*time.Timer
	defer func() {
		mu.Lock()
		for _, t := range timers {
			t.Stop()
		}
		mu.Unlock()
	}()
	for {
		typ, _, err := readFrame(r)
		if err != nil {
			return
		}
		if typ == 'E' && a.onEnd != nil {
			a.onEnd(c.(*net.TCPConn))
			continue
		}
		if typ == 'E' {
			mu.Lock()
			timers = append(timers, time.AfterFunc(a.delay, func() {
				mu.Lock()
				defer mu.Unlock()
				if writeFrame(c, 'a', a.reply) == nil {
					writeFrame(c, 'T', nil)
				}
			}))
			mu.Unlock()
		}
	}
}

func (a *loopbackAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", a.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	lc := &loopConn{c: c, rate: s.Rate, events: make(chan voicetest.AgentEvent, 64), done: make(chan struct{}), quit: make(chan struct{})}
	go lc.read()
	return lc, nil
}

// loopConn is the runner's side of the loopback agent.
type loopConn struct {
	c      net.Conn
	rate   int
	wmu    sync.Mutex
	events chan voicetest.AgentEvent
	err    error // set before done is closed
	done   chan struct{}
	quit   chan struct{} // closed by Close
	once   sync.Once
}

func (l *loopConn) read() {
	defer close(l.done)
	r := bufio.NewReader(l.c)
	for {
		typ, p, err := readFrame(r)
		if err != nil {
			l.err = &voicetest.TransportClosedError{Adapter: "loopback", Err: err}
			return
		}
		ev := voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}
		if typ == 'a' {
			c, err := pcm.FromBytes(l.rate, p)
			if err != nil {
				l.err = err
				return
			}
			ev = voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: c}
		}
		select {
		case l.events <- ev:
		case <-l.quit:
			return
		}
	}
}

func (l *loopConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "loopback", Audio: true, TurnEnd: true,
		InputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: l.rate}, OutputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: l.rate}}
}

func (l *loopConn) send(typ byte, p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := writeFrame(l.c, typ, p); err != nil {
		return &voicetest.TransportClosedError{Adapter: "loopback", Err: err}
	}
	return nil
}

func (l *loopConn) SendAudio(ctx context.Context, c pcm.Chunk) error { return l.send('A', c.Bytes()) }
func (l *loopConn) EndUtterance(ctx context.Context) error           { return l.send('E', nil) }
func (l *loopConn) SendText(ctx context.Context, text string) error {
	return &voicetest.UnsupportedError{Adapter: "loopback", Capability: "text", Alternative: "send audio"}
}
func (l *loopConn) SendDTMF(ctx context.Context, digits string) error {
	return &voicetest.UnsupportedError{Adapter: "loopback", Capability: "DTMF", Alternative: "in-band tones"}
}
func (l *loopConn) Interrupt(ctx context.Context) error {
	return &voicetest.UnsupportedError{Adapter: "loopback", Capability: "native interrupt", Alternative: "overlapping audio"}
}

func (l *loopConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case ev := <-l.events:
		return ev, nil
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	case <-l.done:
		select {
		case ev := <-l.events:
			return ev, nil
		default:
		}
		if l.err == nil {
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "loopback", Err: errors.New("closed")}
		}
		return voicetest.AgentEvent{}, l.err
	}
}

func (l *loopConn) Close() error {
	var err error
	l.once.Do(func() { close(l.quit); err = l.c.Close(); <-l.done })
	return err
}

// BenchmarkTTFBMeasurementError runs ten-turn scenarios against an agent on
// a real TCP loopback socket that answers every end of utterance after
// exactly 100 ms, and reports how far the latency the runner measured is
// from that: the p50, p95 and maximum of |measured − 100 ms| over every turn
// of the run (b.N scenarios of 10 turns). The error includes the loopback
// transfer and the scheduling of both sides on a shared machine.
func BenchmarkTTFBMeasurementError(b *testing.B) {
	const delay = 100 * time.Millisecond
	agent := startLoopbackAgent(b, delay)
	tts := &sharedTTS{c: cachedTTS{m: map[string]pcm.Chunk{}}}
	var errs []time.Duration
	for b.Loop() {
		cfg := fastTenTurns(tts)
		cfg.Agent = agent
		res, err := voicetest.Run(b.Context(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Latency.PerTurn) != 10 {
			b.Fatalf("%d latencies measured, want 10", len(res.Latency.PerTurn))
		}
		for _, l := range res.Latency.PerTurn {
			errs = append(errs, (l - delay).Abs())
		}
	}
	slices.Sort(errs)
	p := func(q float64) float64 {
		return float64(errs[min(len(errs)-1, int(q*float64(len(errs)-1)+0.999999))].Microseconds())
	}
	b.ReportMetric(p(0.5), "p50-err-µs")
	b.ReportMetric(p(0.95), "p95-err-µs")
	b.ReportMetric(float64(errs[len(errs)-1].Microseconds()), "max-err-µs")
	b.ReportMetric(float64(len(errs)), "turns")
}
