package voicetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// slowSTT is a test double: lengthSTT that takes delay (of virtual time
// under synctest) to answer, or fails with err, and counts its calls.
type slowSTT struct {
	delay time.Duration
	err   error
	calls int
}

func (s *slowSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	s.calls++
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return voicetest.Transcription{}, ctx.Err()
	}
	if s.err != nil {
		return voicetest.Transcription{}, s.err
	}
	return lengthSTT{}.Transcribe(ctx, req)
}

func audioOnlyTwoTurns() *fixtures.FakeAgent {
	return fixtures.AudioOnlyAgent(
		fixtures.Reply{Text: "one two three", Latency: 400 * time.Millisecond},
		fixtures.Reply{Text: "four", Latency: 400 * time.Millisecond},
	)
}

// TestSlowAgentSTTDoesNotDelayTheUser: transcribing the agent's audio
// takes 2 s, but a scripted user answers as soon as the agent's turn is
// over (tail silence), as a person on the phone would; the transcript still
// holds every turn's text.
func TestSlowAgentSTTDoesNotDelayTheUser(t *testing.T) {
	stt := &slowSTT{delay: 2 * time.Second}
	var seen []string
	res, err := runVirtual(t, voicetest.Config{
		Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: stt,
		Script: []voicetest.Step{
			voicetest.UserSays("hi"), voicetest.AgentTurn(),
			voicetest.UserSays("and"), voicetest.AgentTurn(),
			// A Check reads the conversation: it sees both texts.
			voicetest.Check(func(st *voicetest.State) error {
				for _, m := range st.Transcript() {
					seen = append(seen, m.Text)
				}
				return nil
			}),
			voicetest.UserSays("bye"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    800ms turn 1 agent_start_speaking latency=400ms
   2000ms turn 1 agent_stop_speaking
   2600ms turn 2 user_start_speaking
   3000ms turn 2 user_stop_speaking
   3400ms turn 2 agent_start_speaking latency=400ms
   3800ms turn 2 agent_stop_speaking
`
	// The Check waited for the second transcription, which ran after the
	// first (a run's transcriptions go one at a time): the first took
	// 2600..4600 ms, the second 4600..6600 ms, so "bye" starts at 6600 ms.
	want += `   6600ms turn 3 user_start_speaking
   7000ms turn 3 user_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	// lengthSTT hears the agent's audio without its edge silence: the
	// three 320 ms tones of "one two three" in their 400 ms slots, less
	// the silent first sample, are 1119 ms.
	if got, wantTr := res.TranscriptText(), "user: hi\nagent: heard 1119ms\nuser: and\nagent: heard 319ms\nuser: bye\n"; got != wantTr {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, wantTr)
	}
	if strings.Join(seen, "|") != "hi|heard 1119ms|and|heard 319ms" {
		t.Errorf("the Check saw %q, want every text filled in", seen)
	}
	for _, s := range res.Recording.Segments {
		if s.Role == voicetest.RoleAgent && !strings.HasPrefix(s.Text, "heard ") {
			t.Errorf("agent segment of turn %d has text %q, want its transcription", s.Turn, s.Text)
		}
	}
	if stt.calls != 2 {
		t.Errorf("STT called %d times, want 2", stt.calls)
	}
}

// TestUserWaitsForTheAgentTranscript: a User (persona) decides from what
// the agent said, so it is asked only once the agent's turn is
// transcribed.
func TestUserWaitsForTheAgentTranscript(t *testing.T) {
	stt := &slowSTT{delay: time.Second}
	var heard []string
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		if st.Turn() == 0 {
			return voicetest.Utterance{Text: "hi"}, nil
		}
		if st.Turn() >= 2 {
			return voicetest.Utterance{Done: true}, nil
		}
		heard = append(heard, st.LastAgentText())
		return voicetest.Utterance{Text: "ok"}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: stt, User: user,
		Script: []voicetest.Step{voicetest.Proceed(0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 || heard[0] != "heard 1119ms" {
		t.Errorf("the user heard %q, want the transcription of the agent's first turn", heard)
	}
	// No greeting: the user speaks after Timeouts.Greeting (3 s); the
	// agent's turn 1 ends at 5000 ms + 600 ms of tail silence, and 1 s of
	// STT later the user speaks again.
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventUserStartSpeaking && e.Turn == 2 && e.At != ms(6600) {
			t.Errorf("the user's second turn started at %v, want 6.6s:\n%s", e.At, res.TimelineText())
		}
	}
}

// TestAgentSTTFailures: a failing or hanging transcription fails the
// scenario with an error naming the turn (a *TimeoutError in the
// transcribe phase for a hang), and leaves no goroutine behind.
func TestAgentSTTFailures(t *testing.T) {
	boom := errors.New("engine exploded")
	t.Run("error", func(t *testing.T) {
		res, err := runVirtual(t, voicetest.Config{
			Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: &slowSTT{delay: 10 * time.Millisecond, err: boom},
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(), voicetest.UserSays("and"), voicetest.AgentTurn()},
		})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "transcribing the agent's turn 1 (1.12s of audio, its edge silence trimmed) with Config.AgentSTT") {
			t.Fatalf("err = %v, want the STT's error naming turn 1", err)
		}
		if res == nil || res.Success {
			t.Errorf("result %+v, want a failed one", res)
		}
	})
	t.Run("hang", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{
			Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: &slowSTT{delay: time.Hour},
			Timeouts: voicetest.Timeouts{Engine: 5 * time.Second},
			Script:   []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(), voicetest.Verdict()},
			Judge:    criteriaJudge(allPass),
		})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseTranscribe || te.Timeout != 5*time.Second || te.Turn != 1 {
			t.Fatalf("err = %v, want a transcribe-phase *TimeoutError of 5s in turn 1", err)
		}
		var se *voicetest.StepError
		if !errors.As(err, &se) || se.Step != "Verdict()" {
			t.Errorf("err = %v, want it reported by the Verdict step, the first to read the transcript", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		// A panicking engine runs on the runner's goroutine for STT: the
		// panic becomes the scenario's error, not a crash of the binary.
		stt := voicetest.STT(sttFunc(func(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
			panic("engine bug")
		}))
		_, err := runVirtual(t, voicetest.Config{
			Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: stt,
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
		})
		if err == nil || !strings.Contains(err.Error(), "transcribing the agent's turn 1 (1.12s of audio, its edge silence trimmed) with Config.AgentSTT: Config.AgentSTT panicked: engine bug") {
			t.Fatalf("err = %v, want the panic as an error naming turn 1", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		// The test's context ends while a transcription runs: Run returns
		// and the STT goroutine is gone (leakcheck in TestMain).
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stt := voicetest.STT(sttFunc(func(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
				cancel()
				<-ctx.Done()
				return voicetest.Transcription{}, ctx.Err()
			}))
			_, err := voicetest.Run(ctx, voicetest.Config{
				Agent: audioOnlyTwoTurns(), UserVoice: &toneTTS{}, AgentSTT: stt,
				Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(), voicetest.UserSays("and"), voicetest.AgentTurn()},
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		})
	})
}

// sttFunc adapts a function to voicetest.STT (a test double).
type sttFunc func(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error)

func (f sttFunc) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	return f(ctx, req)
}
