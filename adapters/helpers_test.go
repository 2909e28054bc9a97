package adapters_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Helpers shared by the adapters' tests and benchmarks. (The conversation
// helpers — session, tone, closeConn, checkNoLeak, … — are in
// wsconn_test.go.)

// dialAgent connects a and closes the Conn (checking for leaks) when the
// test ends.
func dialAgent(t testing.TB, a voicetest.Agent, s voicetest.Session) voicetest.Conn {
	t.Helper()
	conn, err := a.Connect(t.Context(), s)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	closeConn(t, conn)
	return conn
}

// benchConn connects a for a benchmark with a session at rate, and closes
// the Conn when the benchmark ends.
func benchConn(b *testing.B, a voicetest.Agent, rate int) voicetest.Conn {
	b.Helper()
	conn, err := a.Connect(context.Background(), benchSession(rate))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}

// benchSendFrame measures SendAudio of frame; bytes are its PCM16 size.
func benchSendFrame(b *testing.B, conn voicetest.Conn, frame pcm.Chunk) {
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

// benchTurnFrames returns the user's side of a benchmark turn at rate:
// 300 ms of tone and 300 ms of silence in 20 ms frames.
func benchTurnFrames(rate int) []pcm.Chunk {
	return append(tone(rate, 440, 300*time.Millisecond, 9000).Frames(20*time.Millisecond),
		pcm.Silence(rate, 300*time.Millisecond).Frames(20*time.Millisecond)...)
}

// sendUtterance sends frames and ends the utterance.
func sendUtterance(ctx context.Context, conn voicetest.Conn, frames []pcm.Chunk) error {
	for _, f := range frames {
		if err := conn.SendAudio(ctx, f); err != nil {
			return err
		}
	}
	return conn.EndUtterance(ctx)
}

// benchTurns measures turns: each runs send, then receives until stop
// returns true. Besides ns/op it reports cpu-ns/op, the CPU time of the
// whole process (adapter and peer) per turn.
func benchTurns(b *testing.B, conn voicetest.Conn, send func(context.Context) error, stop func(voicetest.AgentEvent) bool) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
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
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// bargeInScenario runs a scenario against agent in which the user
// interrupts the agent's first reply with "Make it eight" 400 ms in, and
// waits for the answer to it. It fails the test unless the scenario
// succeeds and its timeline holds user_interrupt then agent_interrupted.
func bargeInScenario(t *testing.T, agent voicetest.Agent) *voicetest.Result {
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

// benchServer starts a benchmark's minimal peer, h, on loopback and stops
// it when the benchmark ends.
func benchServer(b *testing.B, h http.Handler) *peerkit.Server {
	b.Helper()
	srv := peerkit.Start(h)
	b.Cleanup(srv.Close)
	return srv
}

// blastLoop is a minimal peer's sending side: for every n received on
// blast it sends msg n times, as fast as it can, until ctx ends or a
// write fails.
func blastLoop(ctx context.Context, ws *websocket.Conn, blast <-chan int, msg []byte) {
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
