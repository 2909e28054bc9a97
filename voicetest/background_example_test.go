package voicetest_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A caller in a noisy cafe on a cell phone: the cafe plays under the
// caller's speech and through the silence, and the line carries it all.
func ExampleBackgroundOf() {
	agent := fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{{Text: "Hello!"}}})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, UserVoice: exampleVoice{}, Pacing: voicetest.PaceFast,
		Background: voicetest.BackgroundOf(pcm.NoisyCafeOnCellPhone(1), 1),
		Script: []voicetest.Step{
			voicetest.Silence(time.Second), // the cafe, no words
			voicetest.UserSays("Hi there."),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	hush := res.Recording.Segments[0].Audio()
	fmt.Printf("the silent second: %v of the cafe at about %.0f dBFS\n", hush.Duration(), math.Round(pcm.DBFS(pcm.RMS(hush))/5)*5)
	// Output: the silent second: 1s of the cafe at about -30 dBFS
}
