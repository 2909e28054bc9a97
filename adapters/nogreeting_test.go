package adapters_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, item 2: each reply belongs to its question, whether or not
// the agent greets. Every adapter whose agent may stay silent at the start
// runs the same script, which begins with the user's first line; each
// reply must be recorded in the turn of the question it answers.

// echoHandler answers every line with "You said <line>" and, unless
// greet, says nothing at the start.
func echoHandler(greet bool) adapters.HandlerFunc {
	return func(ctx context.Context, ev adapters.Event, c *adapters.Call) error {
		switch ev := ev.(type) {
		case adapters.StartEvent:
			if greet {
				return c.Say("Hello, how can I help?")
			}
		case adapters.TextEvent:
			return c.Say("You said " + ev.Text)
		}
		return nil
	}
}

// noGreetingScript starts with the user: no AgentTurn for a greeting.
func noGreetingScript() []voicetest.Step {
	return []voicetest.Step{
		voicetest.UserSays("A table for two."),
		voicetest.AgentTurn(),
		voicetest.UserSays("At seven."),
		voicetest.AgentTurn(),
	}
}

// echoesBelong checks that the agent's reply in each user turn repeats
// that turn's question (agents that say back what they heard).
func echoesBelong(t *testing.T, res *voicetest.Result) {
	t.Helper()
	questions := map[int]string{}
	replies := map[int]string{}
	for _, m := range res.Transcript {
		switch {
		case m.Role == voicetest.RoleUser:
			questions[m.Turn] = m.Text
		case replies[m.Turn] != "":
			t.Errorf("turn %d holds two agent replies: %q and %q\n%s", m.Turn, replies[m.Turn], m.Text, res.TranscriptText())
		default:
			replies[m.Turn] = m.Text
		}
	}
	for turn := 1; turn <= 2; turn++ {
		if q := questions[turn]; q == "" || !strings.Contains(replies[turn], q) {
			t.Errorf("turn %d: the user said %q, the agent's reply recorded in that turn is %q\n%s", turn, q, replies[turn], res.TranscriptText())
		}
	}
}

// dataBelongs checks that the agent's data event name (Twilio marks) or
// payload (the WebSocket bot's {"turn": n}) for reply n is recorded in
// user turn n.
func dataBelongs(t *testing.T, res *voicetest.Result, replyTurn func(voicetest.Event) (int, bool)) {
	t.Helper()
	seen := 0
	for _, e := range res.Timeline {
		if e.Type != voicetest.EventData {
			continue
		}
		n, ok := replyTurn(e)
		if !ok {
			continue
		}
		seen++
		if e.Turn != n {
			t.Errorf("the agent's reply %d is recorded in turn %d\n%s", n, e.Turn, res.TimelineText())
		}
	}
	if seen != 2 {
		t.Errorf("%d replies identified, want 2\n%s", seen, res.TimelineText())
	}
	for _, l := range res.Latency.PerTurn {
		if l <= 0 {
			t.Errorf("latencies %v: each reply must follow its question", res.Latency.PerTurn)
		}
	}
}

