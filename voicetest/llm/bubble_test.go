package llm

import (
	"context"
	"fmt"
	"net/http"
	"testing"
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

// TestDefaultClientHasNoKeepAlive checks the transport used when the
// caller gives no HTTP client.
func TestDefaultClientHasNoKeepAlive(t *testing.T) {
	tr, ok := noKeepAliveClient().Transport.(*http.Transport)
	require.True(t, ok, "the default client's transport is an *http.Transport")
	assert.True(t, tr.DisableKeepAlives)
	assert.NotNil(t, tr.Proxy, "the proxy settings of http.DefaultTransport are kept")
}
