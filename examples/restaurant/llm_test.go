package restaurant_test

// An LLM-played caller and an LLM criteria judge, replayed from the
// committed cache.
//
// No language model can run on the machine this suite was recorded on, so
// the committed answers (testdata/voicetest/cache/llm, provider "standin",
// model "scripted-restaurant-1") were produced by standinModel below: a
// SCRIPTED STAND-IN for an OpenAI-compatible chat model, written for this
// example, which answers the persona's and the judge's requests by rules,
// not by reasoning. It shows the real flow: the persona and the judge
// build their real prompts and tool schemas, the llm client sends them
// over HTTP, and the cache stores what came back. It does not show what a
// real model would say.
//
// Re-record the stand-in's answers:
//
//	go test ./examples/restaurant -run '^TestLLMPersonaAndJudge$' -voicetest.record -restaurant.standin
//
// Record against a real model instead (new cache entries under that
// provider and model; the goldens may need -update, reviewed):
//
//	OPENAI_API_KEY=… VOICETEST_LLM_MODEL=gpt-4o-mini go test ./examples/restaurant -run '^TestLLMPersonaAndJudge$' -voicetest.record
//
// or any OpenAI-compatible server with OPENAI_BASE_URL.

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

var useStandin = flag.Bool("restaurant.standin", false, "answer LLM requests with the scripted stand-in model (to re-record its committed answers)")

// Where the committed LLM answers come from.
const (
	standinProvider = "standin"
	standinModelID  = "scripted-restaurant-1"
)

// llmForTest returns the model of the LLM scenario: the stand-in's
// committed answers by default (served by the stand-in itself under
// -restaurant.standin), or a real model when VOICETEST_LLM_MODEL names
// one.
func llmForTest(t *testing.T) *llm.Client {
	t.Helper()
	if os.Getenv(llm.EnvModel) != "" {
		return llm.ForTest(t)
	}
	opts := []llm.Option{llm.WithProvider(standinProvider), llm.WithModel(standinModelID)}
	if *useStandin {
		srv := httptest.NewServer(http.HandlerFunc(standinModel))
		t.Cleanup(srv.Close)
		opts = append(opts, llm.WithBaseURL(srv.URL+"/v1/"), llm.WithAPIKey("standin-needs-no-key"))
	}
	return llm.ForTest(t, opts...)
}

// TestLLMPersonaAndJudge lets an LLM persona book a table with the
// in-process agent (text mode, virtual time), with no script: the caller
// talks until it hangs up or the agent does, and an LLM criteria judge
// gives the final verdict.
func TestLLMPersonaAndJudge(t *testing.T) {
	model := llmForTest(t)
	book := &restaurant.Book{}
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: restaurant.Agent(book),
		User: personas.LLM(personas.Patient,
			"Book a table for two on Friday at seven thirty in the evening, under the name Garcia.").With(model),
		Judge: judges.Criteria(
			"The agent reads the whole booking back and the caller confirms it before the agent books the table.",
			"The agent says goodbye before it ends the call.",
		).WithLLM(model),
		MaxTurns: 8,
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	if got := book.Reservations(); len(got) != 1 || got[0].Booking != (restaurant.Booking{Party: 2, Day: "friday", Time: "19:30", Name: "Garcia"}) {
		t.Errorf("reservations = %+v, want one for two on Friday at 19:30 under Garcia", got)
	}
	if len(res.Passed) < 2 {
		t.Errorf("criteria passed: %+v, want both", res.Passed)
	}
}

