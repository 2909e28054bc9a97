package llm

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestRecordInsideScenarioBubble records chat completions from a User that
// runs inside voicetest.Scenario's synctest bubble. With HTTP keep-alive the
// transport's idle connection goroutine (parked on a network read, not
// durably blocked) would stop the bubble's clock and keep it from ever
// finishing; the client's default transport keeps no idle connections.
func TestRecordInsideScenarioBubble(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		return fakeopenai.ChatReply{Content: fmt.Sprintf("Line %d", len(req.Messages))}, nil
	})
	cl, c := newClient(t, srv, cache.Record)

	// A hang would otherwise only show as go test's global timeout.
	watchdog := time.AfterFunc(3*time.Minute, func() {
		panic("TestRecordInsideScenarioBubble: the scenario did not finish in 3 minutes: an HTTP connection goroutine probably stopped the synctest bubble's clock")
	})
	defer watchdog.Stop()

	history := []voicetest.ChatMessage{{Role: voicetest.ChatSystem, Content: "You are a caller."}}
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		history = append(history, voicetest.ChatMessage{Role: voicetest.ChatUser, Content: st.LastAgentText()})
		resp, err := cl.Complete(ctx, voicetest.ChatRequest{Messages: history})
		if err != nil {
			return voicetest.Utterance{}, err
		}
		history = append(history, resp.Message)
		return voicetest.Utterance{Text: resp.Message.Content}, nil
	})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: fixtures.TextAgent(
			fixtures.Reply{Text: "Hello, how can I help?", Latency: 300 * time.Millisecond},
			fixtures.Reply{Text: "Anything else?", Latency: 300 * time.Millisecond},
		),
		User:   user,
		Script: []voicetest.Step{voicetest.Proceed(2)},
		Golden: voicetest.GoldenOptions{Disable: true},
	})
	require.True(t, res.Success, "scenario failed: %v", res.Err)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, "user: Line 2\nagent: Hello, how can I help?\nuser: Line 4\nagent: Anything else?\n", res.TranscriptText())
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)

	// Both completions were recorded: a replaying client answers them
	// without the server.
	rc, err := cache.Open(c.Dir(), cache.WithMode(cache.Replay))
	require.NoError(t, err)
	rcl, err := New(withGetenv(noEnv), WithCache(rc), WithModel("gpt-4o-mini"), WithMaxRetries(0),
		WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()))
	require.NoError(t, err)
	resp, err := rcl.Complete(t.Context(), voicetest.ChatRequest{Messages: history[:2]})
	require.NoError(t, err)
	assert.Equal(t, "Line 2", resp.Message.Content)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2, "the replay did not call the server")
}

// TestDefaultClientReusesConnectionsOutsideABubble checks the client's
// default transport: outside a synctest bubble its calls share one
// kept-alive connection; inside a bubble each call has a connection of
// its own that is closed when the call returns (an idle one would stop
// the bubble's clock), and those never reach the pool the calls outside
// use; after the bubble, the pooled connection is used again.
func TestDefaultClientReusesConnectionsOutsideABubble(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		return fakeopenai.ChatReply{Content: "ok"}, nil
	})
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithModel("m"))
	require.NoError(t, err)
	req := voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}}
	complete := func(ctx context.Context, n int) {
		for range n {
			_, err := cl.Complete(ctx, req)
			require.NoError(t, err)
		}
	}
	addrs := func() []string {
		var a []string
		for _, r := range srv.RequestsTo("/v1/chat/completions") {
			a = append(a, r.RemoteAddr)
		}
		return a
	}
	complete(t.Context(), 4)
	out := addrs()
	require.Len(t, out, 4)
	for i, a := range out {
		assert.Equal(t, out[0], a, "call %d outside a bubble used a new connection (%v); the default client keeps one alive", i, out)
	}
	synctest.Test(t, func(t *testing.T) {
		complete(t.Context(), 2)
		time.Sleep(time.Second) // the clock still moves: no idle connection is left
	})
	in := addrs()[4:]
	require.Len(t, in, 2)
	assert.NotEqual(t, in[0], in[1], "the calls inside the bubble share a connection that was left idle")
	assert.NotContains(t, in, out[0], "a call inside the bubble used the connection pooled outside it")
	complete(t.Context(), 1)
	assert.Equal(t, out[0], addrs()[6], "after the bubble, the call did not use the pooled connection")
}

// BenchmarkCompleteLoopback is one completion (cache off) against the
// loopback fakeopenai double with the client's default transport: the
// framework's cost per LLM call (openai-go's request and response
// handling, the HTTP round trip on loopback, the double's own work).
func BenchmarkCompleteLoopback(b *testing.B) {
	srv := fakeopenai.New(b)
	srv.HandleChat(func(fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		return fakeopenai.ChatReply{Content: "Here is answer one."}, nil
	})
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithModel("m"))
	require.NoError(b, err)
	req := voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "question number one"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cl.Complete(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
