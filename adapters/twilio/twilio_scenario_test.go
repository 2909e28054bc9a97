package twilio_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestTwilioScenario runs the Twilio adapter through voicetest.Scenario
// against the loopback bot, for every combination of the runner's pacing
// and the adapter's line: greeting, two spoken turns, DTMF, and the bot
// hanging up after its third reply.
//
// It runs on virtual time, the bot in process over an in-memory network
// (memBot); the conformance suite's RealTimeConversation keeps Twilio on
// loopback TCP and the real clock.
func TestTwilioScenario(t *testing.T) {
	for _, pace := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		for _, line := range []twilio.Pacing{twilio.RealTime, twilio.Fast} {
			t.Run(pace.String()+"/"+line.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					bot, a := memBot(t, twiliobot.Config{Greeting: 300 * time.Millisecond, HangUpAfter: 3, ReplyDuration: 300 * time.Millisecond})
					a.Pacing = line
					// Used by the Fast line only: the 10 silent frames the bot's
					// VAD waits for, and no more, so that its reply cannot start
					// before EndUtterance returns.
					a.EndSilence = 200 * time.Millisecond
					capture := &adaptertest.SyncBuffer{}
					res := voicetest.Scenario(t, voicetest.Config{
						Agent: a, UserVoice: adaptertest.ToneTTS{}, Pacing: pace, Capture: capture,
						// With the Fast line the bot's reply can come within
						// microseconds of the end of the user's audio, so the
						// order of those timeline events is not stable enough
						// for a golden file; the RealTime line's is. The bot hangs
						// up the moment its last reply has played, within a
						// millisecond of the reply's modelled end, so the hang-up
						// is checked below rather than in the golden order.
						Golden: voicetest.GoldenOptions{Disable: line == twilio.Fast, Ignore: []voicetest.EventType{voicetest.EventAgentHangUp}},
						Script: []voicetest.Step{
							voicetest.AgentTurn(),
							voicetest.UserSays("hello"),
							voicetest.AgentTurn(),
							voicetest.DTMF("12#"),
							voicetest.AgentTurn(),
							voicetest.UserSays("bye"),
							voicetest.AgentTurn(),
						},
					})
					if !res.Success {
						t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
					}
					// Under the runner's PaceFast, a reply that comes while the
					// previous one is still playing in the timeline continues its
					// speech and gets no latency of its own. With the Fast line,
					// the bot may answer before the runner has recorded the end
					// of the user's audio, which also leaves the turn without one.
					wantLatencies := 2
					switch {
					case line == twilio.Fast:
						wantLatencies = 0
					case pace == voicetest.PaceFast:
						wantLatencies = 1
					}
					if res.Ended != "the agent hung up" || res.Turns != 2 || len(res.Latency.PerTurn) < wantLatencies {
						t.Errorf("ended %q after %d turns with latencies %v; want the bot's hang-up after 2 turns, with at least %d latencies", res.Ended, res.Turns, res.Latency.PerTurn, wantLatencies)
					}
					types := adaptertest.EventTypes(res, voicetest.EventData)
					// The hang-up follows the start of the last user turn (with the
					// Fast line the bot may answer, and hang up, before the runner
					// has recorded the end of that turn; the agent's audio may
					// still be playing in the timeline).
					if !strings.Contains(types, "dtmf") || strings.LastIndex(types, "agent_hang_up") < strings.LastIndex(types, "user_start_speaking") {
						t.Errorf("timeline %s lacks the DTMF or the final hang-up", types)
					}
					c := bot.Calls()[0]
					if len(c.Utterances) != 2 || c.DTMF != "12#" || len(c.Errors) > 0 {
						t.Errorf("bot heard %v, DTMF %q, errors %q", c.Utterances, c.DTMF, c.Errors)
					}
					if got, want := strings.Join(c.Echoes, ","), "greeting,reply-1,dtmf-12#,reply-2"; got != want {
						t.Errorf("marks echoed %s, want %s", got, want)
					}
					recs, err := wire.ReadCapture(strings.NewReader(string(capture.Bytes())))
					if err != nil || len(recs) < 10 {
						t.Errorf("capture through Config.Capture: %d records, %v", len(recs), err)
					}
				})
			})
		}
	}
}

// TestTwilioScenarioBargeIn interrupts the bot's long greeting: with no
// native interrupt, the runner barges in with overlapping audio and the bot
// answers with clear.
func TestTwilioScenarioBargeIn(t *testing.T) { synctest.Test(t, testTwilioScenarioBargeIn) }

func testTwilioScenarioBargeIn(t *testing.T) {
	bot, a := memBot(t, twiliobot.Config{Greeting: 3 * time.Second, ReplyDuration: 300 * time.Millisecond})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: a, UserVoice: adaptertest.ToneTTS{},
		// Where the runner places the greeting's stop depends on when the
		// bot's clear crosses the user's audio on the wire, which varies by
		// a few ms: the barge-in is asserted below instead of in a golden.
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.Interrupt("wait", voicetest.After(500*time.Millisecond)),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	types := adaptertest.EventTypes(res, voicetest.EventData)
	if !strings.Contains(types, "user_interrupt") || !strings.Contains(types, "agent_interrupted") {
		t.Errorf("timeline %s lacks the barge-in", types)
	}
	c := bot.Calls()[0]
	if c.Clears != 1 || len(c.Utterances) != 1 {
		t.Errorf("bot: %d clears, utterances %v; want one clear and one utterance", c.Clears, c.Utterances)
	}
}
