package voicetest

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// BenchmarkNoteEvent measures the runner's per-event bookkeeping for the
// metrics (runner.note): one 20 ms audio chunk of a reply in progress.
func BenchmarkNoteEvent(b *testing.B) {
	r := &runner{seg: &agentSpeech{}, playEnd: time.Second, cfg: Config{Rate: pcm.DefaultRate, Timeouts: Timeouts{MaxTurnAudio: DefaultMaxTurnAudio}}}
	r.st.turn = 1
	ev := AgentEvent{Kind: AgentAudio, Audio: pcm.Silence(pcm.DefaultRate, FrameDuration)}
	at := time.Second
	b.ReportAllocs()
	for b.Loop() {
		r.note(ev, at)
	}
	if len(r.st.notes.turns) != 1 {
		b.Fatal("no note")
	}
}
