package voicetest_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// tapAgent wraps an agent and keeps every audio frame the runner sends,
// with the time it was sent (virtual time in a bubble).
type tapAgent struct {
	voicetest.Agent
	mu     sync.Mutex
	start  time.Time
	frames []tapFrame
}

type tapFrame struct {
	at time.Duration
	c  pcm.Chunk
}

func (a *tapAgent) VirtualTime() bool { return true }

func (a *tapAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	a.start = time.Now()
	return &tapConn{Conn: c, a: a}, nil
}

type tapConn struct {
	voicetest.Conn
	a *tapAgent
}

func (c *tapConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	c.a.mu.Lock()
	c.a.frames = append(c.a.frames, tapFrame{at: time.Since(c.a.start), c: ch.Clone()})
	c.a.mu.Unlock()
	return c.Conn.SendAudio(ctx, ch)
}

// levelBetween returns the RMS (dBFS) of the frames sent in [from, to),
// and how much audio that was.
func (a *tapAgent) levelBetween(from, to time.Duration) (float64, time.Duration) {
	var sum float64
	var n int
	var d time.Duration
	for _, f := range a.frames {
		if f.at >= from && f.at < to {
			for _, v := range f.c.Samples {
				sum += float64(v) * float64(v)
			}
			n += f.c.Len()
			d += f.c.Duration()
		}
	}
	if n == 0 {
		return math.Inf(-1), 0
	}
	return pcm.DBFS(math.Sqrt(sum / float64(n))), d
}

