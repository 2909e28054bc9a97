package pcm

import (
	"testing"
	"time"
)

// TestVADOpenSpeech: inside speech, OpenSpeech gives its start and the end
// heard so far, before the hangover reports SpeechEnd.
func TestVADOpenSpeech(t *testing.T) {
	v, err := NewVAD(Rate16k, DefaultVADConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := v.OpenSpeech(); ok {
		t.Error("OpenSpeech before any audio: ok")
	}
	quiet := Silence(Rate16k, 500*time.Millisecond)
	tone := Chunk{Rate: Rate16k, Samples: tone(Rate16k, 500, 8000, 0, Rate16k/2)}
	ev := v.Process(nil, quiet.Samples)
	ev = v.Process(ev, tone.Samples)
	ev = v.Process(ev, Silence(Rate16k, 100*time.Millisecond).Samples) // less than the hangover
	start, end, ok := v.OpenSpeech()
	if !ok || len(ev) != 1 || ev[0].Type != SpeechStart {
		t.Fatalf("after 500 ms of tone and 100 ms of silence: events %v, open %v", ev, ok)
	}
	if s, e := DurationOf(int(start), Rate16k), DurationOf(int(end), Rate16k); s < 490*time.Millisecond || s > 510*time.Millisecond || e < 990*time.Millisecond || e > 1010*time.Millisecond {
		t.Errorf("open speech %v–%v, want the tone's 500ms–1s", s, e)
	}
	ev = v.Process(ev[:0], Silence(Rate16k, time.Second).Samples)
	if _, _, ok := v.OpenSpeech(); ok || len(ev) != 1 || ev[0].Type != SpeechEnd {
		t.Errorf("after the hangover: events %v, still open %v", ev, ok)
	}
}
