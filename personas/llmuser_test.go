package personas_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// bookingAgent is a text fake restaurant agent that checks availability
// with a tool and sends the booking as data.
func bookingAgent() *fixtures.FakeAgent {
	return textAgent("Luigi's, how can I help?",
		fixtures.Reply{Text: "Let me check. For two people?", Tools: []voicetest.ToolCall{{
			ID: "c1", Name: "check_availability", Arguments: json.RawMessage(`{"party": 2}`), Result: json.RawMessage(`{"available": true}`)}}},
		fixtures.Reply{Text: "Booked for two at seven.", Data: json.RawMessage(`{"booking":"B-42"}`), DataName: "booking"},
	)
}

func bookingRun(t *testing.T, user voicetest.User) *voicetest.Result {
	t.Helper()
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Name: "booking", Description: "Luigi's restaurant booking line.",
		Agent: bookingAgent(), User: user, Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{Greeting: time.Second, FirstChunk: 5 * time.Second, Engine: 20 * time.Second},
	})
	require.NotNil(t, res, "invalid config: %v", err)
	return res
}

// answerBooking answers the LLM caller by how many lines it has said.
func answerBooking(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
	said := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			said++
		}
	}
	switch said {
	case 0:
		return say("A table for two tonight."), nil
	case 1:
		return say("Yes, two, at seven."), nil
	}
	return call("hang_up", map[string]any{"text": "Great, thanks, bye.", "reason": "booked"}), nil
}

func TestLLMRoleReversal(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	user := personas.LLM(personas.Rushed, "Book a table for two tonight at seven.").With(newClient(t, srv, t.TempDir(), cache.Off))
	res := bookingRun(t, user)
	require.NoError(t, res.Err)
	assert.Equal(t, []string{
		"agent: Luigi's, how can I help?",
		"user: A table for two tonight.",
		"agent: Let me check. For two people?",
		"user: Yes, two, at seven.",
		"agent: Booked for two at seven.",
		"user: Great, thanks, bye.",
	}, lines(res))
	assert.Equal(t, "the user hung up", res.Ended)

	reqs := chats(t, srv)
	require.Len(t, reqs, 3)
	last := reqs[2]
	assert.Equal(t, []string{
		"system: You are role-playing a person who has phoned a voice assistant. You are the CALLER, not the assistant: never offer help, never answer as the agent, never describe what the agent should do. The other side of this conversation is the agent; i",
		"user: Luigi's, how can I help?",
		"assistant: A table for two tonight.",
		`user: [the agent called tool check_availability with {"party":2}] | [tool check_availability returned result: {"available":true}] | Let me check. For two people?`,
		"assistant: Yes, two, at seven.",
		`user: [the agent sent booking: {"booking":"B-42"}] | Booked for two at seven.`,
	}, roles(last, 240))
	system := last["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Contains(t, system, personas.Rushed.Description)
	assert.Contains(t, system, personas.Rushed.Style)
	assert.Contains(t, system, "What you want from this call: Book a table for two tonight at seven.")
	assert.Contains(t, system, "Situation: Luigi's restaurant booking line.")
	assert.Contains(t, system, "(1 to 15)")

	assert.Equal(t, "required", last["tool_choice"])
	assert.Equal(t, 0.0, last["temperature"])
	assert.Equal(t, 1.0, last["seed"])
	var tools []string
	for _, tl := range last["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"say", "wait", "hang_up"}, tools)

	// The first request: the agent's greeting is the first user message.
	assert.Equal(t, []string{"system: You are", "user: Luigi's"}, roles(reqs[0], 7))
}

func TestLLMOpensWhenTheAgentIsSilent(t *testing.T) {
	s := &stub{answers: []voicetest.ChatMessage{{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{Name: "say", Arguments: json.RawMessage(`{"text":"Hello? Is this Luigi's?"}`)}}}}}
	u, err := personas.LLM(personas.Patient, "Book a table.").With(s).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Hello? Is this Luigi's?", u.Text)
	require.Len(t, s.reqs, 1)
	msgs := s.reqs[0].Messages
	require.Len(t, msgs, 2)
	assert.Equal(t, voicetest.ChatUser, msgs[1].Role)
	assert.Contains(t, msgs[1].Content, "has not said anything yet")
}

func TestLLMRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	rec := bookingRun(t, personas.LLM(personas.Confused, "Book a table for two.").With(newClient(t, srv, dir, cache.Record)))
	require.NoError(t, rec.Err)
	n := len(srv.RequestsTo("/v1/chat/completions"))
	require.Equal(t, 3, n)
	srv.Close()

	rep := bookingRun(t, personas.LLM(personas.Confused, "Book a table for two.").With(newClient(t, nil, dir, cache.Replay)))
	require.NoError(t, rep.Err)
	assert.Equal(t, lines(rec), lines(rep))

	// A different persona misses the cache, and says how to record.
	miss := bookingRun(t, personas.LLM(personas.Patient, "Book a table for two.").With(newClient(t, nil, dir, cache.Replay)))
	require.Error(t, miss.Err)
	var me *cache.MissError
	assert.True(t, errors.As(miss.Err, &me), "%v", miss.Err)
	assert.Contains(t, miss.Err.Error(), "personas.LLM(patient)")
}