// TestBackgroundPlaysThroughout: a cafe at −30 dBFS is on the line under
// the user's speech, through Silence, and while the agent speaks, but not
// during Sleep; without a Background nothing is sent between turns.
func TestBackgroundPlaysThroughout(t *testing.T) {
	run := func(bg voicetest.Background) (*tapAgent, *voicetest.Result) {
		tap := &tapAgent{Agent: fixtures.ScriptedAgent(
			fixtures.Reply{Text: "one two three four five six seven eight", Latency: 300 * time.Millisecond})}
		res, err := runVirtual(t, voicetest.Config{
			Agent: tap, UserVoice: &toneTTS{}, Background: bg,
			Script: []voicetest.Step{
				voicetest.UserSays("hello there"),  // 0.0–0.8 s
				voicetest.AgentTurn(),              // agent 1.1–4.3 s, then tail
				voicetest.Silence(2 * time.Second), // a silent caller
				voicetest.Sleep(time.Second),       // nothing at all
				voicetest.UserSays("bye"),
			},
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return tap, res
	}
	tap, res := run(voicetest.Background{Scene: pcm.Cafe(), Level: -30, Seed: 1})
	var agentStart, agentStop, silenceAt, sleepAt time.Duration
	for _, e := range res.Timeline {
		switch e.Type {
		case voicetest.EventAgentStartSpeaking:
			agentStart = e.At
		case voicetest.EventAgentStopSpeaking:
			agentStop = e.At
		case voicetest.EventSilence:
			silenceAt = e.At
		case voicetest.EventSleep:
			sleepAt = e.At
		}
	}
	during, d := tap.levelBetween(agentStart, agentStop)
	t.Logf("while the agent spoke (%v–%v): %v of audio at %.1f dBFS", agentStart, agentStop, d, during)
	if d < agentStop-agentStart-100*time.Millisecond || math.Abs(during+30) > 3 {
		t.Errorf("while the agent spoke: %v of audio at %.1f dBFS, want the whole %v of cafe at −30 dBFS", d, during, agentStop-agentStart)
	}
	sil, d := tap.levelBetween(silenceAt, silenceAt+2*time.Second)
	if d != 2*time.Second || math.Abs(sil+30) > 3 {
		t.Errorf("during Silence: %v of audio at %.1f dBFS, want 2s of cafe at −30 dBFS", d, sil)
	}
	if _, d := tap.levelBetween(sleepAt, sleepAt+time.Second); d != 0 {
		t.Errorf("during Sleep: %v of audio sent, want none", d)
	}
	// The user's own segment carries the scene under the voice: its
	// quiet gaps between words are not digital silence.
	first := res.Recording.Segments[0]
	if first.Role != voicetest.RoleUser || pcm.Peak(first.Audio().Slice(380*time.Millisecond, 400*time.Millisecond)) == 0 {
		t.Errorf("the user's first segment has digital silence between its words; want the cafe under it")
	}

	// The Silence carried the cafe, so it is in the recording.
	found := false
	for _, sg := range res.Recording.Segments {
		if sg.Role == voicetest.RoleUser && sg.Start == silenceAt {
			found = sg.End-sg.Start == 2*time.Second && sg.Text == "" && pcm.Peak(sg.Audio()) > 0
		}
	}
	if !found {
		t.Errorf("no user segment of 2s of cafe at the Silence (%v)", silenceAt)
	}

	clean, cleanRes := run(voicetest.Background{})
	for _, sg := range cleanRes.Recording.Segments {
		if sg.Start == silenceAt && sg.Role == voicetest.RoleUser {
			t.Error("without a Background a Silence is recorded as a segment; want none, as before")
		}
	}
	if _, d := clean.levelBetween(agentStart, agentStop); d != 0 {
		t.Errorf("without a Background, %v of audio was sent while the agent spoke; want none", d)
	}
	if lv, _ := clean.levelBetween(silenceAt, silenceAt+2*time.Second); !math.IsInf(lv, -1) {
		t.Errorf("without a Background, Silence sent audio at %.1f dBFS; want digital silence", lv)
	}
}

// TestBackgroundContinuity: the scene runs on seamlessly from silence
// into the user's speech and the gap after it: what was sent, minus the
// user's voice, is one stream of the scene.
func TestBackgroundContinuity(t *testing.T) {
	tap := &tapAgent{Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "yes", Latency: 200 * time.Millisecond})}
	_, err := runVirtual(t, voicetest.Config{
		Agent: tap, UserVoice: &toneTTS{}, Background: voicetest.Background{Scene: pcm.Car(), Level: -30, Seed: 9},
		Script: []voicetest.Step{
			voicetest.Silence(500 * time.Millisecond), voicetest.UserSays("one two"),
			voicetest.AgentTurn(), voicetest.Silence(500 * time.Millisecond),
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var sent []int16
	for _, f := range tap.frames {
		sent = append(sent, f.c.Samples...)
	}
	want := pcm.Car().Stream(pcm.DefaultRate, -30, 9).Read(len(sent)).Samples
	voice := fixtures.WordTones("one two", pcm.DefaultRate)
	nonzero := 0
	for _, v := range voice.Samples {
		if v != 0 {
			nonzero++
		}
	}
	diff, first, last := 0, -1, -1
	for i := range sent {
		if sent[i] != want[i] {
			diff++
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	t.Logf("%d of %d samples sent differ from the scene alone, from %v to %v; the voice has %d non-zero samples",
		diff, len(sent), pcm.DurationOf(first, pcm.DefaultRate), pcm.DurationOf(last, pcm.DefaultRate), nonzero)
	if diff == 0 || diff > nonzero {
		t.Errorf("%d samples differ from one continuous scene stream, want 1 to %d (the voice's)", diff, nonzero)
	}
	if start := pcm.DurationOf(first, pcm.DefaultRate); start < 500*time.Millisecond || start > 520*time.Millisecond {
		t.Errorf("the first difference is at %v, want where the voice starts (500 ms)", start)
	}
	if end := pcm.DurationOf(last, pcm.DefaultRate); end > 500*time.Millisecond+voice.Duration() {
		t.Errorf("the last difference is at %v, after the voice ended (%v): the scene did not continue seamlessly", end, 500*time.Millisecond+voice.Duration())
	}
	if len(sent) < pcm.SamplesFor(pcm.DefaultRate, 2*time.Second) {
		t.Errorf("only %v sent; want the silences, the voice and the scene during the agent's reply", pcm.DurationOf(len(sent), pcm.DefaultRate))
	}
}

// TestBackgroundLine: Line shapes the voice and the scene together, and
// without a Scene it still applies to the voice.
func TestBackgroundLine(t *testing.T) {
	tap := &tapAgent{Agent: fixtures.SilentAgent()}
	res, err := runVirtual(t, voicetest.Config{
		Agent: tap, UserVoice: &toneTTS{}, Background: voicetest.BackgroundOf(pcm.NoisyCafeOnCellPhone(3), 3),
		Effects: pcm.WhiteNoise(0, 1), // full-band hiss the line must cut
		Script:  []voicetest.Step{voicetest.UserSays("one two three four five"), voicetest.Silence(2 * time.Second)},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var all []int16
	for _, f := range tap.frames {
		all = append(all, f.c.Samples...)
	}
	c := pcm.Chunk{Rate: pcm.DefaultRate, Samples: all}
	// The cell phone's codec leaves nothing above 4 kHz: an unfiltered
	// cafe would have plenty.
	// cafe would have plenty. What a linear-phase round trip through
	// 8 kHz removes is the part above 4 kHz.
	nb, err := pcm.Resample(c, pcm.Rate8k)
	if err != nil {
		t.Fatal(err)
	}
	back, err := pcm.Resample(nb, pcm.DefaultRate)
	if err != nil {
		t.Fatal(err)
	}
	hi := c.Clone()
	pcm.MixInto(hi.Samples, back.Samples, -1)
	if d := pcm.DBFS(pcm.RMS(hi)) - pcm.DBFS(pcm.RMS(c)); d > -30 {
		t.Errorf("above 4 kHz the line carries %.1f dB of its level, want ≤ −30 (a narrowband phone)", d)
	}
	if len(res.Recording.Segments) == 0 {
		t.Fatal("no segments")
	}
}

// TestBackgroundValidation: a positive level is refused.
func TestBackgroundValidation(t *testing.T) {
	_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), Background: voicetest.Background{Scene: pcm.Cafe(), Level: 3}})
	if err == nil || !strings.Contains(err.Error(), "Config.Background.Level") {
		t.Errorf("Run with Background.Level 3: %v, want an error naming Config.Background.Level", err)
	}
}
