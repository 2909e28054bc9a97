package realtime_test

import (
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// The conversation-quality metrics measured against a remote agent: the
// Realtime adapter to the Realtime double, with the tolerances they had on
// the real clock, now on virtual time with the double in process over an
// in-memory network (adaptertest.MemNet). The conformance suite's
// RealTimeConversation and TestRealtimeScenario keep the adapter on the
// real clock over loopback TCP.

// TestRealtimeMetrics: the double greets and answers two turns, each reply
// 300 ms after the user's commit; its audio is fixtures.WordTones, 400 ms a
// word, so the agent speaks at 150 words a minute. Config.AgentSTT is a
// ToneSTT whose vocabulary hears "seventeen" as "then" (same pitch, and
// every other word its own): the agent's audio against its transcript is
// one substitution in ten words.
func TestRealtimeMetrics(t *testing.T) { synctest.Test(t, testRealtimeMetrics) }

func testRealtimeMetrics(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	peer := realtimepeer.New(t, realtimepeer.Config{
		Listener:   n.Listen(),
		Greeting:   "Hi welcome",
		ReplyDelay: 300 * time.Millisecond,
		Turns: []realtimepeer.Turn{
			{Reply: "Your table for seventeen is booked"},
			{Reply: "Great thanks"},
		},
	})
	a := realtimeAgent(peer)
	a.Greeting, a.NetDial = true, n.Dial
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: a, UserVoice: fixtures.FakeTTS(),
		AgentSTT: fixtures.ToneSTT("hi welcome your table for is booked great thanks then"), MeasureAgentWER: true,
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.UserSays("Thanks"),
			voicetest.AgentTurn(),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TimelineText())
	}
	m := res.Metrics
	t.Logf("latency %+v, TTFB %+v, first event %+v, speech %+v, pauses %v dead air %v", m.Latency, m.TTFB, m.FirstEvent, m.Speech, m.Pauses.Longest.Duration(), m.Pauses.DeadAir)

	// Latency, per turn and its percentiles: the double's 300 ms and the
	// loopback's few ms.
	if m.Latency.N != 2 {
		t.Fatalf("%d latencies measured, want 2", m.Latency.N)
	}
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"p50", m.Latency.P50}, {"p90", m.Latency.P90}, {"p95", m.Latency.P95}, {"p99", m.Latency.P99}, {"max", m.Latency.Max}} {
		adaptertest.WantDurationIn(t, "latency "+p.name, p.d, 300*time.Millisecond, 1500*time.Millisecond)
	}
	if res.Latency.P90 != m.Latency.P90 || res.Latency.Max != m.Latency.Max {
		t.Errorf("Result.Latency %+v disagrees with Metrics.Latency %+v", res.Latency, m.Latency)
	}
	// TTFB of each reply (and of the greeting, from the start of the call)
	// and the first event: the transcript delta comes with the audio.
	if m.TTFB.N != 3 || m.FirstEvent.N != 3 {
		t.Fatalf("TTFB over %d turns, first event over %d, want 3 each", m.TTFB.N, m.FirstEvent.N)
	}
	for _, tm := range m.Turns[1:] {
		adaptertest.WantDurationIn(t, "TTFB", tm.TTFB, 300*time.Millisecond, 1500*time.Millisecond)
		if tm.FirstEvent > tm.TTFB || tm.FirstEvent < 300*time.Millisecond {
			t.Errorf("turn %d: first event %v, TTFB %v: the first event comes first, after the 300 ms", tm.Turn, tm.FirstEvent, tm.TTFB)
		}
	}
	// Pauses: the longest is a wait for a reply.
	adaptertest.WantDurationIn(t, "longest pause", m.Pauses.Longest.Duration(), 300*time.Millisecond, 1500*time.Millisecond)
	if m.Pauses.Longest.After != voicetest.RoleUser || m.Pauses.Longest.Before != voicetest.RoleAgent || m.Pauses.Unfilled != 0 {
		t.Errorf("longest pause %+v, %d unfilled", m.Pauses.Longest, m.Pauses.Unfilled)
	}
	adaptertest.WantDurationIn(t, "dead air", m.Pauses.DeadAir, 600*time.Millisecond, 4*time.Second)
	if m.TalkOver.Count != 0 {
		t.Errorf("talk-over %+v in a polite conversation", m.TalkOver)
	}
	// Speech: 150 words a minute; ten words in three turns.
	if s := m.Speech; math.Abs(s.AgentWPM-150) > 15 || s.AgentWords != 10 || s.AgentTurns != 3 || s.UserWords != 6 {
		t.Errorf("speech %+v, want about 150 words a minute, 10 agent words in 3 turns, 6 user words", s)
	}
	// WER: "seventeen" heard as "then".
	w := m.Speech.WER
	if w == nil || w.Messages != 3 || math.Abs(w.Rate-0.1) > 0.05 {
		t.Fatalf("WER %+v, want about 1 edit in 10 words over 3 messages", w)
	}
	if h := w.Worst.Heard; h == nil || !strings.Contains(h.Text, "for then is") {
		t.Errorf("worst message %+v", w.Worst)
	}
	// Wire: every frame counted; nothing cancelled or cleared.
	wire := m.Wire
	if wire == nil || wire.Adapter != "openai-realtime" || wire.FramesIn < 20 || wire.FramesOut < 50 || wire.BytesIn <= wire.FramesIn ||
		wire.Cancels != 0 || wire.Clears != 0 || wire.DroppedFrames != 0 {
		t.Errorf("wire %+v", wire)
	}
	if m.LateAudio.Count != 0 {
		t.Errorf("late audio %+v from a double that streams as fast as the socket takes", m.LateAudio)
	}
	if m.Parts.LLM.N != 0 {
		t.Errorf("parts %+v: the Realtime protocol reports none", m.Parts)
	}
}

