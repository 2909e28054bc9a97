package composable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/composable"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// scriptLLM is an in-process voicetest.LLM for the composable agent's
// Conn-level tests: it answers from a function of the request and records
// every request.
type scriptLLM struct {
	mu    sync.Mutex
	reqs  []voicetest.ChatRequest
	reply func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error)
	// block, when set, makes Complete wait for ctx to end.
	block bool
}

func (s *scriptLLM) Complete(ctx context.Context, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return voicetest.ChatResponse{}, ctx.Err()
	}
	return s.reply(n, req)
}

func (s *scriptLLM) requests() []voicetest.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]voicetest.ChatRequest(nil), s.reqs...)
}

// lastUser returns the content of the last user message of req.
func lastUser(req voicetest.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == voicetest.ChatUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// echoLLM answers "You said: <last user message>".
func echoLLM() *scriptLLM {
	return &scriptLLM{reply: func(_ int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
		return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "You said: " + lastUser(req)}}, nil
	}}
}

// compEvents receives events until stop reports true for one, and returns
// them rendered one per line.
func compEvents(t *testing.T, conn voicetest.Conn, stop func(voicetest.AgentEvent) bool) (lines []string, text string, audio time.Duration) {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		ev, err := conn.Recv(ctx)
		cancel()
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			return lines, text, audio
		}
		switch ev.Kind {
		case voicetest.AgentAudio:
			audio += ev.Audio.Duration()
			if len(lines) == 0 || lines[len(lines)-1] != "audio" {
				lines = append(lines, "audio")
			}
			if stop(ev) {
				return lines, text, audio
			}
			continue
		case voicetest.AgentTranscript:
			text += ev.Text
			continue
		case voicetest.AgentTimings:
			continue // checked by TestComposableReportsItsParts
		case voicetest.AgentToolCall, voicetest.AgentToolResult:
			lines = append(lines, fmt.Sprintf("%s %s %s %s", ev.Kind, ev.Tool.Name, ev.Tool.Arguments, ev.Tool.Result))
		default:
			lines = append(lines, strings.TrimSpace(ev.Kind.String()+" "+ev.Text))
		}
		if stop(ev) {
			return lines, text, audio
		}
	}
}

func isKindOf(k voicetest.EventKind) func(voicetest.AgentEvent) bool {
	return func(ev voicetest.AgentEvent) bool { return ev.Kind == k }
}

