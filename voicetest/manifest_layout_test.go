package voicetest_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestManifestLayout pins the members of manifest.json that
// Result.Manifest documents, so that the doc and the file cannot drift
// apart: a member added, renamed or dropped fails here.
func TestManifestLayout(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "one two", Latency: 300 * time.Millisecond,
			Tools: []voicetest.ToolCall{{Name: "lookup", Arguments: []byte(`{"q":1}`), Result: []byte(`{"ok":true}`)}}}),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := res.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Top      map[string]json.RawMessage
		Segments []map[string]json.RawMessage `json:"segments"`
		Events   []map[string]json.RawMessage `json:"events"`
		Latency  map[string]json.RawMessage   `json:"latency"`
	}
	if err := json.Unmarshal(b, &m.Top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(ms ...map[string]json.RawMessage) []string {
		set := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				set[k] = true
			}
		}
		return slices.Sorted(maps.Keys(set))
	}
	check := func(what string, got []string, want ...string) {
		t.Helper()
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s members %q, want %q (update Result.Manifest's doc with the layout)", what, got, want)
		}
	}
	// No criteria: a run without a judge has none, and the member is absent.
	check("top-level", keys(m.Top), "name", "duration", "rate", "segment_count", "segments", "events", "latency", "status", "metrics")
	check("segment", keys(m.Segments...), "idx", "file", "role", "turn", "start_time", "end_time", "duration", "transcript")
	check("event", keys(m.Events...), "time", "type", "turn", "latency", "name", "args", "result", "text")
	check("latency", keys(m.Latency), "measurements", "avg", "p50", "p95", "time_to_first_byte")
	if _, ok := m.Top["generated_at"]; ok {
		t.Error("the manifest has a generated_at: two runs of a deterministic scenario would differ")
	}
}
