package llm

import (
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
)

// bubbleCalls is how many calls TestCompleteLoopbackInBubbleCost makes (0:
// it is skipped): a benchmark cannot run in a synctest bubble, whose clock
// b.Loop would read.
var bubbleCalls = flag.Int("llm.bubblecalls", 0, "measure this many loopback completions inside a synctest bubble (TestCompleteLoopbackInBubbleCost)")

// loopbackClient returns a Client with the default transport on a
// fakeopenai double that answers every completion alike.
func loopbackClient(tb testing.TB) *Client {
	tb.Helper()
	srv := fakeopenai.New(tb)
	srv.HandleChat(func(fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		return fakeopenai.ChatReply{Content: "Here is answer one."}, nil
	})
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithModel("m"))
	require.NoError(tb, err)
	return cl
}

// cannedClient returns a Client with the default transport on a
// cannedServer, which answers loopbackRequest's completion at next to no
// cost of its own.
func cannedClient(tb testing.TB) *Client {
	tb.Helper()
	srv := startCannedServer(tb)
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.baseURL()), WithAPIKey("sk-canned"), WithModel("m"))
	require.NoError(tb, err)
	return cl
}

var loopbackRequest = voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "question number one"}}}

// BenchmarkCompleteLoopback is one completion (cache off) against the
// loopback fakeopenai double with the client's default transport:
// encoding the request, sending it, the HTTP round trip on loopback,
// decoding the answer, and the double's own serving (net/http, its JSON
// decoding and checks), all in this process; BenchmarkCompleteCanned
// leaves the double's share out. cpu-ns/op is the
// process's CPU time (user and system) per call, which a shared machine
// disturbs less than the wall time.
func BenchmarkCompleteLoopback(b *testing.B) { benchmarkComplete(b, loopbackClient(b)) }

// BenchmarkCompleteCanned is BenchmarkCompleteLoopback's call against a
// cannedServer instead of the double: the framework's own cost per LLM
// call (the client's work and the loopback round trip), with the server's
// share reduced to reading a header and writing prepared bytes.
func BenchmarkCompleteCanned(b *testing.B) { benchmarkComplete(b, cannedClient(b)) }

func benchmarkComplete(b *testing.B, cl *Client) {
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		if _, err := cl.Complete(b.Context(), loopbackRequest); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// TestCompleteLoopbackInBubbleCost measures BenchmarkCompleteLoopback's
// call inside a synctest bubble, where a benchmark cannot run: with
// -llm.bubblecalls=N it makes N calls in one bubble and logs the wall and
// CPU time per call.
func TestCompleteLoopbackInBubbleCost(t *testing.T) { bubbleCost(t, loopbackClient) }

// TestCompleteCannedInBubbleCost is BenchmarkCompleteCanned's call inside a
// synctest bubble, measured as TestCompleteLoopbackInBubbleCost measures
// its own.
func TestCompleteCannedInBubbleCost(t *testing.T) { bubbleCost(t, cannedClient) }

func bubbleCost(t *testing.T, client func(testing.TB) *Client) {
	n := *bubbleCalls
	if n <= 0 {
		t.Skip("set -llm.bubblecalls=N to measure N calls inside a synctest bubble")
	}
	cl := client(t)
	_, err := cl.Complete(t.Context(), loopbackRequest) // warm up outside the bubble
	require.NoError(t, err)
	// Measured outside the bubble, whose clock is virtual; starting and
	// ending a bubble costs microseconds.
	start := time.Now()
	cpu0, _ := processCPU()
	synctest.Test(t, func(t *testing.T) {
		for range n {
			if _, err := cl.Complete(t.Context(), loopbackRequest); err != nil {
				t.Fatal(err)
			}
		}
	})
	cpu1, _ := processCPU()
	wall, cpu := time.Since(start), cpu1-cpu0
	t.Logf("inside a bubble: %d calls, %.1f µs wall and %.1f µs CPU per call",
		n, float64(wall.Microseconds())/float64(n), float64(cpu.Microseconds())/float64(n))
}