// compSay sends text as fake speech in 20 ms frames, paced on the clock
// (virtual in a bubble), then ends the utterance.
func compSay(t *testing.T, conn voicetest.Conn, rate int, text string) {
	t.Helper()
	for _, f := range adaptertest.FakeSpeech(text, rate).Frames(20 * time.Millisecond) {
		if err := conn.SendAudio(t.Context(), f); err != nil {
			t.Fatalf("SendAudio: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := conn.EndUtterance(t.Context()); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
}

func TestComposableConnConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 16000
		model := &scriptLLM{reply: func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
			if n == 1 {
				return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant,
					ToolCalls: []voicetest.ToolCall{{ID: "call_1", Name: "book", Arguments: json.RawMessage(`{"party":2}`)}}}}, nil
			}
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "Booked for " + lastUser(req)}}, nil
		}}
		a := composable.New(fixtures.FakeSTT(), model, fixtures.FakeTTS())
		a.SystemPrompt = "You book tables."
		a.Greeting = "Hello."
		a.Tools = []voicetest.ToolSpec{{Name: "book", Parameters: json.RawMessage(`{"type":"object"}`)}}
		a.ToolHandler = func(_ context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
			return json.RawMessage(`{"table":7}`), nil
		}
		a.VirtualClock = true
		conn, err := a.Connect(t.Context(), adaptertest.Session(t, rate))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if c := conn.Capabilities(); !c.VirtualTime || !c.TurnEnd || !c.NativeInterrupt || !c.ToolEvents || !c.Audio || !c.DTMF {
			t.Errorf("capabilities %+v", c)
		}
		readmecaps.Check(t, "`composable`", conn.Capabilities())

		start := time.Now()
		lines, text, audio := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		if got := strings.Join(lines, "|"); got != "audio|agent_turn_end" || text != "Hello." {
			t.Errorf("greeting: %s %q", got, text)
		}
		greet := adaptertest.FakeSpeech("Hello.", rate).Duration()
		adaptertest.WantDurationNear(t, "greeting audio", audio, greet, 20*time.Millisecond)
		if el := time.Since(start); el != greet {
			t.Errorf("the greeting's turn end came after %v of (virtual) time, want %v: audio is paced as it plays", el, greet)
		}

		compSay(t, conn, rate, "Two at seven.")
		lines, text, _ = compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		want := `user_transcript Two at seven.|tool_call book {"party":2} |tool_result book {"party":2} {"table":7}|audio|agent_turn_end`
		if got := strings.Join(lines, "|"); got != want || text != "Booked for Two at seven." {
			t.Errorf("turn 1:\n got %s %q\nwant %s", got, text, want)
		}
		reqs := model.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d LLM calls, want 2", len(reqs))
		}
		var roles []string
		for _, m := range reqs[1].Messages {
			roles = append(roles, string(m.Role))
		}
		if got := strings.Join(roles, " "); got != "system assistant user assistant tool" {
			t.Errorf("history sent to the LLM: %s", got)
		}
		if m := reqs[1].Messages[4]; m.ToolCallID != "call_1" || m.Content != `{"table":7}` {
			t.Errorf("tool message %+v", m)
		}

		// Text and DTMF skip the STT.
		if err := conn.SendDTMF(t.Context(), "42#"); err != nil {
			t.Fatal(err)
		}
		_, text, _ = compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		if text != "Booked for [The caller pressed the keys 42#]" {
			t.Errorf("DTMF turn: %q", text)
		}
		if err := conn.SendText(t.Context(), "Thanks."); err != nil {
			t.Fatal(err)
		}
		if _, text, _ = compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd)); text != "Booked for Thanks." {
			t.Errorf("text turn: %q", text)
		}
	})
}

func TestComposableInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 16000
		model := echoLLM()
		a := composable.New(fixtures.FakeSTT(), model, fixtures.FakeTTS())
		a.Greeting = "Welcome to the longest greeting anyone has ever heard on a phone line."
		conn, err := a.Connect(t.Context(), adaptertest.Session(t, rate))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Native interrupt after a second of the greeting. (The agent
		// streams its audio as it plays, to a Recv that keeps up.)
		var heard time.Duration
		_, before, _ := compEvents(t, conn, func(ev voicetest.AgentEvent) bool {
			heard += ev.Audio.Duration()
			return heard >= time.Second
		})
		if err := conn.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		lines, text, _ := compEvents(t, conn, isKindOf(voicetest.AgentInterrupted))
		text = before + text
		text0 := text
		if lines[len(lines)-1] != "agent_interrupted barge-in" || strings.Count(text, " ") < 1 || strings.Count(text, " ") > 5 {
			t.Errorf("after Interrupt: %v, text %q (want a few words at most)", lines, text)
		}
		// Barge-in by voice while the agent answers.
		compSay(t, conn, rate, "Say something long please.")
		heard = 0
		compEvents(t, conn, func(ev voicetest.AgentEvent) bool {
			heard += ev.Audio.Duration()
			return heard >= 500*time.Millisecond
		})
		var seen []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			seen, _, _ = compEvents(t, conn, isKindOf(voicetest.AgentInterrupted))
		}()
		compSay(t, conn, rate, "Stop.")
		<-done
		if seen[len(seen)-1] != "agent_interrupted barge-in" {
			t.Errorf("voice barge-in: %v", seen)
		}
		lines, text, _ = compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		if text != "You said: Stop." {
			t.Errorf("answer to the barge-in: %v %q", lines, text)
		}
		// The history holds only what was said of the interrupted answers.
		reqs := model.requests()
		last := reqs[len(reqs)-1].Messages
		if len(last) != 4 || last[0].Content != text0 || !strings.HasPrefix("Welcome to the longest greeting anyone has ever heard on a phone line.", last[0].Content) ||
			last[0].Content == a.Greeting || !strings.HasPrefix("You said: Say something long please.", last[2].Content) {
			t.Errorf("history after two interruptions: %+v", last)
		}
	})
}

