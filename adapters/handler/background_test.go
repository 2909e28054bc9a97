package handler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestBackgroundIsNotBargeIn: a caller's steady background, played while
// the agent speaks, does not cut the agent off; the caller's speech over
// the same background does.
func TestBackgroundIsNotBargeIn(t *testing.T) {
	talker := func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.StartEvent); ok {
			return c.Say("Welcome to the restaurant, we are open from noon until eleven every day of the week, and we take bookings for up to eight people")
		}
		return nil
	}
	for _, bg := range []voicetest.Background{
		{Scene: pcm.Cafe(), Level: -30, Seed: 1},
		{Scene: pcm.Street(), Level: -28, Seed: 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			// Babble is speech-like: a detector for a noisy cafe needs a
			// threshold well above the floor's quiet moments.
			vad := pcm.DefaultVADConfig()
			vad.ThresholdDB = 12
			agent := handler.New(talker, handler.AudioMode(fixtures.FakeTTS(), heardSTT{}), handler.WithVAD(vad))
			res, err := voicetest.Run(t.Context(), voicetest.Config{
				Agent: agent, UserVoice: fixtures.FakeTTS(), Background: bg,
				Script: []voicetest.Step{voicetest.AgentTurn()},
			})
			if err != nil {
				t.Fatalf("%s: %v", bg.Scene.Name(), err)
			}
			if m := res.Transcript[0]; m.Interrupted {
				t.Errorf("%s at %g dBFS: the agent's greeting was cut off at %v by the background alone", bg.Scene.Name(), bg.Level, m.End)
			}
			res, err = voicetest.Run(t.Context(), voicetest.Config{
				Agent: agent, UserVoice: fixtures.FakeTTS(), Background: bg,
				Script: []voicetest.Step{voicetest.Interrupt("sorry, one question", voicetest.After(3*time.Second))},
			})
			if err != nil {
				t.Fatalf("%s: %v", bg.Scene.Name(), err)
			}
			if m := res.Transcript[0]; !m.Interrupted {
				t.Errorf("%s: the caller's speech over the background did not barge in", bg.Scene.Name())
			}
		})
	}
}

// heardSTT is a test-double STT for noisy audio (which FakeSTT cannot
// decode): it hears "something".
type heardSTT struct{}

func (heardSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	return voicetest.Transcription{Text: "something"}, nil
}

// TestWithVADInvalid: a bad detector configuration is reported by Connect.
func TestWithVADInvalid(t *testing.T) {
	bad := pcm.DefaultVADConfig()
	bad.ThresholdDB = 0
	agent := handler.New(func(context.Context, handler.Event, *handler.Call) error { return nil },
		handler.AudioMode(fixtures.FakeTTS(), heardSTT{}), handler.WithVAD(bad))
	if _, err := agent.Connect(t.Context(), voicetest.Session{Rate: pcm.Rate16k}); err == nil || !strings.Contains(err.Error(), "WithVAD") {
		t.Errorf("Connect with WithVAD(ThresholdDB 0) = %v, want an error naming WithVAD", err)
	}
}

// lenSTT records how much audio each transcription got.
type lenSTT struct{ got []time.Duration }

func (l *lenSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	l.got = append(l.got, req.Audio.Duration())
	return voicetest.Transcription{Text: "something"}, nil
}

// TestVADTranscribesOnlySpeech: with WithVAD, the agent transcribes the
// caller's speech, not the background the line carried before it (the
// whole agent turn's worth).
func TestVADTranscribesOnlySpeech(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stt := &lenSTT{}
		vad := pcm.DefaultVADConfig()
		vad.ThresholdDB, vad.MinLevelDBFS = 12, -32
		agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev.(type) {
			case handler.StartEvent:
				return c.Say("Welcome to the restaurant, we are open from noon until eleven every day of the week")
			case handler.TextEvent:
				return c.Say("Fine")
			}
			return nil
		}, handler.AudioMode(fixtures.FakeTTS(), stt), handler.WithVAD(vad))
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent: agent, UserVoice: fixtures.FakeTTS(),
			Background: voicetest.Background{Scene: pcm.Cafe(), Level: -40, Seed: 3},
			Script:     []voicetest.Step{voicetest.AgentTurn(), voicetest.UserSays("a table for two"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		var said time.Duration
		for _, s := range res.Recording.Segments {
			if s.Role == voicetest.RoleUser {
				said = s.End - s.Start
			}
		}
		if len(stt.got) != 1 || stt.got[0] > said+200*time.Millisecond || stt.got[0] < said-200*time.Millisecond {
			t.Errorf("the agent transcribed %v of audio for %v of speech after a %v greeting; want about the speech only", stt.got, said, res.Transcript[0].End)
		}
	})
}