func TestRepliesBelongToTheirQuestionsWhenTheAgentDoesNotGreet(t *testing.T) {
	// Each case builds the agent (and its loopback peer) and checks the
	// result; the script is always noGreetingScript.
	echo := "You said {heard}"
	marks := func(e voicetest.Event) (int, bool) { // Twilio: mark "reply-N"
		var m struct{ Name string }
		var n int
		if json.Unmarshal(e.Data, &m) != nil {
			return 0, false
		}
		_, err := fmt.Sscanf(m.Name, "reply-%d", &n)
		return n, err == nil
	}
	ui := func(e voicetest.Event) (int, bool) { // the WebSocket bot's {"turn": n}
		var m struct{ Turn int }
		if e.Text != "ui" || json.Unmarshal(e.Data, &m) != nil {
			return 0, false
		}
		return m.Turn, true
	}
	for _, tc := range []struct {
		name  string
		cfg   func(t *testing.T) voicetest.Config
		check func(t *testing.T, res *voicetest.Result)
	}{
		{"handler text", func(t *testing.T) voicetest.Config {
			return voicetest.Config{Agent: adapters.Handler(echoHandler(false), adapters.WithThinkTime(200*time.Millisecond))}
		}, func(t *testing.T, res *voicetest.Result) {
			echoesBelong(t, res)
			if len(res.Latency.PerTurn) != 2 || res.Latency.P50 != 200*time.Millisecond {
				t.Errorf("latencies %v, want the 200ms think time twice", res.Latency.PerTurn)
			}
		}},
		{"handler audio", func(t *testing.T) voicetest.Config {
			return voicetest.Config{Agent: adapters.Handler(echoHandler(false), adapters.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())), UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"realtime", func(t *testing.T) voicetest.Config {
			peer := realtimepeer.New(t, realtimepeer.Config{Turns: []realtimepeer.Turn{{Reply: echo}, {Reply: echo}}})
			return voicetest.Config{Agent: realtimeAgent(peer), UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"elevenlabs", func(t *testing.T) voicetest.Config {
			peer := elevenpeer.New(t, elevenpeer.Config{Turns: []elevenpeer.Turn{{Reply: echo}, {Reply: echo}}})
			return voicetest.Config{Agent: elevenAgent(peer), UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"layercode", func(t *testing.T) voicetest.Config {
			peer := layercodepeer.New(t, layercodepeer.Config{
				Speech: fakeSpeech, Transcribe: fakeTranscribe, RealTimeAudio: true, ReplyDelay: 50 * time.Millisecond,
				Replies: func(n int, heard string) layercodepeer.Reply { return layercodepeer.Reply{Text: "You said " + heard} },
			})
			return voicetest.Config{Agent: lcAgent(peer), UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"composable", func(t *testing.T) voicetest.Config {
			srv := fakeopenai.New(t)
			srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
				return fakeopenai.ChatReply{Content: "You said " + req.Messages[len(req.Messages)-1].Content}, nil
			})
			a := adapters.Composable(fixtures.FakeSTT(), composableLLM(t, srv, t.TempDir(), cache.Off), fixtures.FakeTTS())
			return voicetest.Config{Agent: a, UserVoice: fixtures.FakeTTS(), Rate: pcm.Rate16k}
		}, echoesBelong},
		{"twilio", func(t *testing.T) voicetest.Config {
			bot := twiliobot.New(t, twiliobot.Config{ReplyDuration: 300 * time.Millisecond})
			return voicetest.Config{Agent: adapters.Twilio(bot.URL), UserVoice: toneTTS{}}
		}, func(t *testing.T, res *voicetest.Result) { dataBelongs(t, res, marks) }},
		{"websocket", func(t *testing.T) voicetest.Config {
			bot := wsbot.New(t, wsbot.Config{Rate: 16000, Tools: true})
			codec := adapters.JSONBase64(adapters.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true})
			return voicetest.Config{Agent: adapters.WebSocket(bot.URL, codec), UserVoice: toneTTS{}}
		}, func(t *testing.T, res *voicetest.Result) { dataBelongs(t, res, ui) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg(t)
			cfg.Golden = voicetest.GoldenOptions{Disable: true}
			cfg.Script = noGreetingScript()
			tc.check(t, voicetest.Scenario(t, cfg))
		})
	}
}

// A Handler agent that does not greet ends no turn at the start: a script
// that waits for a greeting times out naming the phase, and Proceed, which
// waits for a greeting only briefly, goes on to the user.
func TestHandlerThatDoesNotGreet(t *testing.T) {
	t.Run("AgentTurn for a greeting", func(t *testing.T) {
		var res *voicetest.Result
		synctest.Test(t, func(t *testing.T) {
			res = voicetest.Scenario(&quietTB{T: t}, voicetest.Config{
				Agent:  adapters.Handler(echoHandler(false)),
				Golden: voicetest.GoldenOptions{Disable: true},
				Script: []voicetest.Step{voicetest.AgentTurn()},
			})
		})
		var te *voicetest.TimeoutError
		if res.Success || !errorsAs(res.Err, &te) || te.Phase != voicetest.PhaseFirstChunk {
			t.Fatalf("err = %v, want a first-chunk timeout: the agent never greets", res.Err)
		}
	})
	t.Run("Proceed", func(t *testing.T) {
		res := voicetest.Scenario(t, voicetest.Config{
			Agent:  adapters.Handler(echoHandler(false)),
			User:   personas.Scripted("A table for two.", "At seven."),
			Golden: voicetest.GoldenOptions{Disable: true},
		})
		echoesBelong(t, res)
	})
	t.Run("a silent answer", func(t *testing.T) {
		silent := func(ctx context.Context, ev adapters.Event, c *adapters.Call) error {
			if ev, ok := ev.(adapters.TextEvent); ok && ev.Text != "hmm" {
				return c.Say("You said " + ev.Text)
			}
			return nil // an answer of silence to "hmm"
		}
		var res *voicetest.Result
		synctest.Test(t, func(t *testing.T) {
			res = voicetest.Scenario(&quietTB{T: t}, voicetest.Config{
				Agent:  adapters.Handler(silent),
				Golden: voicetest.GoldenOptions{Disable: true},
				Script: []voicetest.Step{voicetest.UserSays("hmm"), voicetest.AgentTurn()},
			})
		})
		if res.Success || !strings.Contains(fmt.Sprint(res.Err), "step 2 AgentTurn(): voicetest: the agent's turn ended with no speech") {
			t.Fatalf("err = %v, want the silent turn to fail", res.Err)
		}
		res = voicetest.Scenario(t, voicetest.Config{
			Agent:  adapters.Handler(silent),
			Golden: voicetest.GoldenOptions{Disable: true},
			Script: []voicetest.Step{
				voicetest.UserSays("hmm"), voicetest.AgentTurn(voicetest.AllowSilence()),
				voicetest.UserSays("A table for two."), voicetest.AgentTurn(),
			},
		})
		if got := res.State.LastAgentText(); got != "You said A table for two." {
			t.Errorf("last agent text %q", got)
		}
	})
}

// quietTB records a scenario's failure instead of failing the test, so
// that a test can check a scenario that must fail.
type quietTB struct {
	*testing.T
	errs []string
}

func (q *quietTB) Helper()           {}
func (q *quietTB) Error(args ...any) { q.errs = append(q.errs, fmt.Sprint(args...)) }
func (q *quietTB) Errorf(format string, args ...any) {
	q.errs = append(q.errs, fmt.Sprintf(format, args...))
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// expectSilentStart checks that a handler that does not greet sends
// nothing in its first second (no turn end for its silent start: issue
// 14), and that its StartEvent call did not fail (Recv would report it).
func expectSilentStart(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if ev, err := h.conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("at the start: %s, %v; want nothing from an agent that does not greet", format(h.since(), ev), err)
	}
}