func TestComposableHangUpAndErrors(t *testing.T) {
	t.Run("end_call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			model := &scriptLLM{reply: func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
				if n == 1 {
					if len(req.Tools) != 1 || req.Tools[0].Name != composable.EndCallTool {
						t.Errorf("tools offered: %+v", req.Tools)
					}
					return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{ID: "c", Name: "end_call", Arguments: json.RawMessage(`{}`)}}}}, nil
				}
				return voicetest.ChatResponse{Message: voicetest.ChatMessage{Content: "Goodbye."}}, nil
			}}
			a := composable.New(fixtures.FakeSTT(), model, fixtures.FakeTTS())
			a.EndCall = true
			conn, err := a.Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SendText(t.Context(), "Bye."); err != nil {
				t.Fatal(err)
			}
			lines, text, _ := compEvents(t, conn, func(voicetest.AgentEvent) bool { return false })
			want := `tool_call end_call {} |tool_result end_call {} {"ok":true}|audio|agent_hang_up the agent called end_call|error: voicetest: composable transport closed`
			if got := strings.Join(lines, "|"); got != want || text != "Goodbye." {
				t.Errorf("got  %s %q\nwant %s", got, text, want)
			}
			if err := conn.SendText(t.Context(), "Hello?"); !errors.Is(err, voicetest.ErrTransportClosed) {
				t.Errorf("SendText after the hang-up: %v", err)
			}
		})
	})
	t.Run("llm error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			model := &scriptLLM{reply: func(int, voicetest.ChatRequest) (voicetest.ChatResponse, error) {
				return voicetest.ChatResponse{}, errors.New("model overloaded")
			}}
			conn, err := composable.New(nil, model, fixtures.FakeTTS()).Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SendAudio(t.Context(), pcm.Silence(16000, 20*time.Millisecond)); !errors.Is(err, voicetest.ErrUnsupported) {
				t.Errorf("SendAudio without an STT: %v", err)
			}
			if err := conn.SendText(t.Context(), "Hi."); err != nil {
				t.Fatal(err)
			}
			_, err = conn.Recv(t.Context())
			if !errors.Is(err, voicetest.ErrTransportClosed) || !strings.Contains(err.Error(), "the LLM failed (call 1 of the turn): model overloaded") {
				t.Errorf("Recv after an LLM error: %v", err)
			}
		})
	})
	t.Run("tool loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			model := &scriptLLM{reply: func(int, voicetest.ChatRequest) (voicetest.ChatResponse, error) {
				return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{Name: "again"}}}}, nil
			}}
			a := composable.New(nil, model, fixtures.FakeTTS())
			a.MaxToolRounds = 2
			conn, err := a.Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SendText(t.Context(), "Hi."); err != nil {
				t.Fatal(err)
			}
			lines, _, _ := compEvents(t, conn, func(voicetest.AgentEvent) bool { return false })
			got := strings.Join(lines, "|")
			if strings.Count(got, "tool_result again") != 2 || !strings.Contains(got, `{"error":"no handler for tool \"again\""}`) ||
				!strings.Contains(got, "still calling tools after 2 calls") {
				t.Errorf("events: %s", got)
			}
		})
	})
	t.Run("recv timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			conn, err := composable.New(nil, echoLLM(), fixtures.FakeTTS()).Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if _, err := conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Recv from a quiet agent: %v, want the context's deadline", err)
			}
			if err := conn.SendText(t.Context(), "Still there?"); err != nil {
				t.Fatal(err)
			}
			if _, text, _ := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd)); text != "You said: Still there?" {
				t.Errorf("after a Recv timeout: %q", text)
			}
		})
	})
	t.Run("tool errors", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			model := &scriptLLM{reply: func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
				if n == 1 {
					return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{
						{ID: "a", Name: "fails"}, {ID: "b", Name: "panics"}, {ID: "c", Name: "garbage"}}}}, nil
				}
				return voicetest.ChatResponse{Message: voicetest.ChatMessage{Content: "Done."}}, nil
			}}
			a := composable.New(nil, model, fixtures.FakeTTS())
			a.ToolHandler = func(_ context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
				switch call.Name {
				case "fails":
					return nil, errors.New("database down")
				case "panics":
					panic("boom")
				}
				return json.RawMessage(`{not json`), nil
			}
			conn, err := a.Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SendText(t.Context(), "Go."); err != nil {
				t.Fatal(err)
			}
			lines, text, _ := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
			got := strings.Join(lines, "|")
			for _, want := range []string{`{"error":"database down"}`, `{"error":"tool \"panics\" handler panicked: boom"}`, `returned invalid JSON`} {
				if !strings.Contains(got, want) {
					t.Errorf("events lack %s:\n%s", want, got)
				}
			}
			if text != "Done." {
				t.Errorf("agent said %q", text)
			}
		})
	})
	t.Run("short utterance", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			conn, err := composable.New(fixtures.FakeSTT(), echoLLM(), fixtures.FakeTTS()).Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			compSay(t, conn, 16000, "k") // one 50 ms burst: too short for the VAD
			if _, text, _ := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd)); text != "You said: k" {
				t.Errorf("agent said %q", text)
			}
		})
	})
	t.Run("close while thinking", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			conn, err := composable.New(nil, &scriptLLM{block: true}, fixtures.FakeTTS()).Connect(t.Context(), adaptertest.Session(t, 16000))
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.SendText(t.Context(), "Hi."); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
				t.Errorf("Recv after Close: %v", err)
			}
		})
	})
	t.Run("bad config", func(t *testing.T) {
		for _, tc := range []struct {
			a    *composable.Agent
			rate int
			want string
		}{
			{composable.New(nil, nil, fixtures.FakeTTS()), 16000, "no LLM"},
			{composable.New(nil, echoLLM(), nil), 16000, "no TTS"},
			{composable.New(nil, echoLLM(), fixtures.FakeTTS()), 4000, "at least 8000 Hz"},
		} {
			if _, err := tc.a.Connect(t.Context(), adaptertest.Session(t, tc.rate)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Connect: %v, want %q", err, tc.want)
			}
		}
	})
}

