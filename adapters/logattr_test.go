package adapters_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Found merging issue #15 items 1-4: the wire adapters' log lines go
// through the scrubbing wrapper, so a test that passed t.Logf saw them
// attributed to scrub.go:57, the library's line, not its own. Lines the
// adapters log, from the test's goroutine or their own, are the test's:
// with a Session's Logf from voicetest.TestLogf (as adaptertest.Session
// makes it) and under Run with Config.Logf = voicetest.TestLogf(t).
// Checked in a child test process, whose output is what a user sees.
func TestWireLogLinesAreAttributedToTheTest(t *testing.T) {
	if os.Getenv("VOICETEST_WIRE_LOG_CHILD") == "1" {
		// On virtual time, the peers on an in-memory network.
		synctest.Test(t, func(t *testing.T) {
			n := adaptertest.NewMemNet(t)
			bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen()})
			tw := &twilio.Agent{URL: bot.URL}
			tw.NetDial = n.Dial
			conn, err := tw.Connect(t.Context(), adaptertest.Session(t, 24000)) // logs "twilio: stream ... started"
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			peer := realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen()})
			rt := realtime.New("gpt-realtime")
			rt.URL, rt.NetDial = peer.URL, n.Dial
			conn, err = rt.Connect(t.Context(), adaptertest.Session(t, 24000)) // logs "openai-realtime: session configured"
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			el := elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), FirstMessage: "Hello there"})
			a := elevenlabs.New("agent_test")
			a.URL, a.NetDial = el.URL, n.Dial
			voicetest.Run(t.Context(), voicetest.Config{Agent: a, Logf: voicetest.TestLogf(t), // logs "elevenlabs: conversation ... started"
				Script: []voicetest.Step{voicetest.AgentTurn()}})
		})
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWireLogLinesAreAttributedToTheTest$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOICETEST_WIRE_LOG_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	attributed := regexp.MustCompile(`^logattr_test\.go:\d+: `)
	seen := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		for _, adapter := range []string{"twilio:", "openai-realtime:", "elevenlabs:"} {
			if !strings.Contains(l, " "+adapter+" ") {
				continue
			}
			seen[adapter] = true
			if !attributed.MatchString(l) {
				t.Errorf("log line %q: want it attributed to logattr_test.go", l)
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("the child logged lines of %v, want all three adapters; output:\n%s", seen, out)
	}
}