// standinModel is the scripted stand-in for an OpenAI-compatible chat
// completions endpoint (see the file comment). It answers two kinds of
// request, told apart by the tools they offer:
//
//   - the persona's (tools say, wait, hang_up): the agent's last words are
//     the last "user" message (the persona sees the roles reversed); it
//     answers the question they ask, from the goal's facts, and hangs up
//     after the agent's goodbye;
//   - the judge's (tool record_verdict): it checks each criterion it
//     knows by a rule on the transcript, and answers "inconclusive" for
//     any other.
func standinModel(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "the stand-in serves POST /v1/chat/completions only", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "not a chat completions request: "+err.Error(), http.StatusBadRequest)
		return
	}
	text := func(i int) string { // a message's content, string or parts
		var s string
		if json.Unmarshal(req.Messages[i].Content, &s) == nil {
			return s
		}
		var parts []struct{ Text string }
		json.Unmarshal(req.Messages[i].Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	tools := map[string]json.RawMessage{}
	for _, tl := range req.Tools {
		tools[tl.Function.Name] = tl.Function.Parameters
	}
	var name string
	var args any
	switch {
	case tools[judges.VerdictTool] != nil:
		name = judges.VerdictTool
		args = standinVerdict(text(len(req.Messages)-1), strings.Contains(string(tools[judges.VerdictTool]), `"continue"`))
	case tools["say"] != nil:
		last := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				last = strings.ToLower(text(i))
				break
			}
		}
		name, args = standinCaller(last)
	default:
		http.Error(w, "the stand-in knows only the persona's and the judge's requests", http.StatusBadRequest)
		return
	}
	a, _ := json.Marshal(args)
	resp := map[string]any{
		"id": "standin", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_standin", "type": "function",
				"function": map[string]any{"name": name, "arguments": string(a)},
			}}},
		}},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// standinCaller answers the agent's last words as the persona's goal
// says: two people, Friday at seven thirty, Garcia.
func standinCaller(agent string) (string, any) {
	switch {
	case strings.Contains(agent, "goodbye"):
		return "hang_up", map[string]string{"text": "Thank you, goodbye.", "reason": "the table is booked"}
	case strings.Contains(agent, "is that right"):
		return "say", map[string]string{"text": "Yes, that's right."}
	case strings.Contains(agent, "name"):
		return "say", map[string]string{"text": "It's Garcia."}
	case strings.Contains(agent, "day") || strings.Contains(agent, "time"):
		return "say", map[string]string{"text": "Friday at seven thirty, please."}
	case strings.Contains(agent, "how many"):
		return "say", map[string]string{"text": "Hello! A table for two, please."}
	}
	return "say", map[string]string{"text": "Sorry, could you say that again?"}
}

var criterionLine = regexp.MustCompile(`(?m)^(\d+)\. (.*)$`)

// standinVerdict judges the criteria it has rules for.
func standinVerdict(prompt string, mayContinue bool) map[string]any {
	transcript := prompt
	if i := strings.Index(prompt, "<transcript>"); i >= 0 {
		transcript = prompt[i:]
	}
	lower := strings.ToLower(transcript)
	var results []map[string]any
	allPass := true
	for _, m := range criterionLine.FindAllStringSubmatch(prompt[:len(prompt)-len(transcript)], -1) {
		var id int
		fmt.Sscan(m[1], &id)
		c := strings.ToLower(m[2])
		status, why := "inconclusive", "the stand-in has no rule for this criterion"
		switch {
		case strings.Contains(c, "reads the whole booking back"):
			readBack := strings.Index(lower, "is that right")
			booked := strings.Index(lower, "book_table")
			switch {
			case booked < 0:
				why = "no book_table call yet"
			case readBack >= 0 && readBack < booked && strings.Contains(lower[readBack:booked], "yes"):
				status, why = "pass", "the agent read the booking back, asked \"is that right\", and the caller said yes before book_table"
			default:
				status, why = "fail", "book_table was called without a confirmed read-back"
			}
		case strings.Contains(c, "says goodbye"):
			switch {
			case strings.Contains(lower, "goodbye") && strings.Contains(lower, "hang"):
				status, why = "pass", "the agent said goodbye, then the call ended"
			case strings.Contains(lower, "hang"):
				status, why = "fail", "the call ended without the agent's goodbye"
			default:
				why = "the call has not ended"
			}
		}
		allPass = allPass && status == "pass"
		results = append(results, map[string]any{"id": id, "status": status, "reasoning": why})
	}
	decision := "final"
	if mayContinue && !allPass {
		decision = "continue"
	}
	return map[string]any{"decision": decision, "criteria": results, "reasoning": "scripted stand-in verdict"}
}