// TestComposableVADEndsUtterance checks that a caller that never calls
// EndUtterance is answered once the energy VAD hears the end of speech.
func TestComposableVADEndsUtterance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 16000
		conn, err := composable.New(fixtures.FakeSTT(), echoLLM(), fixtures.FakeTTS()).Connect(t.Context(), adaptertest.Session(t, rate))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		speech, _ := pcm.Pad(adaptertest.FakeSpeech("Table for two.", rate), 0, time.Second)
		for _, f := range speech.Frames(20 * time.Millisecond) {
			if err := conn.SendAudio(t.Context(), f); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		lines, text, _ := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		if lines[0] != "user_transcript Table for two." || text != "You said: Table for two." {
			t.Errorf("events %v, text %q", lines, text)
		}
	})
}

// composableLLM returns an llm.Client that talks to srv through a cache in
// dir, in mode m.
func composableLLM(t *testing.T, srv *fakeopenai.Server, dir string, m cache.Mode, opts ...llm.Option) *llm.Client {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(m))
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]llm.Option{llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()), llm.WithModel("gpt-4o-mini"), llm.WithCache(c)}, opts...)
	client, err := llm.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// composableScenario is the conversation of TestComposableScenario.
func composableScenario(t *testing.T, agent voicetest.Agent) *voicetest.Result {
	return voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: fixtures.FakeTTS(),
		Rate:      pcm.Rate16k,
		// On the real clock the agent's transcript of the user may arrive
		// as the runner records the end of the user's speech, in either
		// order: the golden timeline leaves it out.
		Golden: voicetest.GoldenOptions{Ignore: []voicetest.EventType{voicetest.EventUserTranscript}},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two."),
			voicetest.AgentTurn(),
			voicetest.UserSays("At seven."),
			voicetest.AgentTurn(),
		},
	})
}

