package voicetest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// A Result of Run is compared with golden files only when asked:
// WriteGolden records them (what go test -update does under Scenario) and
// CompareGolden checks a later run against them. Here the later run's
// agent answered 400 ms more slowly, beyond the 250 ms tolerance, and
// called its tool with other arguments.
func ExampleResult_CompareGolden() {
	dir, err := os.MkdirTemp("", "golden-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	run := func(latency time.Duration, party string) *voicetest.Result {
		return &voicetest.Result{
			Transcript: []voicetest.Message{
				{Turn: 1, Role: voicetest.RoleUser, Text: "A table for two, please."},
				{Turn: 1, Role: voicetest.RoleAgent, Text: "Booked for two."},
			},
			Timeline: []voicetest.Event{
				{At: 0, Type: voicetest.EventUserStartSpeaking, Turn: 1},
				{At: 2 * time.Second, Type: voicetest.EventUserStopSpeaking, Turn: 1},
				{At: 2*time.Second + latency, Type: voicetest.EventToolCall, Turn: 1,
					Tool: &voicetest.ToolCall{Name: "book", Arguments: []byte(`{"party":` + party + `}`)}},
				{At: 2*time.Second + latency, Type: voicetest.EventAgentStartSpeaking, Turn: 1, Latency: latency},
				{At: 3*time.Second + latency, Type: voicetest.EventAgentStopSpeaking, Turn: 1},
			},
		}
	}
	if err := run(300*time.Millisecond, "2").WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(dir, voicetest.GoldenTimelineFile))
	fmt.Print(string(b))

	err = run(700*time.Millisecond, "3").CompareGolden(dir, voicetest.GoldenOptions{Match: voicetest.GoldenTolerant})
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// +000000ms user_start_speaking turn=1
	// +002000ms user_stop_speaking turn=1
	// +002300ms tool_call turn=1 tool=book args={"party":2}
	// +002300ms agent_start_speaking turn=1 latency=300ms
	// +003300ms agent_stop_speaking turn=1
	// voicetest: golden timeline mismatch: DIR/timeline.golden (tolerant: times within ±250ms or 20% comparison)
	//   line 3 (tool_call turn=1): time: golden +002300ms (300ms after the previous event), actual +002700ms (700ms after the previous event) (tolerance ±250ms or 20%)
	//   line 3 (tool_call turn=1): args: golden {"party":2}, actual {"party":3}
	//   line 4 (agent_start_speaking turn=1): latency: golden 300ms, actual 700ms (tolerance ±250ms or 20%)
}

// NormalizeText is how GoldenOptions.NormalizeText compares what
// speech-to-text heard.
func ExampleNormalizeText() {
	fmt.Println(voicetest.NormalizeText("Table for Twenty-One at 7:30, please!"))
	fmt.Println(voicetest.NormalizeText("table for 21 at seven thirty please"))
	fmt.Println(voicetest.NormalizeText("It's the twenty first; that's one hundred and five dollars."))
	// Output:
	// table for 21 at 7 30 please
	// table for 21 at 7 30 please
	// its the 21st thats 105 dollars
}
