package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// verdictRequest asks for a verdict through a forced tool call, as a judge
// does.
func verdictRequest() voicetest.ChatRequest {
	temp := 0.0
	return voicetest.ChatRequest{
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: "You judge voice agent transcripts against criteria."},
			{Role: voicetest.ChatUser, Content: "Criterion: the agent confirms the party size.\nAgent: A table for two at seven, is that right?"},
		},
		Tools: []voicetest.ToolSpec{{
			Name:       "submit_verdict",
			Parameters: json.RawMessage(`{"type":"object","properties":{"verdict":{"enum":["pass","fail","inconclusive"]},"reason":{"type":"string"}},"required":["verdict","reason"]}`),
		}},
		ToolChoice:  "submit_verdict",
		Temperature: &temp,
	}
}

// TestExampleEntry keeps the cache entry that Example replays: it answers
// the example's request from testdata/voicetest/cache, recording it from
// the fakeopenai test double when it is missing (outside CI). The entry
// is recorded under the double's provider and model (fakeopenai.Provider,
// fakeopenai.Model), which its body also names as the producer: it is the
// double's scripted answer, not a model's.
func TestExampleEntry(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "submit_verdict",
		Arguments: `{"verdict":"pass","reason":"The agent asks to confirm a table for two."}`}}})
	cl := llm.ForTest(t, llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()), llm.WithProvider(fakeopenai.Provider), llm.WithModel(fakeopenai.Model))
	resp, err := cl.Complete(t.Context(), verdictRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "submit_verdict" {
		t.Fatalf("got %+v, want one submit_verdict call", resp.Message)
	}
	if resp.Model != fakeopenai.Model {
		t.Fatalf("answer produced by %q, want the double %q", resp.Model, fakeopenai.Model)
	}
}

// A Client replays a committed cache with no key and no server: here the
// answer to a judge-style request with a forced tool call. The committed
// answer was scripted by voicetest's test double of an OpenAI-compatible
// server, which is why the Client names its provider and model
// ("fakeopenai", "fakeopenai-double"): a real model's answers are cached
// under its own name (WithModel, or VOICETEST_LLM_MODEL), and the answer
// keeps the model the endpoint reported (ChatResponse.Model).
func Example() {
	c, err := cache.Open("testdata/voicetest/cache", cache.WithMode(cache.Replay))
	if err != nil {
		log.Fatal(err)
	}
	cl, err := llm.New(llm.WithCache(c), llm.WithProvider("fakeopenai"), llm.WithModel("fakeopenai-double"))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := cl.Complete(context.Background(), verdictRequest())
	if err != nil {
		log.Fatal(err)
	}
	call := resp.Message.ToolCalls[0]
	var v struct{ Verdict, Reason string }
	if err := json.Unmarshal(call.Arguments, &v); err != nil {
		log.Fatal(err)
	}
	fmt.Println("answered by", resp.Model)
	fmt.Println(resp.FinishReason, call.Name, v.Verdict)
	fmt.Println(v.Reason)
	// Output:
	// answered by fakeopenai-double
	// tool_calls submit_verdict pass
	// The agent asks to confirm a table for two.
}