// TestComposableScenario runs a conversation through voicetest.Scenario
// with the fake speech engines and an llm.Client against the fakeopenai
// chat server: first recording the completions into a cache, the server
// in process on an in-memory network (adaptertest.MemNet) and the agent on
// the virtual time of a testing/synctest bubble, then replaying them from
// the cache on virtual time with the server gone, where the transcript
// must be the same. (TestComposablePartsOnTheRealClock and
// TestComposableLocalEngines keep the agent on the real clock.)
func TestComposableScenario(t *testing.T) {
	var srv *fakeopenai.Server
	var client *http.Client
	dir := t.TempDir()
	want := `agent: Hi, this is the booking line.
user: A table for two.
agent: Noted: A table for two.
user: At seven.
agent: Noted: At seven.
`
	build := func(t *testing.T, m cache.Mode, virtual bool) *composable.Agent {
		a := composable.New(fixtures.FakeSTT(), composableLLM(t, srv, dir, m, llm.WithHTTPClient(client)), fixtures.FakeTTS())
		a.SystemPrompt = "You take table bookings."
		a.Greeting = "Hi, this is the booking line."
		a.VirtualClock = virtual
		return a
	}
	var recorded *voicetest.Result
	t.Run("record", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := adaptertest.NewMemNet(t)
			srv, client = fakeopenai.New(t, fakeopenai.WithListener(n.Listen())), n.HTTPClient()
			srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
				last := req.Messages[len(req.Messages)-1]
				return fakeopenai.ChatReply{Content: "Noted: " + last.Content}, nil
			})
			recorded = composableScenario(t, build(t, cache.Record, false))
			if got := recorded.TranscriptText(); got != want {
				t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
			}
		})
	})
	if srv == nil {
		t.FailNow()
	}
	adaptertest.CheckNoLeak(t) // the scenario closed its Conn
	calls := len(srv.RequestsTo("/v1/chat/completions"))
	if calls != 2 {
		t.Fatalf("%d chat requests, want 2", calls)
	}
	t.Run("replay", func(t *testing.T) {
		res := composableScenario(t, build(t, cache.Replay, true))
		if got := res.TranscriptText(); got != want {
			t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
		}
		if !res.Capabilities.VirtualTime {
			t.Errorf("the replay did not run on virtual time")
		}
		// On virtual time the agent's latency is exactly zero: every
		// engine answered at once.
		for _, l := range res.Latency.PerTurn {
			if l != 0 {
				t.Errorf("latency %v on virtual time, want 0", l)
			}
		}
	})
	if n := len(srv.RequestsTo("/v1/chat/completions")); n != calls {
		t.Errorf("the replay made %d more chat requests, want none", n-calls)
	}
}

// TestComposableLocalEngines runs the agent with the real local engines:
// flite speaks, pocketsphinx listens. The model answers with the last word
// it was given, so that the agent's reply is short and still carries what
// pocketsphinx heard. It runs in parallel (it touches no process-wide
// state) and in a testing/synctest bubble: the bubble's clock stands still
// while the engines' processes run (a goroutine waiting on a pipe or a
// process is not durably blocked), so nothing here is timed, and the
// agent's real-time playback of its reply costs no wall time. The parts'
// timing on the real clock is TestComposablePartsOnTheRealClock's.
// Since the bubble's timeouts cannot fire while an engine's process hangs,
// a watchdog on the real clock, outside the bubble, ends the test binary
// with a message naming the phase instead of letting it wait for go test's
// own timeout.
func TestComposableLocalEngines(t *testing.T) {
	t.Parallel()
	speech.SkipIfNotInstalled(t, "flite")
	speech.SkipIfNotInstalled(t, "pocketsphinx")
	watchdog := time.AfterFunc(localEnginesBound, func() {
		panic(fmt.Sprintf("TestComposableLocalEngines: flite and pocketsphinx gave no reply within %v of real time (an engine's process hangs?)", localEnginesBound))
	})
	defer watchdog.Stop()
	synctest.Test(t, func(t *testing.T) {
		stt, err := speech.STTByName("pocketsphinx")
		if err != nil {
			t.Fatal(err)
		}
		lastWord := &scriptLLM{reply: func(_ int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
			words := strings.Fields(lastUser(req))
			if len(words) == 0 {
				return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "Nothing."}}, nil
			}
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "You said " + words[len(words)-1] + "."}}, nil
		}}
		a := composable.New(stt, lastWord, speech.Flite())
		const rate = 16000
		conn, err := a.Connect(t.Context(), adaptertest.Session(t, rate))
		if err != nil {
			t.Fatal(err)
		}
		adaptertest.CloseConn(t, conn)
		said, err := speech.Flite().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "book a table for two", Rate: rate})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range said.Frames(20 * time.Millisecond) {
			if err := conn.SendAudio(t.Context(), f); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.EndUtterance(t.Context()); err != nil {
			t.Fatal(err)
		}
		lines, text, audio := compEvents(t, conn, isKindOf(voicetest.AgentTurnEnd))
		t.Logf("pocketsphinx heard %q; the agent said %q (%v)", lines[0], text, audio)
		if !strings.HasPrefix(lines[0], "user_transcript ") || !strings.Contains(lines[0], "table") {
			t.Errorf("pocketsphinx heard %q, want the words of %q", lines[0], "book a table for two")
		}
		heard := strings.Fields(strings.TrimPrefix(lines[0], "user_transcript "))
		if len(heard) == 0 || strings.TrimSpace(text) != "You said "+heard[len(heard)-1]+"." || audio < 500*time.Millisecond {
			t.Errorf("agent said %q with %v of flite audio, want %q in at least 500ms", text, audio, "You said <the last word heard>.")
		}
	})
}

