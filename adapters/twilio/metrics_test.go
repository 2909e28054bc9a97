package twilio_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestTwilioMetrics measures a phone call over the Twilio adapter against
// the loopback bot, within the tolerances it had on the real clock, now on
// virtual time with the bot in process (a MemNet): the user barges
// in on the bot's 3 s greeting, the bot hears it and clears (talk-over by
// the user, the bot giving way), answers it and a second utterance, each
// 300 ms after its 200 ms of end-of-speech silence, with 600 ms tones
// followed by marks that the adapter echoes once they have played. The
// conformance suite's RealTimeConversation and TestTwilioScenario keep
// the Twilio adapter on the real clock over TCP.
func TestTwilioMetrics(t *testing.T) { synctest.Test(t, testTwilioMetrics) }

func testTwilioMetrics(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen(), Greeting: 3 * time.Second, ReplyDelay: 300 * time.Millisecond, ReplyDuration: 600 * time.Millisecond})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: memAgent(bot.URL, n), UserVoice: adaptertest.ToneTTS{},
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.Interrupt("wait", voicetest.After(500*time.Millisecond)),
			voicetest.AgentTurn(),
			voicetest.UserSays("hello"),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	m := res.Metrics
	t.Logf("talk-over %+v\npauses %+v\nlatency %+v\nwire %+v", m.TalkOver, m.Pauses, m.Latency, m.Wire)

	// Talk-over: the user's barge-in, until the bot's clear arrives.
	to := m.TalkOver
	if to.Count != 1 || to.ByUser.Count != 1 || to.ByAgent.Count != 0 || to.AgentYielded != 1 {
		t.Fatalf("talk-over %+v, want one, by the user, the agent giving way", to)
	}
	adaptertest.WantDurationIn(t, "talk-over", to.Time, 20*time.Millisecond, time.Second)
	if len(to.BargeIns) != 1 || !to.BargeIns[0].Quiet || !to.BargeIns[0].Answered {
		t.Fatalf("barge-ins %+v", to.BargeIns)
	}
	b := to.BargeIns[0]
	// The barge-in is noted just before the user's first frame goes out.
	if d := b.ToQuiet - to.Time; d < 0 || d > 10*time.Millisecond {
		t.Errorf("the agent went quiet %v after the barge-in, but the talk-over lasted %v", b.ToQuiet, to.Time)
	}
	// The answer: the 300 ms "wait", 200 ms of silence, 300 ms of thought.
	adaptertest.WantDurationIn(t, "barge-in to answer", b.ToAnswer, 800*time.Millisecond, 2500*time.Millisecond)

	// Latency of both replies: 200 ms of silence detection and 300 ms.
	if m.Latency.N != 2 {
		t.Fatalf("latency over %d replies, want 2", m.Latency.N)
	}
	for _, d := range []time.Duration{m.Latency.P50, m.Latency.P90, m.Latency.P95, m.Latency.P99, m.Latency.Max} {
		adaptertest.WantDurationIn(t, "latency percentile", d, 450*time.Millisecond, 1500*time.Millisecond)
	}
	for _, tm := range m.Turns[1:] {
		adaptertest.WantDurationIn(t, "TTFB", tm.TTFB, 450*time.Millisecond, 1500*time.Millisecond)
	}
	// Pauses: the two waits for a reply, nothing left unanswered.
	if len(m.Pauses.Spans) < 2 || m.Pauses.Unfilled != 0 {
		t.Errorf("pauses %+v", m.Pauses)
	}
	adaptertest.WantDurationIn(t, "longest pause", m.Pauses.Longest.Duration(), 450*time.Millisecond, 1500*time.Millisecond)
	adaptertest.WantDurationIn(t, "dead air", m.Pauses.DeadAir, 900*time.Millisecond, 4*time.Second)

	// The wire: three marks (greeting, two replies), each echoed; the
	// greeting's at once (cleared), the replies' once their 600 ms played.
	w := m.Wire
	if w == nil || w.Adapter != "twilio" || w.MarksReceived != 3 || w.MarksEchoed != 3 || w.Clears != 1 || w.Cancels != 0 || w.MarksSent != 0 {
		t.Fatalf("wire %+v, want 3 marks received and echoed and one clear", w)
	}
	if w.MarkDelay.N != 3 {
		t.Errorf("mark delays over %d marks", w.MarkDelay.N)
	}
	adaptertest.WantDurationIn(t, "slowest mark echo", w.MarkDelay.Max, 450*time.Millisecond, 1500*time.Millisecond)
	// 20 ms media frames each way: the user spoke 600 ms, and the line
	// carries silence between.
	if w.FramesOut < 30 || w.FramesIn < 30 || w.BytesIn <= w.FramesIn || w.DroppedFrames != 0 {
		t.Errorf("frames in %d (%d bytes), out %d, dropped %d", w.FramesIn, w.BytesIn, w.FramesOut, w.DroppedFrames)
	}
	c := bot.Calls()[0]
	if c.Clears != 1 || len(c.Echoes) != 3 {
		t.Errorf("the bot sent %d clears and got %d echoes, want 1 and 3", c.Clears, len(c.Echoes))
	}
}

