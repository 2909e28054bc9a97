package personas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// newClient returns an llm.Client on srv (nil: no server, for replay)
// with a cache in dir in mode m.
func newClient(t *testing.T, srv *fakeopenai.Server, dir string, m cache.Mode) *llm.Client {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(m), cache.WithName(t.Name()))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	opts := []llm.Option{llm.WithCache(c), llm.WithModel("gpt-4o-mini"), llm.WithMaxRetries(0)}
	if srv != nil {
		opts = append(opts, llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()))
	} else {
		// Replay needs no endpoint; point at a closed port so that a
		// call that escapes the cache fails loudly.
		opts = append(opts, llm.WithBaseURL("http://127.0.0.1:1/v1/"), llm.WithAPIKey("unused"))
	}
	cl, err := llm.New(opts...)
	require.NoError(t, err)
	return cl
}

// textAgent is a fixtures fake that takes and sends text, at once.
func textAgent(greeting string, replies ...fixtures.Reply) *fixtures.FakeAgent {
	return fixtures.Fake(fixtures.FakeConfig{TextOnly: true, Burst: true, Greeting: fixtures.Reply{Text: greeting}, Replies: replies})
}

// run holds a conversation on the real clock, fast.
func run(t *testing.T, agent voicetest.Agent, user voicetest.User, steps ...voicetest.Step) *voicetest.Result {
	t.Helper()
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Name: t.Name(), Agent: agent, User: user, Script: steps, Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{Greeting: time.Second, FirstChunk: 5 * time.Second, Engine: 20 * time.Second},
	})
	require.NotNil(t, res, "invalid config: %v", err)
	return res
}

// lines returns the transcript as "role: text" lines in order of turn,
// the user first in each (on the real clock with fast pacing the agent's
// times are playback times, so time order mixes turns).
func lines(res *voicetest.Result) []string {
	tr := slices.Clone(res.Transcript)
	slices.SortStableFunc(tr, func(a, b voicetest.Message) int {
		if a.Turn != b.Turn {
			return a.Turn - b.Turn
		}
		if a.Role != b.Role {
			if a.Role == voicetest.RoleUser {
				return -1
			}
			return 1
		}
		return 0
	})
	var out []string
	for _, m := range tr {
		out = append(out, fmt.Sprintf("%s: %s", m.Role, m.Text))
	}
	return out
}

// call is a tool call reply of the fake server.
func call(name string, args any) fakeopenai.ChatReply {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: name, Arguments: string(b)}}}
}

func say(text string) fakeopenai.ChatReply { return call("say", map[string]any{"text": text}) }

// toolNames lists the names of req's tools.
func toolNames(req fakeopenai.ChatRequest) []string {
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// chats returns the chat requests srv received, parsed.
func chats(t *testing.T, srv *fakeopenai.Server) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range srv.RequestsTo("/v1/chat/completions") {
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &m))
		out = append(out, m)
	}
	return out
}

// roles returns "role: content" for each message of a parsed request,
// content cut to n characters.
func roles(req map[string]any, n int) []string {
	var out []string
	for _, m := range req["messages"].([]any) {
		mm := m.(map[string]any)
		c, _ := mm["content"].(string)
		if len(c) > n {
			c = c[:n]
		}
		out = append(out, fmt.Sprintf("%s: %s", mm["role"], strings.ReplaceAll(c, "\n", " | ")))
	}
	return out
}

// stub is an in-memory voicetest.LLM for paths a real server cannot
// produce (plain text answers under tool_choice "required").
type stub struct {
	answers []voicetest.ChatMessage
	reqs    []voicetest.ChatRequest
}

func (s *stub) Complete(_ context.Context, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	s.reqs = append(s.reqs, req)
	if len(s.answers) == 0 {
		return voicetest.ChatResponse{}, fmt.Errorf("stub: no answer left")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return voicetest.ChatResponse{Message: a}, nil
}