// localEnginesBound bounds TestComposableLocalEngines on the real clock.
const localEnginesBound = 2 * time.Minute

// TestComposableScenarioVirtual runs a whole conversation on virtual time
// through voicetest.Scenario: a tool call, a barge-in after three words,
// DTMF, and the agent hanging up with end_call. On virtual time the
// transcript and timeline are exact.
func TestComposableScenarioVirtual(t *testing.T) {
	model := &scriptLLM{reply: func(n int, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		answer := func(s string) (voicetest.ChatResponse, error) {
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{Content: s}}, nil
		}
		switch {
		case last.Role == voicetest.ChatTool && strings.Contains(last.Content, "ok"):
			return answer("Goodbye.")
		case last.Role == voicetest.ChatTool:
			return answer("Table 7 is yours.")
		case strings.Contains(last.Content, "two"):
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{
				{ID: "call_1", Name: "book", Arguments: json.RawMessage(`{"party":2}`)}}}}, nil
		case strings.Contains(last.Content, "parking"):
			return answer("There is a large car park behind the restaurant with plenty of spaces.")
		case strings.Contains(last.Content, "keys"):
			return voicetest.ChatResponse{Message: voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{
				{ID: "call_2", Name: composable.EndCallTool, Arguments: json.RawMessage(`{}`)}}}}, nil
		}
		return answer("Sorry?")
	}}
	a := composable.New(fixtures.FakeSTT(), model, fixtures.FakeTTS())
	a.Greeting = "Hello, how can I help?"
	a.Tools = []voicetest.ToolSpec{{Name: "book"}}
	a.ToolHandler = func(context.Context, voicetest.ToolCall) (json.RawMessage, error) {
		return json.RawMessage(`{"table":7}`), nil
	}
	a.EndCall = true
	a.VirtualClock = true
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Rate:      pcm.Rate16k,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two."),
			voicetest.AgentTurn(),
			voicetest.UserSays("Is there parking?"),
			voicetest.Interrupt("Thanks!", voicetest.AfterWords(3)),
			voicetest.AgentTurn(),
			voicetest.DTMF("1#"),
			voicetest.AgentTurn(),
			voicetest.ExpectHangUp(), // end_call
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	want := `agent: Hello, how can I help?
user: A table for two.
agent: Table 7 is yours.
user: Is there parking?
agent: There is a
user: Thanks!
agent: Sorry?
agent: Goodbye.
`
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if res.Ended != "the agent hung up" {
		t.Errorf("Ended = %q, want the agent's hang-up", res.Ended)
	}
	tl := res.TimelineText()
	for _, want := range []string{"tool_call book", "tool_result book", "user_interrupt \"Thanks!\"", "agent_interrupted", "dtmf \"1#\"", "tool_call end_call", "agent_hang_up"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q:\n%s", want, tl)
		}
	}
	// Virtual time: the agent answered at once, every turn.
	for _, l := range res.Latency.PerTurn {
		if l != 0 {
			t.Errorf("latency %v, want 0 on virtual time", l)
		}
	}
}
