package voicetest_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A scenario's HTML report is one self-contained page; Save writes it as
// report.html beside the WAV files.
func ExampleResult_HTMLReport() {
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Name:      "greeting",
		Agent:     fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{{Text: "Hello there", Latency: 10 * time.Millisecond}}}),
		UserVoice: fixtures.FakeTTS(),
		Pacing:    voicetest.PaceFast,
		Timeouts:  voicetest.Timeouts{Greeting: time.Millisecond},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	page, err := res.HTMLReport()
	if err != nil {
		fmt.Println("report:", err)
		return
	}
	html := string(page)
	fmt.Println("players:", strings.Count(html, "<audio "))
	fmt.Println("network references:", strings.Contains(html, "http://") || strings.Contains(html, "https://"))
	fmt.Println(strings.Contains(html, "Hello there"))
	// Output:
	// players: 3
	// network references: false
	// true
}
