package livekit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// goAgent starts the Go agent double in the package's livekit-server,
// registered under a name of its own (cfg.AgentName, "frontdesk" when
// empty, with a random suffix), and returns the adapter that dispatches
// it.
func goAgent(t *testing.T, cfg lkagent.Config) (*livekit.Agent, *lkagent.Worker) {
	t.Helper()
	srv := server.Get(t)
	cfg.URL, cfg.APIKey, cfg.APISecret = srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret
	if cfg.AgentName == "" {
		cfg.AgentName = "frontdesk"
	}
	cfg.AgentName = agentName(cfg.AgentName)
	w := lkagent.New(t, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agent double's jobs: %+v", w.Jobs())
		}
	})
	return livekit.New(srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret, cfg.AgentName), w
}

// agentStates returns the agent state changes on the timeline, in order.
func agentStates(tl []voicetest.Event) []string {
	var out []string
	for _, e := range tl {
		if e.Type == voicetest.EventAgentLog && strings.HasPrefix(e.Text, "agent state: ") {
			out = append(out, strings.TrimPrefix(e.Text, "agent state: "))
		}
	}
	return out
}

// A conversation of three agent turns through a real livekit-server: the
// greeting, a reply after a handoff, and a reply after a tool call,
// checked LiveKit-style (the handoff and the message; the call, then
// its result, then the message); the agent's states are
// on the timeline, its latency is measured per turn where the audio
// crosses the room, and the wire counts what crossed. The agent publishes
// legacy transcription packets besides its streams, as LiveKit Agents 1.x
// do: each line is read once.
//
// The tool call reaches the runner before the reply's speech it caused
// even when the agent's session events come after that speech's first
// audio: the double reports its states as session events, as LiveKit
// Agents do, and sends the tool turn's function_tools_executed (stamped
// when the tool ran) and its agent_state_changed to speaking 250 ms
// after the reply's first audio frame, the order in which LiveKit Agents
// for Node's reached the runner 7 ms late in a session 9 run of
// TestNodeAgent. The adapter marks such events BeforeSpeech (their
// created_at is before the speech's first audio came), and the runner
// records them at the speech's start; the speech itself is not held.
// (Without the mark the call came after the message: red in 2 of 2
// runs.)
func TestScenarioMultiTurn(t *testing.T) {
	t.Parallel()
	beside(t)
	a, w := goAgent(t, lkagent.Config{
		Greeting: "Hello.",
		Turns: []lkagent.Turn{
			{Reply: "At nine.", Handoff: "hours"},
			{Tool: &lkagent.Tool{Name: "lookup_booking", Args: map[string]any{"name": "ada"}, Result: map[string]any{"table": 4}}, Reply: "Table four."},
		},
		LegacyTranscriptions: true,
		SessionStates:        true,
		LateToolEvents:       250 * time.Millisecond,
	})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("hours"),
			voicetest.AgentTurn(),
			voicetest.UserSays("my booking"),
			voicetest.AgentTurn(),
		},
	})
	want := "agent: Hello.\nuser: hours\nagent: At nine.\nuser: my booking\nagent: Table four.\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	// The handoff and the message come through separate streams, which
	// LiveKit does not order: either may be first.
	if err := res.State.ExpectTurn(1).ContainsHandoff("hours").ContainsMessage("At nine").Err(); err != nil {
		t.Error(err)
	}
	if err := res.State.ExpectTurn(2).
		NextEvent().IsToolCall("lookup_booking", map[string]any{"name": "ada"}).
		NextEvent().IsToolResultOf("lookup_booking", map[string]any{"table": 4}).
		NextEvent().IsMessageContaining(voicetest.RoleAgent, "Table four").
		Err(); err != nil {
		t.Error(err)
	}
	if err := res.State.Expect().ContainsToolCallWithResult("lookup_booking", map[string]any{"name": "ada"}, map[string]any{"table": 4}).Err(); err != nil {
		t.Error(err)
	}
	// The agent's states, in order, on the timeline: it listens, thinks
	// about each user turn and speaks.
	states := strings.Join(agentStates(res.Timeline), ", ")
	for _, want := range []string{"listening → speaking", "listening → thinking", "thinking → speaking", "speaking → listening"} {
		if !strings.Contains(states, want) {
			t.Errorf("agent states on the timeline: %s; want %q among them", states, want)
		}
	}
	// The HTML report shows them on its timeline.
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	if html := string(page); !strings.Contains(html, "agent state: thinking → speaking") {
		t.Error("the HTML report does not show the agent's state changes")
	}
	// Latency: per reply to the user, measured from the caller's last
	// audio into the room to the agent's first audible audio out of it.
	// (A reply that a loaded machine delivers before the runner has seen
	// the user's audio end gets none, so the count is not asserted.)
	if n := len(res.Latency.PerTurn); n == 0 || n > 2 {
		t.Errorf("%d latencies (%v), want 1 or 2", n, res.Latency.PerTurn)
	}
	for i, l := range res.Latency.PerTurn {
		if l <= 0 {
			t.Errorf("latency of turn %d = %v, want > 0", i+1, l)
		}
	}
	if ws := res.Metrics.Wire; ws == nil || ws.Adapter != "livekit" || ws.FramesIn == 0 || ws.FramesOut == 0 || ws.BytesIn == 0 || ws.BytesOut == 0 {
		t.Errorf("wire stats %+v, want frames and bytes both ways", ws)
	}
	jobs := w.Jobs()
	if len(jobs) != 1 || strings.Join(jobs[0].Heard, "|") != "hours|my booking" {
		t.Errorf("the agent's jobs: %+v, want one that heard both lines", jobs)
	}
}

