package llm

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// Issue 14, item 5: the cache never keeps a bad answer, and a replay miss
// names the inputs the environment chose.

// entries lists the entry files (<digest>.json, not bodies) under dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	out, err := filepath.Glob(filepath.Join(dir, "llm", strings.Repeat("[0-9a-f]", 64)+".json"))
	require.NoError(t, err)
	return out
}

func ask(text string) voicetest.ChatRequest {
	return voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: text}}}
}

func TestMissNamesTheModelTheEnvironmentChose(t *testing.T) {
	for _, tc := range []struct{ env, model string }{
		{"llama3", "llama3"},
		{"", DefaultModel}, // unset: the default, which the command pins
	} {
		t.Run(tc.model, func(t *testing.T) {
			c, err := cache.Open(t.TempDir(), cache.WithMode(cache.Replay), cache.WithName(t.Name()))
			require.NoError(t, err)
			cl, err := New(WithCache(c), WithBaseURL("http://127.0.0.1:1/v1/"), withGetenv(func(k string) string {
				if k == EnvModel {
					return tc.env
				}
				return ""
			}))
			require.NoError(t, err)
			_, err = cl.Complete(t.Context(), ask("hello"))
			var miss *cache.MissError
			require.ErrorAs(t, err, &miss)
			assert.Contains(t, err.Error(), "inputs: kind llm, provider openai, model "+tc.model+" (from VOICETEST_LLM_MODEL), field request")
			assert.Contains(t, err.Error(), "record it with: VOICETEST_LLM_MODEL="+tc.model+" go test ./voicetest/llm -run '^TestMissNamesTheModelTheEnvironmentChose$/^"+tc.model+"$' -voicetest.record")
		})
	}
	// A model given in code is not the environment's.
	c, err := cache.Open(t.TempDir(), cache.WithMode(cache.Replay), cache.WithName(t.Name()))
	require.NoError(t, err)
	cl, err := New(WithCache(c), WithModel("m1"), WithBaseURL("http://127.0.0.1:1/v1/"), withGetenv(noEnv))
	require.NoError(t, err)
	_, err = cl.Complete(t.Context(), ask("hello"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "VOICETEST_LLM_MODEL")
}

// checkJSON accepts an answer whose content is a JSON object with "ok".
func checkJSON(resp voicetest.ChatResponse) error {
	var v struct{ OK *bool }
	if err := json.Unmarshal([]byte(resp.Message.Content), &v); err != nil || v.OK == nil {
		return errors.New(`the answer is not {"ok": bool}`)
	}
	return nil
}

func TestCheckedAnswerIsRetriedAndOnlyTheGoodOneKept(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{Content: "Sure! It is fine."}, fakeopenai.ChatReply{Content: `{"ok": true}`})
	dir := t.TempDir()
	rec, err := cache.Open(dir, cache.WithMode(cache.Record))
	require.NoError(t, err)
	cl, err := New(WithCache(rec), WithModel("gpt-4o-mini"), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithMaxRetries(0), withGetenv(noEnv))
	require.NoError(t, err)
	req := ask("Is it fine? Answer as JSON.")
	req.Check = checkJSON
	resp, err := cl.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, `{"ok": true}`, resp.Message.Content)
	// The retry told the model what was wrong, after its answer.
	reqs := srv.RequestsTo("/v1/chat/completions")
	require.Len(t, reqs, 2)
	var second struct{ Messages []map[string]any }
	require.NoError(t, json.Unmarshal(reqs[1].Body, &second))
	require.Len(t, second.Messages, 3)
	assert.Equal(t, "Sure! It is fine.", second.Messages[1]["content"])
	assert.Contains(t, second.Messages[2]["content"], `Your answer could not be used: the answer is not {"ok": bool}`)

	// One entry, the good answer, under the question as it was asked: a
	// replay gets it without the retry.
	assert.Len(t, entries(t, dir), 1)
	rep, err := cache.Open(dir, cache.WithMode(cache.Replay))
	require.NoError(t, err)
	cl, err = New(WithCache(rep), WithModel("gpt-4o-mini"), WithBaseURL("http://127.0.0.1:1/v1/"), withGetenv(noEnv))
	require.NoError(t, err)
	resp, err = cl.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, `{"ok": true}`, resp.Message.Content)
}

func TestCheckedAnswerBadTwiceIsNotStored(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{Content: "yes"}, fakeopenai.ChatReply{Content: "YES"})
	dir := t.TempDir()
	rec, err := cache.Open(dir, cache.WithMode(cache.Record), cache.WithName(t.Name()))
	require.NoError(t, err)
	cl, err := New(WithCache(rec), WithModel("gpt-4o-mini"), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithMaxRetries(0), withGetenv(noEnv))
	require.NoError(t, err)
	req := ask("Is it fine? Answer as JSON.")
	req.Check = checkJSON
	_, err = cl.Complete(t.Context(), req)
	require.ErrorIs(t, err, voicetest.ErrAnswerRejected)
	var ie *cache.InvalidError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), `the answer is not {"ok": bool}; after one retry: the answer is not {"ok": bool}`)
	assert.Contains(t, err.Error(), "it was not stored")
	assert.Contains(t, err.Error(), "ask again with: go test ./voicetest/llm -run '^TestCheckedAnswerBadTwiceIsNotStored$' -voicetest.record")
	assert.Empty(t, entries(t, dir))
}
