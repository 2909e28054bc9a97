package adapters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/composable"
	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// Issue 14, item 2: each reply belongs to its question, whether or not
// the agent greets. Every adapter whose agent may stay silent at the start
// runs the same script, which begins with the user's first line; each
// reply must be recorded in the turn of the question it answers.

// echoHandler answers every line with "You said <line>" and, unless
// greet, says nothing at the start.
func echoHandler(greet bool) handler.Func {
	return func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev := ev.(type) {
		case handler.StartEvent:
			if greet {
				return c.Say("Hello, how can I help?")
			}
		case handler.TextEvent:
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
	t.Parallel()
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
		cfg   func(t *testing.T, n *adaptertest.MemNet) voicetest.Config
		check func(t *testing.T, res *voicetest.Result)
	}{
		{"handler text", func(t *testing.T, _ *adaptertest.MemNet) voicetest.Config {
			return voicetest.Config{Agent: handler.New(echoHandler(false), handler.WithThinkTime(200*time.Millisecond))}
		}, func(t *testing.T, res *voicetest.Result) {
			echoesBelong(t, res)
			if len(res.Latency.PerTurn) != 2 || res.Latency.P50 != 200*time.Millisecond {
				t.Errorf("latencies %v, want the 200ms think time twice", res.Latency.PerTurn)
			}
		}},
		{"handler audio", func(t *testing.T, _ *adaptertest.MemNet) voicetest.Config {
			return voicetest.Config{Agent: handler.New(echoHandler(false), handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())), UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"realtime", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			peer := realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen(), Turns: []realtimepeer.Turn{{Reply: echo}, {Reply: echo}}})
			a := realtimeAgent(peer)
			a.NetDial = n.Dial
			return voicetest.Config{Agent: a, UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"elevenlabs", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			peer := elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), Turns: []elevenpeer.Turn{{Reply: echo}, {Reply: echo}}})
			a := elevenAgent(peer)
			a.NetDial = n.Dial
			return voicetest.Config{Agent: a, UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"layercode", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			peer := layercodepeer.New(t, layercodepeer.Config{
				Listener: n.Listen(),
				Speech:   adaptertest.FakeSpeech, Transcribe: fakeTranscribe, RealTimeAudio: true, ReplyDelay: 50 * time.Millisecond,
				Replies: func(n int, heard string) layercodepeer.Reply { return layercodepeer.Reply{Text: "You said " + heard} },
			})
			a := lcAgent(peer)
			a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
			return voicetest.Config{Agent: a, UserVoice: fixtures.FakeTTS()}
		}, echoesBelong},
		{"composable", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			srv := fakeopenai.New(t, fakeopenai.WithListener(n.Listen()))
			srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
				return fakeopenai.ChatReply{Content: "You said " + req.Messages[len(req.Messages)-1].Content}, nil
			})
			a := composable.New(fixtures.FakeSTT(), composableLLM(t, srv, t.TempDir(), cache.Off, llm.WithHTTPClient(n.HTTPClient())), fixtures.FakeTTS())
			return voicetest.Config{Agent: a, UserVoice: fixtures.FakeTTS(), Rate: pcm.Rate16k}
		}, echoesBelong},
		{"twilio", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen(), ReplyDuration: 300 * time.Millisecond})
			a := twilio.New(bot.URL)
			a.NetDial = n.Dial
			return voicetest.Config{Agent: a, UserVoice: adaptertest.ToneTTS{}}
		}, func(t *testing.T, res *voicetest.Result) { dataBelongs(t, res, marks) }},
		// The WebSocket bot answers the instant an utterance ends: on
		// virtual time its latency would be exactly 0, which dataBelongs
		// cannot tell from a reply recorded before its question. It runs
		// on the real clock over loopback TCP (n is nil).
		{"websocket", func(t *testing.T, n *adaptertest.MemNet) voicetest.Config {
			bot := wsbot.New(t, wsbot.Config{Rate: 16000, Tools: true})
			codec := wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000, TurnEnd: true, Transcripts: true, ToolEvents: true})
			return voicetest.Config{Agent: wscodec.New(bot.URL, codec), UserVoice: adaptertest.ToneTTS{}}
		}, func(t *testing.T, res *voicetest.Result) { dataBelongs(t, res, ui) }},
	} {
		// Each case runs on virtual time in a testing/synctest bubble of
		// its own, its peer in process on an in-memory network; the
		// WebSocket one on the real clock.
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := func(t *testing.T, n *adaptertest.MemNet) {
				cfg := tc.cfg(t, n)
				cfg.Golden = voicetest.GoldenOptions{Disable: true}
				cfg.Script = noGreetingScript()
				tc.check(t, voicetest.Scenario(t, cfg))
			}
			if tc.name == "websocket" {
				run(t, nil)
				return
			}
			synctest.Test(t, func(t *testing.T) { run(t, adaptertest.NewMemNet(t)) })
		})
	}
}

// fakeTranscribe is the LayerCode peer's STT: it decodes fixtures.FakeTTS
// speech.
func fakeTranscribe(c pcm.Chunk) string {
	tr, err := fixtures.FakeSTT().Transcribe(context.Background(), voicetest.TranscriptionRequest{Audio: c})
	if err != nil {
		return "?" + err.Error()
	}
	return tr.Text
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
