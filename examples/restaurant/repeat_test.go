package restaurant_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// artifacts runs cfg on virtual time and returns the files Result.Save
// writes (report.html, conversation.wav, segments, transcript, timeline,
// manifest), by path.
func artifacts(t *testing.T, run func(t *testing.T) *voicetest.Result) map[string][]byte {
	t.Helper()
	var res *voicetest.Result
	synctest.Test(t, func(t *testing.T) { res = run(t) })
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	dir := t.TempDir()
	if err := res.Save(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// differing lists the artifacts that differ between two runs.
func differing(a, b map[string][]byte) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// TestInProcessArtifactsAreByteIdentical backs the README's claim about
// what replays byte for byte: an in-process agent speaking and listening
// through cached engines (flite, pocketsphinx), with a barge-in, gives
// the same artifacts, to the byte, on two runs.
func TestInProcessArtifactsAreByteIdentical(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T) *voicetest.Result {
		tts := speech.TTSForTest(t, "flite/slt")
		stt := speech.STTForTest(t, "pocketsphinx")
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Name: "repeat",
			Agent: restaurant.Agent(&restaurant.Book{}, handler.WithThinkTime(thinkTime),
				handler.AudioMode(tts, restaurant.TelephoneSTT(stt, restaurant.CallerPhrases()))),
			UserVoice: tts,
			Rate:      speech.PocketsphinxRate,
			Script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("A table for two, please."),
				voicetest.AgentTurn(),
				voicetest.UserSays("Friday at seven thirty."),
				voicetest.AgentTurn(),
				voicetest.UserSays("The name is Garcia."),
				voicetest.Interrupt("Sorry, make it eight.", voicetest.AfterWords(3)),
				voicetest.AgentTurn(),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first, second := artifacts(t, run), artifacts(t, run)
	if len(first) < 6 {
		t.Fatalf("Save wrote %d files, want the report, the mix, segments, transcript, timeline and manifest", len(first))
	}
	if d := differing(first, second); len(d) > 0 {
		t.Errorf("artifacts differ between two runs: %q", d)
	}
}

// TestPhoneCallRepeats backs the README's claim about a phone call to an
// agent the test serves in process on virtual time: two runs write the
// same artifacts, to the byte (the Twilio line's frame tick, the agent and
// the runner meet at the same instants every run, and the runner handles
// the events of one instant by rule).
func TestPhoneCallRepeats(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T) *voicetest.Result {
		b := startMemBot(t)
		cfg := b.config(phoneBooking()...)
		cfg.Name = "repeat"
		cfg.Golden.Disable = true
		res, err := voicetest.Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first, second := artifacts(t, run), artifacts(t, run)
	if !bytes.Equal(first["transcript.txt"], second["transcript.txt"]) {
		t.Errorf("transcripts differ:\n%s\n---\n%s", first["transcript.txt"], second["transcript.txt"])
	}
	if d := differing(first, second); len(d) > 0 {
		t.Errorf("artifacts differ between two runs: %q", d)
	}
}
