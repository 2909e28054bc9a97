package voicetest_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// speedTTS is a test-double TTS that records the requests it gets.
type speedTTS struct {
	mu   sync.Mutex
	reqs []voicetest.SpeechRequest
}

func (s *speedTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return fixtures.WordTones(req.Text, req.Rate), nil
}

func TestUtteranceSpeedReachesTTS(t *testing.T) {
	tts := &speedTTS{}
	speeds := []float64{1.25, 0}
	i := 0
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		if i >= len(speeds) {
			return voicetest.Utterance{Done: true}, nil
		}
		i++
		return voicetest.Utterance{Text: "hello there", Speed: speeds[i-1]}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "Hi"}, fixtures.Reply{Text: "Bye"}),
		UserVoice: tts,
		User:      user,
		Script:    []voicetest.Step{voicetest.Proceed(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 {
		t.Fatalf("turns = %d, want 2", res.Turns)
	}
	if len(tts.reqs) != 2 {
		t.Fatalf("TTS asked %d times, want 2", len(tts.reqs))
	}
	for k, want := range speeds {
		if got := tts.reqs[k].Speed; got != want {
			t.Errorf("request %d: Speed = %v, want %v", k, got, want)
		}
	}
}

// impatientUser is a test-double User and Interrupter: it says its lines
// in order and barges in on the agent's replies to the turns listed in
// interruptOn, after the given delay.
type impatientUser struct {
	lines       []string
	next        int
	interruptOn map[int]bool
	after       time.Duration
	asked       []int // turns InterruptDecision was asked at
}

func (u *impatientUser) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if u.next >= len(u.lines) {
		return voicetest.Utterance{Done: true}, nil
	}
	u.next++
	return voicetest.Utterance{Text: u.lines[u.next-1]}, nil
}

func (u *impatientUser) InterruptDecision(st *voicetest.State) (bool, time.Duration) {
	u.asked = append(u.asked, st.Turn())
	return u.interruptOn[st.Turn()], u.after
}

var _ voicetest.Interrupter = (*impatientUser)(nil)

func TestProceedInterrupterBargesIn(t *testing.T) {
	user := &impatientUser{
		lines:       []string{"hi", "stop please", "thanks"},
		interruptOn: map[int]bool{1: true},
		after:       500 * time.Millisecond,
	}
	run := func() *voicetest.Result {
		res, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.InterruptibleAgent(
				fixtures.Reply{Text: "one two three four five", Latency: 300 * time.Millisecond},
				fixtures.Reply{Text: "okay", Latency: 200 * time.Millisecond},
				fixtures.Reply{Text: "bye", Latency: 200 * time.Millisecond},
			),
			UserVoice: &toneTTS{},
			User:      user,
			Script:    []voicetest.Step{voicetest.Proceed(2)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	// Proceed first waits Timeouts.Greeting (3 s) for a greeting. Turn 1:
	// "hi" (400 ms), the agent answers 300 ms later; 500 ms into its
	// reply the user barges in with turn 2, which the agent answers; then
	// the second Proceed turn says "thanks".
	wantTimeline := `   3000ms turn 1 user_start_speaking
   3400ms turn 1 user_stop_speaking
   3700ms turn 1 agent_start_speaking latency=300ms
   4200ms turn 1 user_interrupt "stop please"
   4200ms turn 1 agent_stop_speaking
   4200ms turn 2 user_start_speaking
   4200ms turn 2 agent_interrupted
   5000ms turn 2 user_stop_speaking
   5200ms turn 2 agent_start_speaking latency=200ms
   5600ms turn 2 agent_stop_speaking
   5600ms turn 3 user_start_speaking
   6000ms turn 3 user_stop_speaking
   6200ms turn 3 agent_start_speaking latency=200ms
   6600ms turn 3 agent_stop_speaking
`
	if got := res.TimelineText(); got != wantTimeline {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, wantTimeline)
	}
	wantTranscript := "user: hi\nagent: one two\nuser: stop please\nagent: okay\nuser: thanks\nagent: bye\n"
	if got := res.TranscriptText(); got != wantTranscript {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, wantTranscript)
	}
	if len(res.Latency.InterruptResponse) != 1 {
		t.Errorf("interrupt responses = %v, want one", res.Latency.InterruptResponse)
	}
	if !res.Transcript[1].Interrupted {
		t.Errorf("the agent's first reply is not marked interrupted: %+v", res.Transcript[1])
	}
	// Asked once per Proceed turn, after the user's utterance was sent.
	if got := user.asked; len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("InterruptDecision asked at turns %v, want [1 3]", got)
	}
}

func TestProceedInterrupterRespectsMaxTurns(t *testing.T) {
	user := &impatientUser{lines: []string{"hi", "stop"}, interruptOn: map[int]bool{1: true}}
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.InterruptibleAgent(fixtures.Reply{Text: "one two three", Latency: 100 * time.Millisecond}),
		UserVoice: &toneTTS{},
		User:      user,
		MaxTurns:  1,
		Script:    []voicetest.Step{voicetest.Proceed(0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 1 || len(user.asked) != 0 {
		t.Errorf("turns = %d, InterruptDecision asked %v: the last allowed turn must not barge in", res.Turns, user.asked)
	}
	if strings.Contains(res.TimelineText(), "user_interrupt") {
		t.Errorf("interrupted past MaxTurns:\n%s", res.TimelineText())
	}
}

func TestProceedInterrupterWithNothingToSay(t *testing.T) {
	// The User decides to barge in but has no line left: the agent just
	// answers and the conversation ends as the user is done.
	user := &impatientUser{lines: []string{"hi"}, interruptOn: map[int]bool{1: true}}
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.InterruptibleAgent(fixtures.Reply{Text: "one two three", Latency: 100 * time.Millisecond}),
		UserVoice: &toneTTS{},
		User:      user,
		Script:    []voicetest.Step{voicetest.Proceed(3)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != "the user hung up" || res.Turns != 1 {
		t.Errorf("ended %q after %d turns, want the user to hang up after 1", res.Ended, res.Turns)
	}
}
