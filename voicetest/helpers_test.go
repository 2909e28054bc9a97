package voicetest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// toneTTS is a test-double TTS: WordTones of the text, 400 ms a word
// (fixtures.ToneTTS), counting its calls.
type toneTTS struct {
	calls atomic.Int32
	tones fixtures.ToneTTS
}

func (t *toneTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	t.calls.Add(1)
	if req.Rate <= 0 {
		return pcm.Chunk{}, errors.New("toneTTS: no rate")
	}
	// As before the cache, a cancelled ctx does not stop it.
	return t.tones.Synthesize(context.WithoutCancel(ctx), req)
}

// SynthesizePieces is fixtures.ToneTTS's: the runner takes the words'
// shared audio as they are (see voicetest's pieceTTS).
func (t *toneTTS) SynthesizePieces(ctx context.Context, tok inproc.Token, req voicetest.SpeechRequest) ([]pcm.Chunk, error) {
	t.calls.Add(1)
	if req.Rate <= 0 {
		return nil, errors.New("toneTTS: no rate")
	}
	return t.tones.SynthesizePieces(context.WithoutCancel(ctx), tok, req)
}

// lengthSTT is a test-double STT that reports how much audio it heard.
type lengthSTT struct{}

func (lengthSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	return voicetest.Transcription{Text: fmt.Sprintf("heard %dms", req.Audio.Duration().Milliseconds())}, nil
}

// lines is a scripted test User.
func lines(ls ...string) voicetest.User {
	i := 0
	return voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		if i >= len(ls) {
			return voicetest.Utterance{Done: true}, nil
		}
		i++
		return voicetest.Utterance{Text: ls[i-1]}, nil
	})
}

// criteriaJudge passes or fails criteria by a function of the state.
func criteriaJudge(decide func(req voicetest.JudgeRequest) (voicetest.Judgment, error)) voicetest.Judge {
	return voicetest.JudgeFunc(func(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		return decide(req)
	})
}

func allPass(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	v := voicetest.Judgment{Decided: true, Reasoning: "all good"}
	crit := req.Criteria
	if crit == nil {
		crit = []string{"the agent answers"}
	}
	for _, c := range crit {
		v.Criteria = append(v.Criteria, voicetest.CriterionResult{Criterion: c, Status: voicetest.StatusPass})
	}
	return v, nil
}

// fakeTB records what Scenario reports, so failing scenarios can be
// tested without failing the test. It embeds a real *testing.T for the
// methods it does not override (Context, Cleanup, TempDir...).
type fakeTB struct {
	*testing.T
	errs  []string
	logs  []string
	attrs map[string]string
}

func newFakeTB(t *testing.T) *fakeTB { return &fakeTB{T: t, attrs: map[string]string{}} }

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Error(args ...any) { f.record(fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.record(fmt.Sprintf(format, args...))
}

// record keeps an error and has the test remove the artifacts it names.
func (f *fakeTB) record(msg string) {
	f.errs = append(f.errs, msg)
	leakcheck.RemoveArtifactsLater(f.T, msg)
}
func (f *fakeTB) Log(args ...any) { f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Attr(k, v string) { f.attrs[k] = v }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
	f.T.Fatalf(format, args...)
}

func (f *fakeTB) errorText() string { return strings.Join(f.errs, "\n") }

// ms is a shorthand for durations in timeline assertions.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
