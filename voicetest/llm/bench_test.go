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

var loopbackRequest = voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "question number one"}}}

// BenchmarkCompleteLoopback is one completion (cache off) against the
// loopback fakeopenai double with the client's default transport: the
// framework's cost per LLM call (encoding the request, openai-go's
// request handling, the HTTP round trip on loopback, decoding the answer,
// and the double's own serving, all in this process). cpu-ns/op is the
// process's CPU time (user and system) per call, which a shared machine
// disturbs less than the wall time.
func BenchmarkCompleteLoopback(b *testing.B) {
	cl := loopbackClient(b)
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
func TestCompleteLoopbackInBubbleCost(t *testing.T) {
	n := *bubbleCalls
	if n <= 0 {
		t.Skip("set -llm.bubblecalls=N to measure N calls inside a synctest bubble")
	}
	cl := loopbackClient(t)
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
