package judges_test

import (
	"context"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// exampleVoice is a stand-in TTS for the examples: it "speaks" with
// fixtures.WordTones. Real tests use an engine from the speech package.
type exampleVoice struct{}

func (exampleVoice) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return fixtures.WordTones(req.Text, req.Rate), nil
}

// exampleConversation holds a short booking call with a fixtures fake on
// the real clock (tests use voicetest.Scenario, which runs it on virtual
// time) and returns its final State.
func exampleConversation() (*voicetest.State, error) {
	agent := fixtures.Fake(fixtures.FakeConfig{
		Burst:    true, // send each reply at once: the real clock need not wait
		Greeting: fixtures.Reply{Text: "Hello, Luigi's, how can I help?"},
		Replies: []fixtures.Reply{{
			Text: "Booked: a table for two at seven. Goodbye!", Latency: 10 * time.Millisecond, HangUp: true,
			Tools: []voicetest.ToolCall{{ID: "c1", Name: "book", Arguments: []byte(`{"party":2,"time":"19:00"}`), Result: []byte(`{"ok":true}`)}},
		}},
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:     agent,
		UserVoice: exampleVoice{},
		Pacing:    voicetest.PaceFast,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		return nil, err
	}
	return res.State, nil
}

// Deterministic judges need no LLM. All combines them; its verdict has one
// line per criterion, with the evidence.
func ExampleAll() {
	st, err := exampleConversation()
	if err != nil {
		log.Fatal(err)
	}
	judge := judges.All(
		judges.Says("table for two"),
		judges.NeverSays("sorry"),
		judges.ToolCalled("book", map[string]any{"party": 2}),
		judges.Any(judges.Says("goodbye"), judges.Says("see you")).Named("the agent says goodbye"),
		judges.Turns(1, 3),
	)
	v, err := judge.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range v.Criteria {
		fmt.Printf("%-4s %s\n     %s\n", c.Status, c.Criterion, c.Reasoning)
	}
	fmt.Println("verdict:", v.Status())
	// Output:
	// pass the agent says "table for two"
	//      turn 1: the agent said "Booked: a table for two at seven. Goodbye!"
	// pass the agent never says "sorry"
	//      no agent message contains "sorry" (2 agent messages checked)
	// pass the agent calls tool "book" with {"party":2}
	//      turn 1: the agent called book {"party":2,"time":"19:00"}
	// pass the agent says goodbye
	//      [pass] the agent says "goodbye": turn 1: the agent said "Booked: a table for two at seven. Goodbye!"; [fail] the agent says "see you": no agent message contains "see you" (2 agent messages); last: turn 1 "Booked: a table for two at seven. Goodbye!"
	// pass the conversation takes 1 to 3 user turns
	//      1 user turn
	// verdict: pass
}

// exampleCriteria are the criteria ExampleCriteria judges.
var exampleCriteria = []string{
	"The agent confirms the party size and the time",
	"The agent tells the caller the price",
}

// TestExampleCacheEntry keeps the cache entry that ExampleCriteria
// replays: it asks the example's question through
// testdata/voicetest/cache, recording the answer from the fakeopenai test
// double when the entry is missing (after a change to the prompt). The
// committed verdict is therefore the double's scripted answer, not a real
// model's, and is recorded under the double's own provider and model
// (fakeopenai.Provider, fakeopenai.Model).
func TestExampleCacheEntry(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(call(`{"decision":"final","criteria":[` +
		`{"id":1,"status":"pass","reasoning":"Turn 1: 'a table for two at seven'."},` +
		`{"id":2,"status":"inconclusive","reasoning":"No price is mentioned, and nothing shows the caller asked."}],` +
		`"reasoning":"The booking is confirmed; the price is never discussed."}`))
	c, err := cache.Open("testdata/voicetest/cache", cache.WithMode(cache.Record))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := llm.New(llm.WithCache(c), llm.WithProvider(fakeopenai.Provider), llm.WithModel(fakeopenai.Model),
		llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()), llm.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	st, err := exampleConversation()
	if err != nil {
		t.Fatal(err)
	}
	v := final(t, judges.Criteria(exampleCriteria...).WithLLM(cl), st)
	if v.Status() != voicetest.StatusInconclusive || len(v.Criteria) != 2 {
		t.Fatalf("got %+v, want the recorded inconclusive verdict on 2 criteria", v)
	}
}

// An LLM criteria judge replays its verdicts from the test package's
// cache: no key, no server, the same answer every run. In a test the
// whole judge is one line: judges.ForTest(t, criteria...). Here the
// cache is opened by hand because an Example has no *testing.T. The
// committed verdict was scripted by voicetest's test double of an
// OpenAI-compatible server (provider "fakeopenai", model
// "fakeopenai-double"), not given by a model: it shows the judge's flow
// and the cache. With a real model the entry is recorded under that
// model's name (see the README, "Which committed answers are a test
// double's").
func ExampleCriteria() {
	c, err := cache.Open("testdata/voicetest/cache", cache.WithMode(cache.Replay))
	if err != nil {
		log.Fatal(err)
	}
	cl, err := llm.New(llm.WithCache(c), llm.WithProvider("fakeopenai"), llm.WithModel("fakeopenai-double"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := exampleConversation()
	if err != nil {
		log.Fatal(err)
	}
	judge := judges.Criteria(exampleCriteria...).WithLLM(cl)
	v, err := judge.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range v.Criteria {
		fmt.Printf("%s: %s\n  %s\n", c.Status, c.Criterion, c.Reasoning)
	}
	fmt.Println("verdict:", v.Status())
	// Output:
	// pass: The agent confirms the party size and the time
	//   Turn 1: 'a table for two at seven'.
	// inconclusive: The agent tells the caller the price
	//   No price is mentioned, and nothing shows the caller asked.
	// verdict: inconclusive
}

// A rule's Check method is a Check step: here the agent's reply breaks
// the rule and the scenario fails with the evidence.
func ExampleRule_Check() {
	agent := fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{
		{Text: "Sorry, we are fully booked tonight.", Latency: 10 * time.Millisecond},
	}})
	res, _ := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, UserVoice: exampleVoice{}, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{
			voicetest.UserSays("A table for two tonight?"),
			voicetest.AgentTurn(),
			voicetest.Check(judges.NeverSays("fully booked").Check),
		},
	})
	fmt.Println("success:", res.Success)
	fmt.Println(res.Err)
	// Output:
	// success: false
	// step 3 Check(): judges: criterion not passed: criterion "the agent never says \"fully booked\"": fail: turn 1: the agent said "Sorry, we are fully booked tonight."
}
