package voicetest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// sttJob is the transcription of one agent turn's audio, running beside
// the conversation. Its text goes to the message, item and segment at the
// indices it holds (those slices only grow while a run lasts).
type sttJob struct {
	turn           int
	msg, item, seg int
	done           chan struct{} // closed when text and err are set
	text           string
	err            error
	// heard marks the transcription of a message whose text the agent
	// sent: it goes to Message.Heard (Config.MeasureAgentWER).
	heard bool
}

// transcribe starts transcribing an agent turn's audio with
// Config.AgentSTT. A run's transcriptions go one at a time, in turn order,
// so an engine sees no more concurrency from one scenario than before.
func (r *runner) transcribe(ctx context.Context, turn int, audio pcm.Chunk, msg, item, seg int) {
	j := &sttJob{turn: turn, msg: msg, item: item, seg: seg, done: make(chan struct{})}
	var prev chan struct{}
	if n := len(r.stt); n > 0 {
		prev = r.stt[n-1].done
	}
	r.stt = append(r.stt, j)
	stt, req, stray := r.cfg.AgentSTT, TranscriptionRequest{Audio: audio, Language: r.cfg.Language}, r.stray
	c := r.engine("Config.AgentSTT", PhaseTranscribe)
	c.turn = turn
	go func() {
		defer close(j.done)
		if prev != nil {
			select {
			case <-prev:
			case <-ctx.Done():
				j.err = ctx.Err()
				return
			}
		}
		var tr Transcription
		// A panicking engine fails the scenario (call recovers it), not
		// the whole test binary from a goroutine no test owns.
		err := call(ctx, c, stray, func(ctx context.Context) (err error) {
			tr, err = stt.Transcribe(ctx, req)
			return err
		})
		if err != nil {
			j.err = fmt.Errorf("transcribing the agent's turn %d (%v of audio, its edge silence trimmed) with Config.AgentSTT: %w", turn, audio.Duration().Round(time.Millisecond), err)
			return
		}
		j.text = strings.TrimSpace(tr.Text)
	}()
}

// settle waits for the transcriptions still running and writes their text
// into the transcript, the conversation items and the recording. Anything
// that reads the conversation (a User, a Judge, a Check, the Result) runs
// after it. A failed transcription is returned; the jobs after it are
// left for waitSTT.
func (r *runner) settle(ctx context.Context) error {
	for len(r.stt) > 0 {
		j := r.stt[0]
		select {
		case <-j.done:
		case <-ctx.Done():
			return fmt.Errorf("voicetest: the scenario's context ended while it waited for Config.AgentSTT (phase %q, turn %d): %w", PhaseTranscribe, j.turn, context.Cause(ctx))
		}
		r.stt = r.stt[1:]
		if j.err != nil {
			return j.err
		}
		if j.heard {
			r.setHeard(j.msg, j.text)
			continue
		}
		r.st.transcript[j.msg].Text = j.text
		r.st.transcript[j.msg].NothingHeard = j.text == ""
		r.st.items[j.item].Text = j.text
		r.segs[j.seg].Text = j.text
	}
	return nil
}

// waitSTT waits for every transcription goroutine to end (the run's
// context is cancelled first, so they end soon): none outlives the run.
func (r *runner) waitSTT() {
	for _, j := range r.stt {
		<-j.done
	}
	r.stt = nil
}