func TestLLMBoundedWait(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		call("wait", map[string]any{"seconds": 120, "reason": "checking the calendar"}),
		call("wait", map[string]any{"seconds": 0.2, "reason": "still checking"}),
		say("Hello? Are you still there?"),
		call("wait", map[string]any{"seconds": 4, "reason": "checking again"}),
	)
	user := personas.LLM(personas.Patient, "Book a table.").With(newClient(t, srv, t.TempDir(), cache.Off)).MaxWait(10 * time.Second).MaxWaits(2)
	st := &voicetest.State{}

	u, err := user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, voicetest.Utterance{Wait: 10 * time.Second, WaitReason: "checking the calendar"}, u, "120 s is cut to MaxWait")
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, voicetest.Utterance{Wait: time.Second, WaitReason: "still checking"}, u, "waits last at least a second")
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, "Hello? Are you still there?", u.Text)
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, 4*time.Second, u.Wait, "speaking resets the count of waits")

	var reqs []fakeopenai.ChatRequest
	for _, r := range srv.RequestsTo("/v1/chat/completions") {
		var body struct {
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
			Messages []struct{ Content string } `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		var req fakeopenai.ChatRequest
		for _, tl := range body.Tools {
			req.Tools = append(req.Tools, fakeopenai.Tool{Name: tl.Function.Name})
		}
		req.Messages = append(req.Messages, fakeopenai.ChatMessage{Content: body.Messages[0].Content})
		reqs = append(reqs, req)
	}
	require.Len(t, reqs, 4)
	assert.Equal(t, []string{"say", "wait", "hang_up"}, toolNames(reqs[0]))
	assert.Equal(t, []string{"say", "wait", "hang_up"}, toolNames(reqs[1]))
	assert.Equal(t, []string{"say", "hang_up"}, toolNames(reqs[2]), "after MaxWaits waits the wait tool is withdrawn")
	assert.Contains(t, reqs[2].Messages[0].Content, "do not wait any more")
	assert.Equal(t, []string{"say", "wait", "hang_up"}, toolNames(reqs[3]))
	assert.Contains(t, reqs[0].Messages[0].Content, "(1 to 10)")
}

func TestLLMWaitRefusedAfterMaxWaits(t *testing.T) {
	waitCall := voicetest.ChatMessage{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{Name: "wait", Arguments: json.RawMessage(`{"seconds":5,"reason":"x"}`)}}}
	s := &stub{answers: []voicetest.ChatMessage{waitCall, waitCall,
		{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{Name: "hang_up", Arguments: json.RawMessage(`{"text":"Forget it.","reason":"too slow"}`)}}}}}
	user := personas.LLM(personas.Rushed, "Book a table.").With(s).MaxWaits(1)
	st := &voicetest.State{}
	u, err := user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, u.Wait)
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, voicetest.Utterance{Text: "Forget it.", HangUp: true, Speed: personas.Rushed.Speed}, u)
	require.Len(t, s.reqs, 3)
	note := s.reqs[2].Messages[len(s.reqs[2].Messages)-1]
	assert.Equal(t, voicetest.ChatSystem, note.Role)
	assert.Contains(t, note.Content, "wait again after 1 waits in a row")
}

func TestLLMEmptyAnswerRetriesOnce(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(say("  "), say("Two people, seven o'clock."))
	user := personas.LLM(personas.Rushed, "Book a table.").With(newClient(t, srv, t.TempDir(), cache.Off))
	u, err := user.NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Two people, seven o'clock.", u.Text)
	reqs := chats(t, srv)
	require.Len(t, reqs, 2)
	msgs := reqs[1]["messages"].([]any)
	note := msgs[len(msgs)-1].(map[string]any)
	assert.Equal(t, "system", note["role"])
	assert.Contains(t, note["content"], "the answer was empty")
	assert.Len(t, msgs, len(reqs[0]["messages"].([]any))+1, "the retry is the first request plus the reminder")
}

func TestLLMEmptyAnswerTwiceFails(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(say(""), say(""))
	user := personas.LLM(personas.Rushed, "Book a table.").With(newClient(t, srv, t.TempDir(), cache.Off))
	_, err := user.NextUtterance(t.Context(), &voicetest.State{})
	require.Error(t, err)
	assert.ErrorIs(t, err, personas.ErrEmptyAnswer)
	assert.Contains(t, err.Error(), "personas.LLM(rushed): turn 1")
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)
}

func TestLLMEmptyAnswerDuringRunFailsTheRunClearly(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) { return say(""), nil })
	res := bookingRun(t, personas.LLM(personas.Rushed, "Book.").With(newClient(t, srv, t.TempDir(), cache.Off)))
	require.Error(t, res.Err)
	assert.ErrorIs(t, res.Err, personas.ErrEmptyAnswer)
}

func TestLLMPlainTextAnswerIsSaid(t *testing.T) {
	s := &stub{answers: []voicetest.ChatMessage{{Role: voicetest.ChatAssistant, Content: `Caller: "*sighs* Two people, please."`}}}
	u, err := personas.LLM(personas.Rushed, "Book.").With(s).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Two people, please.", u.Text)
}

func TestLLMUnusableAnswers(t *testing.T) {
	for name, bad := range map[string]voicetest.ChatMessage{
		"unknown tool":   {ToolCalls: []voicetest.ToolCall{{Name: "book", Arguments: json.RawMessage(`{}`)}}},
		"bad arguments":  {ToolCalls: []voicetest.ToolCall{{Name: "say", Arguments: json.RawMessage(`[1]`)}}},
		"wait no number": {ToolCalls: []voicetest.ToolCall{{Name: "wait", Arguments: json.RawMessage(`{"reason":"x"}`)}}},
	} {
		t.Run(name, func(t *testing.T) {
			s := &stub{answers: []voicetest.ChatMessage{bad, bad}}
			_, err := personas.LLM(personas.Rushed, "Book.").With(s).NextUtterance(t.Context(), &voicetest.State{})
			assert.ErrorIs(t, err, personas.ErrEmptyAnswer)
			assert.Len(t, s.reqs, 2)
		})
	}
}

func TestLLMVoiceAndEffects(t *testing.T) {
	hang := voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{Name: "say", Arguments: json.RawMessage(`{"text":"Hi."}`)}}}
	u, err := personas.LLM(personas.NoisyStreet, "Book.").With(&stub{answers: []voicetest.ChatMessage{hang}}).Engine("openai").NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "echo", u.Voice)
	assert.NotNil(t, u.Effects)
	u, err = personas.LLM(personas.NoisyStreet, "Book.").With(&stub{answers: []voicetest.ChatMessage{hang}}).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Empty(t, u.Voice)
}

func TestLLMInvalid(t *testing.T) {
	_, err := personas.LLM(personas.Rushed, " ").With(&stub{}).NextUtterance(t.Context(), &voicetest.State{})
	assert.ErrorContains(t, err, "the goal is empty")
	p := personas.Rushed
	p.Interrupt.Probability = -1
	_, err = personas.LLM(p, "Book.").With(&stub{}).NextUtterance(t.Context(), &voicetest.State{})
	assert.ErrorContains(t, err, "Probability -1")
}

func TestLLMModelErrorIsWrapped(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{Error: &fakeopenai.APIError{Status: 400, Message: "bad things", Type: "invalid_request_error"}})
	_, err := personas.LLM(personas.Rushed, "Book.").With(newClient(t, srv, t.TempDir(), cache.Off)).NextUtterance(t.Context(), &voicetest.State{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "personas.LLM(rushed): asking the model for turn 1")
	assert.Contains(t, err.Error(), "bad things")
}

// TestLLMDefaultClientFromEnvironment builds a persona without With, as a
// table of test cases does: the client comes from the environment and
// records into the package's cache directory under go test.
func TestLLMDefaultClientFromEnvironment(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_API_KEY", srv.APIKey())
	t.Setenv("VOICETEST_LLM_MODEL", "gpt-4o-mini")
	t.Setenv("VOICETEST_CACHE", "record")
	t.Chdir(t.TempDir())
	user := personas.LLM(personas.Rushed, "Book a table for two.")
	res := bookingRun(t, user)
	require.NoError(t, res.Err)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 3)
	entries, err := os.ReadDir(filepath.Join("testdata", "voicetest", "cache"))
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "the answers were recorded under testdata/voicetest/cache")

	// The same value serves another run from the cache.
	srv.Close()
	t.Setenv("VOICETEST_CACHE", "replay")
	again := bookingRun(t, user)
	require.NoError(t, again.Err)
	assert.Equal(t, lines(res), lines(again))
}

func TestLLMDefaultClientBadCacheMode(t *testing.T) {
	t.Setenv("VOICETEST_CACHE", "sometimes")
	_, err := personas.LLM(personas.Rushed, "Book.").NextUtterance(t.Context(), &voicetest.State{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "With(llm.ForTest(t))")
	assert.True(t, strings.Contains(err.Error(), "sometimes"), "%v", err)
}

func TestLLMServesParallelConversations(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(answerBooking)
	user := personas.LLM(personas.Rushed, "Book a table for two.").With(newClient(t, srv, t.TempDir(), cache.Off))
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			res := bookingRun(t, user)
			require.NoError(t, res.Err)
			assert.Equal(t, []string{
				"agent: Luigi's, how can I help?",
				"user: A table for two tonight.",
				"agent: Let me check. For two people?",
				"user: Yes, two, at seven.",
				"agent: Booked for two at seven.",
				"user: Great, thanks, bye.",
			}, lines(res))
		})
	}
}

func TestLLMInterruptDecision(t *testing.T) {
	st := &voicetest.State{}
	user := personas.LLM(personas.Interrupter, "Book.").Seed(3)
	ok, after := user.InterruptDecision(st)
	want, wantAfter, _ := personas.Interrupter.Interrupt.Decide(3, "", 0)
	assert.Equal(t, want, ok)
	assert.Equal(t, wantAfter, after)
	ok, _ = personas.LLM(personas.Patient, "Book.").InterruptDecision(st)
	assert.False(t, ok, "a patient caller never barges in")
}

// TestLLMSeesInaudibleAndCutOffAgentSpeech renders agent speech with no
// words as "(inaudible)" and speech cut short by a barge-in as "[cut off]".
func TestLLMSeesInaudibleAndCutOffAgentSpeech(t *testing.T) {
	sayHi := voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{Name: "say", Arguments: json.RawMessage(`{"text":"Hello?"}`)}}}

	s := &stub{answers: []voicetest.ChatMessage{sayHi}}
	res := voicetest.Scenario(t, voicetest.Config{
		Name:      "audio only",
		Agent:     fixtures.AudioOnlyAgent(fixtures.Reply{Text: "Welcome to Luigi's."}),
		User:      personas.LLM(personas.Patient, "Book.").With(s),
		UserVoice: toneVoice{},
		Script:    []voicetest.Step{voicetest.UserSays("Hi."), voicetest.AgentTurn(), voicetest.UserTurn()},
	})
	require.True(t, res.Success, "%v", res.Err)
	require.Len(t, s.reqs, 1)
	msgs := s.reqs[0].Messages
	require.Len(t, msgs, 4)
	assert.Contains(t, msgs[1].Content, "has not said anything yet", "the caller spoke first")
	assert.Equal(t, voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "Hi."}, msgs[2])
	assert.Equal(t, voicetest.ChatMessage{Role: voicetest.ChatUser, Content: "(inaudible)"}, msgs[3])

	s = &stub{answers: []voicetest.ChatMessage{sayHi}}
	res = voicetest.Scenario(t, voicetest.Config{
		Name:      "barge-in",
		Agent:     fixtures.BargeInAgent(fixtures.Reply{Text: "We have many tables available tonight for parties of any size."}, fixtures.Reply{Text: "Sure."}),
		User:      personas.LLM(personas.Patient, "Book.").With(s),
		UserVoice: toneVoice{},
		Script: []voicetest.Step{
			voicetest.UserSays("Hi."),
			voicetest.Interrupt("Wait.", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
			voicetest.UserTurn(),
		},
	})
	require.True(t, res.Success, "%v", res.Err)
	require.Len(t, s.reqs, 1)
	var cut []string
	for _, m := range s.reqs[0].Messages {
		if strings.Contains(m.Content, "[cut off]") {
			cut = append(cut, m.Content)
		}
	}
	assert.Len(t, cut, 1, "%+v", s.reqs[0].Messages)
}