// TestRealtimeMetricsBargeInAndStalls: a barge-in through the native
// cancel is counted on the wire (a response.cancel sent, a cancelled
// response received) and, the caller's audio stopping at once, makes no
// talk-over; a double that streams its 100 ms audio deltas 200 ms apart
// stalls its replies: late audio, about 100 ms a delta.
func TestRealtimeMetricsBargeInAndStalls(t *testing.T) {
	synctest.Test(t, testRealtimeMetricsBargeInAndStalls)
}

func testRealtimeMetricsBargeInAndStalls(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	peer := realtimepeer.New(t, realtimepeer.Config{
		Listener:   n.Listen(),
		Greeting:   strings.Repeat("la ", 20),
		ChunkDelay: 200 * time.Millisecond,
		Turns:      []realtimepeer.Turn{{Reply: "Sure, {heard}"}},
	})
	a := realtimeAgent(peer)
	a.Greeting, a.NetDial = true, n.Dial
	res := adaptertest.BargeInScenario(t, a)
	m := res.Metrics
	if w := m.Wire; w == nil || w.Cancels != 1 || w.Clears != 1 {
		t.Errorf("wire %+v, want one cancel and one cleared response", w)
	}
	if len(m.TalkOver.BargeIns) != 1 || !m.TalkOver.BargeIns[0].Quiet || !m.TalkOver.BargeIns[0].Answered {
		t.Fatalf("barge-ins %+v", m.TalkOver.BargeIns)
	}
	b := m.TalkOver.BargeIns[0]
	adaptertest.WantDurationIn(t, "barge-in to quiet", b.ToQuiet, 0, time.Second)
	adaptertest.WantDurationIn(t, "barge-in to answer", b.ToAnswer, b.ToQuiet, 10*time.Second)
	if m.TalkOver.ByUser.Time > 100*time.Millisecond {
		t.Errorf("talk-over %+v: the native cancel stops the agent's audio at once", m.TalkOver)
	}
	// The greeting played 400 ms before the barge-in (4 deltas, 3 gaps);
	// the reply "Sure, Make it eight" is 4 words, 16 deltas, 15 gaps.
	if m.LateAudio.Count < 10 || m.LateAudio.Count > 20 {
		t.Errorf("late audio %+v, want about 18 stalls", m.LateAudio)
	}
	adaptertest.WantDurationIn(t, "late audio gap", m.LateAudio.Gap, time.Duration(m.LateAudio.Count)*60*time.Millisecond, time.Duration(m.LateAudio.Count)*200*time.Millisecond)
}