// The user barges in while the agent speaks: the agent's VAD hears the
// overlapping speech, it stops, reports its reply interrupted, and
// answers the interruption.
func TestScenarioBargeIn(t *testing.T) {
	t.Parallel()
	beside(t)
	a, w := goAgent(t, lkagent.Config{Turns: []lkagent.Turn{
		{Reply: "Once upon a time there was a small restaurant by the sea, and every evening the cook made soup for the fishermen."},
		{Reply: "Sorry, {heard}."},
	}})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("tell me a story"),
			voicetest.Interrupt("stop please", voicetest.AfterWords(3)),
			voicetest.AgentTurn(),
		},
	})
	jobs := w.Jobs()
	if len(jobs) != 1 || jobs[0].Interrupted != 1 {
		t.Fatalf("the agent's jobs: %+v, want one reply interrupted", jobs)
	}
	var interrupted bool
	for _, e := range res.Timeline {
		interrupted = interrupted || e.Type == voicetest.EventAgentInterrupted
	}
	if !interrupted {
		t.Error("no agent_interrupted event on the timeline")
	}
	if len(res.Latency.InterruptResponse) != 1 {
		t.Errorf("interrupt responses %v, want one", res.Latency.InterruptResponse)
	}
	if got := res.State.LastAgentText(); got != "Sorry, stop please." {
		t.Errorf("the agent's last line %q, want its answer to the interruption", got)
	}
}

// The agent leaves the room after its reply: the runner sees the hang-up
// and the conversation ends there.
func TestScenarioHangUp(t *testing.T) {
	t.Parallel()
	besideChecks(t)
	a, _ := goAgent(t, lkagent.Config{Turns: []lkagent.Turn{{Reply: "Goodbye."}}, HangUpAfter: 1})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("that is all"),
			voicetest.AgentTurn(),
			voicetest.ExpectHangUp(),
		},
	})
	if res.Ended != "the agent hung up" {
		t.Errorf("ended %q, want the agent's hang-up", res.Ended)
	}
	if got := res.State.LastAgentText(); got != "Goodbye." {
		t.Errorf("last agent line %q", got)
	}
	var reason string
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventAgentHangUp {
			reason = e.Text
		}
	}
	if !strings.Contains(reason, "left the room") {
		t.Errorf("hang-up reason %q, want the agent leaving the room", reason)
	}
	if errors.Is(res.Err, voicetest.ErrTransportClosed) {
		t.Errorf("the hang-up ended the run with %v", res.Err)
	}
}

// An agent older than LiveKit Agents 1.0 publishes only legacy
// transcription packets: with LegacyTranscriptions they are its
// transcript (and its streams, had it any, are not read twice).
func TestLegacyTranscriptions(t *testing.T) {
	t.Parallel()
	beside(t)
	a, _ := goAgent(t, lkagent.Config{Turns: []lkagent.Turn{{Reply: "At nine."}}, LegacyTranscriptions: true})
	a.LegacyTranscriptions = true
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script:    []voicetest.Step{voicetest.UserSays("hours"), voicetest.AgentTurn()},
	})
	if got, want := res.TranscriptText(), "user: hours\nagent: At nine.\n"; got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}