// pausedTTS "says" every line as a 300 ms tone, 300 ms of silence and a
// 1 s tone: a caller who pauses mid-sentence.
type pausedTTS struct{}

func (pausedTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	c := adaptertest.Tone(pcm.DefaultRate, 440, 300*time.Millisecond, 9000)
	c.Samples = append(c.Samples, pcm.Silence(pcm.DefaultRate, 300*time.Millisecond).Samples...)
	c.Samples = append(c.Samples, adaptertest.Tone(pcm.DefaultRate, 440, time.Second, 9000).Samples...)
	return c, nil
}

// TestTwilioMetricsAgentTalksOver: the caller pauses mid-sentence; the
// bot takes its 200 ms of silence for the end and answers at once, over
// the rest of the sentence, hears the caller and clears: talk-over
// started by the agent, the agent giving way.
func TestTwilioMetricsAgentTalksOver(t *testing.T) { synctest.Test(t, testTwilioMetricsAgentTalksOver) }

func testTwilioMetricsAgentTalksOver(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen(), ReplyDuration: 600 * time.Millisecond})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: memAgent(bot.URL, n), UserVoice: pausedTTS{},
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{voicetest.UserSays("I would like, um, a table"), voicetest.AgentTurn(voicetest.AllowSilence())},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	to := res.Metrics.TalkOver
	t.Logf("talk-over %+v\n%s", to, res.TimelineText())
	if to.Count < 1 || to.ByAgent.Count != to.Count || to.ByUser.Count != 0 || to.AgentYielded < 1 {
		t.Fatalf("talk-over %+v, want the agent's, the agent giving way", to)
	}
	// It started 500 ms in (300 ms of speech, 200 ms of silence) and ended
	// when the clear came: three voiced frames into the second part.
	s := to.Spans[0]
	adaptertest.WantDurationIn(t, "talk-over start", s.Start, 500*time.Millisecond, 1200*time.Millisecond)
	adaptertest.WantDurationIn(t, "talk-over", to.ByAgent.Time, 20*time.Millisecond, 700*time.Millisecond)
	if w := res.Metrics.Wire; w == nil || w.Clears != 1 {
		t.Errorf("wire %+v, want one clear", w)
	}
}

// TestTwilioMetricsUnfilledGap: the caller says something, stays silent
// 600 ms (the bot, which waits for a whole second of silence, says
// nothing) and speaks again: a pause the agent left unfilled.
func TestTwilioMetricsUnfilledGap(t *testing.T) { synctest.Test(t, testTwilioMetricsUnfilledGap) }

func testTwilioMetricsUnfilledGap(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen(), SilenceFrames: 50, ReplyDuration: 300 * time.Millisecond})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: memAgent(bot.URL, n), UserVoice: adaptertest.ToneTTS{},
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("hello"),
			voicetest.Silence(600 * time.Millisecond),
			voicetest.UserSays("anyone there"),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	p := res.Metrics.Pauses
	t.Logf("pauses %+v", p)
	if p.Unfilled != 1 {
		t.Fatalf("%d unfilled pauses, want 1: %+v", p.Unfilled, p.Spans)
	}
	adaptertest.WantDurationIn(t, "longest unfilled", p.LongestUnfilled, 550*time.Millisecond, 900*time.Millisecond)
	// The bot's answer: after its second of silence.
	adaptertest.WantDurationIn(t, "latency", res.Metrics.Latency.Max, time.Second, 2500*time.Millisecond)
}

// memAgent is twilio.New(url) reaching its bot through n.
func memAgent(url string, n *adaptertest.MemNet) *twilio.Agent {
	a := twilio.New(url)
	a.NetDial = n.Dial
	return a
}
