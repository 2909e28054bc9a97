package voicetest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// goldenFuzzResult is a small result with every kind of timeline field.
func goldenFuzzResult() *voicetest.Result {
	res := bigResult(7, 2)
	res.Timeline = append(res.Timeline,
		voicetest.Event{At: 3 * time.Second, Type: voicetest.EventToolCall, Turn: 2, Role: voicetest.RoleAgent, Text: "book",
			Tool: &voicetest.ToolCall{Name: "book", Arguments: json.RawMessage(`{"party":2,"time":"19:00"}`)}},
		voicetest.Event{At: 3100 * time.Millisecond, Type: voicetest.EventSilence, Turn: 2, Role: voicetest.RoleUser, Duration: time.Second},
	)
	return res
}

// FuzzGoldenCompare feeds damaged transcript and timeline golden files to
// Result.CompareGolden, exact and tolerant: it must never panic, must
// accept the files -update writes, and must report anything else only as
// *GoldenError values.
func FuzzGoldenCompare(f *testing.F) {
	res := goldenFuzzResult()
	tr := res.GoldenTranscript(voicetest.GoldenOptions{})
	tl := res.GoldenTimeline(voicetest.GoldenOptions{})
	f.Add(tr, tl, false)
	f.Add(tr, tl, true)
	f.Add([]byte("user: \\q\nagent:"), []byte("+000001ms agent_start_speaking turn=x"), true)
	f.Add(bytes.ReplaceAll(tr, []byte("\n"), []byte("\r\n")), tl[:len(tl)/2], false)
	f.Add([]byte{}, []byte("-000010ms data turn=0 data={\"a\":[1,2e400]} latency=99999999999999999999ms"), true)
	f.Fuzz(func(t *testing.T, transcript, timeline []byte, tolerant bool) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, voicetest.GoldenTranscriptFile), transcript, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, voicetest.GoldenTimelineFile), timeline, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := voicetest.GoldenOptions{Match: voicetest.GoldenExact}
		if tolerant {
			opts = voicetest.GoldenOptions{Match: voicetest.GoldenTolerant, NormalizeText: true}
		}
		err := res.CompareGolden(dir, opts)
		if bytes.Equal(transcript, tr) && bytes.Equal(timeline, tl) && err != nil {
			t.Fatalf("the files -update writes do not compare equal: %v", err)
		}
		if err == nil {
			return
		}
		var ge *voicetest.GoldenError
		if !errors.As(err, &ge) || !errors.Is(err, voicetest.ErrGoldenMismatch) || ge.File == "" {
			t.Fatalf("error %v (%T), want *GoldenError values matching ErrGoldenMismatch", err, err)
		}
		if err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}
