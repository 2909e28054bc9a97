package judges_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// benchState holds an n-turn conversation with a tool call every turn, on
// the real clock with burst replies (fast), for benchmarks.
func benchState(b *testing.B, n int) *voicetest.State {
	b.Helper()
	var replies []fixtures.Reply
	var steps []voicetest.Step
	for i := 1; i <= n; i++ {
		replies = append(replies, fixtures.Reply{Text: fmt.Sprintf("Sure, table %d is free for two at seven; shall I book it?", i), Latency: time.Millisecond,
			Tools: []voicetest.ToolCall{{ID: fmt.Sprint("c", i), Name: "check", Arguments: []byte(`{"party":2,"time":"19:00"}`), Result: []byte(`{"free":true}`)}}})
		steps = append(steps, voicetest.UserSays(fmt.Sprintf("Is there a table number %d for two at seven?", i)), voicetest.AgentTurn())
	}
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: replies}), UserVoice: toneTTS{},
		Pacing: voicetest.PaceFast, Script: steps, MaxTurns: n,
	})
	if err != nil {
		b.Fatal(err)
	}
	return res.State
}

// BenchmarkRules evaluates eight deterministic rules (one All) on a
// 50-turn conversation.
func BenchmarkRules(b *testing.B) {
	st := benchState(b, 50)
	j := judges.All(
		judges.Says("table 50 is free"),
		judges.NeverSays("sorry"),
		judges.SaysRegexp(`(?i)shall i book`),
		judges.ToolCalled("check", map[string]any{"party": 2}),
		judges.Turns(1, 60),
		judges.LatencyP95Under(time.Second),
		judges.EachTurnUnder(time.Second),
		judges.Any(judges.HungUp(), judges.Says("goodbye")),
	)
	req := voicetest.JudgeRequest{State: st, Final: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Evaluate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCriteriaJudgeCacheHit is a final verdict on a 50-turn
// conversation answered from the on-disk cache: prompt rendering, the
// cache key, the lookup and the validation of the answer.
func BenchmarkCriteriaJudgeCacheHit(b *testing.B) {
	st := benchState(b, 50)
	srv := fakeopenai.Start()
	defer srv.Close()
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: judges.VerdictTool,
		Arguments: `{"decision":"final","criteria":[{"id":1,"status":"pass","reasoning":"ok"},{"id":2,"status":"inconclusive","reasoning":"?"}],"reasoning":"ok"}`}}})
	c, err := cache.Open(b.TempDir(), cache.WithMode(cache.Record))
	if err != nil {
		b.Fatal(err)
	}
	cl, err := llm.New(llm.WithCache(c), llm.WithModel("gpt-4o-mini"), llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()), llm.WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	j := judges.Criteria("The agent offers a table", "The agent states the price").WithLLM(cl)
	req := voicetest.JudgeRequest{State: st, Final: true}
	if _, err := j.Evaluate(b.Context(), req); err != nil { // record
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Evaluate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(srv.RequestsTo("/v1/chat/completions")); n != 1 {
		b.Fatalf("%d requests reached the server, want 1 (the rest from the cache)", n)
	}
}
