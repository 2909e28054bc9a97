package judges

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// The bounds of the audio an LLM judge is sent.
const (
	// JudgeAudioRate is the sample rate the audio is sent at (audio
	// recorded at a higher rate is resampled): ample for speech, and a
	// third of the bytes of 48 kHz.
	JudgeAudioRate = 16000
	// MaxJudgeAudio bounds the audio sent: a longer call, or a longer set
	// of turns, is cut there, and the judge is told so.
	MaxJudgeAudio = 5 * time.Minute
)

// audioInput says what a listening judge hears.
type audioInput struct {
	turns  []int
	chosen bool // only turns
}

// clips returns the audio to send for st, and a sentence for the prompt
// that says what it is.
func (a *audioInput) clips(st *voicetest.State) ([]voicetest.InputAudio, string, error) {
	rec := st.Recording()
	var out []voicetest.InputAudio
	var total time.Duration
	cut := false
	add := func(label string, c pcm.Chunk) error {
		if total >= MaxJudgeAudio {
			cut = true
			return nil
		}
		if c.Duration() > MaxJudgeAudio-total {
			c = c.Slice(0, MaxJudgeAudio-total)
			cut = true
		}
		if c.Rate > JudgeAudioRate {
			var err error
			if c, err = pcm.Resample(c, JudgeAudioRate); err != nil {
				return fmt.Errorf("resampling the call's audio for the judge: %w", err)
			}
		}
		total += c.Duration()
		out = append(out, voicetest.InputAudio{Label: label, Audio: c})
		return nil
	}
	has := slices.ContainsFunc(rec.Segments, func(s voicetest.Segment) bool { return s.HasAudio() })
	if !has {
		return nil, "", errors.New("the judge listens (WithAudio), but the conversation has no audio (a text-only agent, or nothing said yet); drop WithAudio")
	}
	note := "The audio of the whole call follows: both parties mixed on one time axis, as a caller's recording would have it."
	if !a.chosen {
		if err := add("", rec.Mixed()); err != nil {
			return nil, "", err
		}
	} else {
		note = fmt.Sprintf("The audio of turns %v follows, one clip per stretch of speech, each after a line naming its turn and speaker.", a.turns)
		for _, s := range rec.Segments {
			if !s.HasAudio() || !slices.Contains(a.turns, s.Turn) {
				continue
			}
			if err := add(fmt.Sprintf("Turn %d, the %s:", s.Turn, s.Role), s.Audio()); err != nil {
				return nil, "", err
			}
		}
		if len(out) == 0 {
			return nil, "", fmt.Errorf("the judge listens to turns %v (WithTurnAudio), but no audio was recorded in them", a.turns)
		}
	}
	if cut {
		note += fmt.Sprintf(" It is cut after its first %v.", MaxJudgeAudio)
	}
	return out, note, nil
}
