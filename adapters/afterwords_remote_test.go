package adapters_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// afterWordsReply is the greeting the peers say in the AfterWords tests:
// six words of fixtures.WordTones, 400 ms a word (Config.WordsPerMinute's
// default rate), so the third word has played 1.2 s into it.
const (
	afterWordsReply = "one two three four five six"
	thirdWordPlayed = 1200 * time.Millisecond
	replyLength     = 2400 * time.Millisecond
)

// realtimeAgent, elevenAgent and lcAgent return the adapters pointed at
// their peers.
func realtimeAgent(peer *realtimepeer.Server) *realtime.Agent {
	a := realtime.New("gpt-realtime")
	a.URL = peer.URL
	a.APIKey = "sk-test"
	return a
}

func elevenAgent(peer *elevenpeer.Server) *elevenlabs.Agent {
	a := elevenlabs.New("agent_test")
	a.URL = peer.URL
	a.APIKey = "xi-test"
	return a
}

func lcAgent(peer *layercodepeer.Peer) *layercode.Agent {
	a := layercode.New(peer.AuthorizeURL, "agent-test")
	a.WebSocketURL = peer.WebSocketURL
	return a
}

// memEleven and memLC are elevenAgent and lcAgent reaching their peers
// through n.
func memEleven(n *adaptertest.MemNet, peer *elevenpeer.Server) *elevenlabs.Agent {
	a := elevenAgent(peer)
	a.NetDial = n.Dial
	return a
}

func memLC(n *adaptertest.MemNet, peer *layercodepeer.Peer) *layercode.Agent {
	a := lcAgent(peer)
	a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
	return a
}

// runAfterWords runs a scenario in which the user barges in on agent's
// greeting with AfterWords(n), and returns its result
// and error.
func runAfterWords(t *testing.T, agent voicetest.Agent, n int) (*voicetest.Result, error) {
	t.Helper()
	return voicetest.Run(t.Context(), voicetest.Config{
		Agent:     agent,
		UserVoice: fixtures.FakeTTS(),
		Logf:      voicetest.TestLogf(t),
		Script:    []voicetest.Step{voicetest.Interrupt("Stop.", voicetest.AfterWords(n))},
	})
}

// bargeIn returns when the agent started speaking and when the user barged
// in, on the run's clock.
func bargeIn(t *testing.T, res *voicetest.Result) (start, at time.Duration) {
	t.Helper()
	start, at = -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Type == voicetest.EventAgentStartSpeaking && start < 0:
			start = e.At
		case e.Type == voicetest.EventUserInterrupt && at < 0:
			at = e.At
		}
	}
	if start < 0 || at < 0 {
		t.Fatalf("no agent_start_speaking or user_interrupt in the timeline:\n%s", res.TimelineText())
	}
	return start, at
}

// The remote protocols send the agent's text ahead of its audio (Realtime's
// transcript deltas as fast as the socket takes them, ElevenLabs'
// agent_response with the whole reply, LayerCode's response.text before the
// audio). AfterWords(3) must still barge in when the third word has been
// played — about 1.2 s into the reply — not at the first audio, which is
// when the text alone has three words. The runs are on virtual time, each
// in a testing/synctest bubble with its peer on an in-memory network (they
// were on the real clock, hence the generous bounds the test keeps: after
// 40% of the expected time, and before the reply has played out).
func TestAfterWordsRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		agent func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent
		check func(t *testing.T)
	}{
		{name: "realtime audio at once", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			peer := realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen(), Greeting: afterWordsReply})
			a := realtimeAgent(peer)
			a.Greeting, a.NetDial = true, n.Dial
			t.Cleanup(func() {
				// The truncate tells the server how much audio was played
				// when the user barged in.
				ss := peer.Sessions()
				if len(ss) != 1 || len(ss[0].Truncates) != 1 || len(ss[0].Errors) > 0 {
					t.Errorf("server sessions %+v, want one with one truncate and no errors", ss)
					return
				}
				got := ss[0].Truncates[0].AudioEndMs
				t.Logf("the adapter truncated the reply at %d ms of audio", got)
				if got < thirdWordPlayed.Milliseconds()*4/10 {
					t.Errorf("truncated at %d ms of audio, want about %d", got, thirdWordPlayed.Milliseconds())
				}
			})
			return a
		}},
		{name: "realtime audio at 5x real time", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			peer := realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen(), Greeting: afterWordsReply, ChunkDelay: 20 * time.Millisecond})
			a := realtimeAgent(peer)
			a.Greeting, a.NetDial = true, n.Dial
			return a
		}},
		{name: "elevenlabs audio at 5x real time", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			return memEleven(n, elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), FirstMessage: afterWordsReply, ChunkDelay: 20 * time.Millisecond}))
		}},
		{name: "elevenlabs audio in real time", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			return memEleven(n, elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), FirstMessage: afterWordsReply, ChunkDelay: 100 * time.Millisecond}))
		}},
		{name: "layercode audio at once", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			return memLC(n, layercodepeer.New(t, layercodepeer.Config{Listener: n.Listen(), Greeting: afterWordsReply, Speech: fixtures.WordTones}))
		}},
		{name: "layercode audio in real time", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			return memLC(n, layercodepeer.New(t, layercodepeer.Config{Listener: n.Listen(), Greeting: afterWordsReply, Speech: fixtures.WordTones, RealTimeAudio: true}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				agent := tc.agent(t, adaptertest.NewMemNet(t))
				res, err := runAfterWords(t, agent, 3)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if !res.Capabilities.TranscriptAhead {
					t.Errorf("the %s adapter does not declare TranscriptAhead", res.Capabilities.Adapter)
				}
				start, at := bargeIn(t, res)
				off := at - start
				t.Logf("barged in %v after the agent started speaking (the third word has played at %v)", off, thirdWordPlayed)
				if off < thirdWordPlayed*4/10 {
					t.Errorf("barged in %v after the agent started speaking, before 40%% of the %v the third word takes to play\n%s", off, thirdWordPlayed, res.TimelineText())
				}
				if off >= replyLength {
					t.Errorf("barged in %v after the agent started speaking, after its %v reply had played\n%s", off, replyLength, res.TimelineText())
				}
				msg := res.Transcript[0]
				if msg.Role != voicetest.RoleAgent || !msg.Interrupted || msg.Start > at {
					t.Errorf("first message %+v, want the agent's interrupted greeting", msg)
				}
			})
		})
	}
}

// A reply shorter than the words AfterWords waits for ends the turn with an
// error, not a barge-in: on Realtime at its response.done (once its audio
// has played), on ElevenLabs (no turn end) after tail silence.
func TestAfterWordsRemoteTurnEndsFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent
	}{
		{name: "realtime", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			a := realtimeAgent(realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen(), Greeting: "one two"}))
			a.Greeting, a.NetDial = true, n.Dial
			return a
		}},
		{name: "elevenlabs", agent: func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			return memEleven(n, elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), FirstMessage: "one two", ChunkDelay: 20 * time.Millisecond}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, err := runAfterWords(t, tc.agent(t, adaptertest.NewMemNet(t)), 3)
				if err == nil {
					t.Fatalf("Run succeeded, want an error\n%s", res.TimelineText())
				}
				if want := "finished its turn after 2 words, before the 3 that AfterWords(3) waits for"; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
				for _, e := range res.Timeline {
					if e.Type == voicetest.EventUserInterrupt {
						t.Errorf("the user barged in at %v\n%s", e.At, res.TimelineText())
					}
				}
			})
		})
	}
}
