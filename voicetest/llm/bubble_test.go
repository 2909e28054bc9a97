package llm

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
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

// TestDefaultClientKeepsConnectionsAliveInsideABubble checks the client's
// default transport: its calls share one kept-alive connection outside a
// synctest bubble and inside one, where the virtual clock keeps running
// while that connection is idle between calls (an idle connection watched
// by a goroutine blocked on the network would stop it, and the test would
// hang). The connection left idle in the bubble is closed when the context
// of its last request (the bubble's t.Context) ends.
func TestDefaultClientKeepsConnectionsAliveInsideABubble(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		return fakeopenai.ChatReply{Content: "ok"}, nil
	})
	h := keepalive.NewClient()
	kt := h.Transport.(*keepalive.Transport)
	var dials atomic.Int32
	dial := kt.Dial
	kt.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithModel("m"),
		WithHTTPClient(h), WithMaxRetries(0))
	require.NoError(t, err)
	req := voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}}
	complete := func(ctx context.Context) {
		_, err := cl.Complete(ctx, req)
		require.NoError(t, err)
	}
	addrs := func() []string {
		var a []string
		for _, r := range srv.RequestsTo("/v1/chat/completions") {
			a = append(a, r.RemoteAddr)
		}
		return a
	}

	for range 4 {
		complete(t.Context())
	}
	out := addrs()
	require.Len(t, out, 4)
	for i, a := range out {
		assert.Equal(t, out[0], a, "call %d outside a bubble used a new connection (%v)", i, out)
	}
	assert.EqualValues(t, 1, dials.Load(), "outside a bubble")

	watchdog := time.AfterFunc(time.Minute, func() {
		panic("TestDefaultClientKeepsConnectionsAliveInsideABubble: the bubble did not finish in a minute: its clock stopped while a connection was idle")
	})
	defer watchdog.Stop()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		for range 4 {
			complete(t.Context())
			time.Sleep(time.Hour) // the connection is idle in the pool meanwhile
		}
		assert.Equal(t, 4*time.Hour, time.Since(start), "virtual time")
		assert.Equal(t, 1, kt.IdleConns(), "the connection stays idle in the bubble")
	})
	in := addrs()[4:]
	require.Len(t, in, 4)
	for i, a := range in {
		assert.Equal(t, in[0], a, "call %d inside the bubble used a new connection (%v)", i, in)
	}
	// The connection dialled outside is safe to use inside: a TCP
	// connection belongs to no bubble.
	assert.Equal(t, out[0], in[0], "the call inside the bubble did not reuse the idle connection")
	assert.EqualValues(t, 1, dials.Load(), "after the calls inside the bubble")
	assert.Zero(t, kt.IdleConns(), "the connection left idle in the bubble outlived the bubble's context")

	// Dialled inside a bubble, used outside it. A request whose context
	// cannot end leaves no idle connection in a bubble (nothing would
	// close it); one whose context outlives the bubble leaves it idle.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Done makes the context's channel lazily: made inside the bubble, it
	// would belong to it, and cancel would be fatal outside.
	_ = ctx.Done()
	synctest.Test(t, func(t *testing.T) {
		complete(context.Background())
		complete(ctx)
	})
	complete(t.Context())
	complete(t.Context())
	all := addrs()
	require.Len(t, all, 12)
	assert.EqualValues(t, 3, dials.Load(), "one dial for the call without a cancellable context, one for the rest")
	assert.NotEqual(t, all[8], all[9])
	assert.Equal(t, all[9], all[10], "the call after the bubble did not reuse the connection dialled in it")
	assert.Equal(t, all[10], all[11])
	h.CloseIdleConnections()
}
