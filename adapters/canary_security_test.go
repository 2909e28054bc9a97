package adapters_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// adapterCanary is an API key that must appear nowhere but on the wire to
// the agent: not in the capture, logs, errors, artifacts or golden files.
const adapterCanary = "sk-canary-91d2e7f04b3a-ADAPTER-MUST-NOT-LEAK"

// canaryLog collects log lines from the adapters' goroutines.
type canaryLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *canaryLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *canaryLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// noCanaryUnder fails t for every file under dir that holds the canary.
func noCanaryUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(b, []byte(adapterCanary)) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCanaryKeyThroughTheAdapters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		agent func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent
	}{
		{"realtime", func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			peer := realtimepeer.New(t, realtimepeer.Config{Listener: n.Listen(), APIKey: adapterCanary, Greeting: "Hello there"})
			a := realtime.New("gpt-realtime")
			a.URL, a.APIKey, a.Greeting, a.NetDial = peer.URL, adapterCanary, true, n.Dial
			return a
		}},
		{"elevenlabs", func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			peer := elevenpeer.New(t, elevenpeer.Config{Listener: n.Listen(), APIKey: adapterCanary, FirstMessage: "Hello there"})
			a := elevenlabs.New("agent_test")
			a.URL, a.APIKey, a.NetDial = peer.URL, adapterCanary, n.Dial
			return a
		}},
		{"layercode", func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
			peer := layercodepeer.New(t, layercodepeer.Config{Listener: n.Listen(), Token: adapterCanary, Greeting: "Hello there"})
			a := layercode.New(peer.AuthorizeURL, "agent-test")
			a.WebSocketURL = peer.WebSocketURL
			a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
			a.AuthorizeHeader = http.Header{"Authorization": {"Bearer " + adapterCanary}}
			return a
		}},
	}
	for _, tc := range cases {
		// On virtual time, the peer on an in-memory network.
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log canaryLog
				capture := &adaptertest.SyncBuffer{}
				res, err := voicetest.Run(t.Context(), voicetest.Config{
					Name: "canary", Agent: tc.agent(t, adaptertest.NewMemNet(t)), Capture: capture, Logf: log.logf,
					Pacing:   voicetest.PaceFast,
					Script:   []voicetest.Step{voicetest.AgentTurn()},
					Timeouts: voicetest.Timeouts{FirstChunk: 10 * time.Second},
				})
				if err != nil {
					t.Fatalf("the greeting failed, so the key was not used: %v", err)
				}
				if len(capture.Bytes()) == 0 {
					t.Error("the capture is empty: nothing to check")
				}
				if bytes.Contains(capture.Bytes(), []byte(adapterCanary)) {
					t.Error("the wire capture holds the API key")
				}
				if strings.Contains(log.String(), adapterCanary) {
					t.Errorf("the log holds the API key:\n%s", log.String())
				}
				dir := t.TempDir()
				if err := res.Save(filepath.Join(dir, "artifacts")); err != nil {
					t.Fatal(err)
				}
				if err := res.WriteGolden(filepath.Join(dir, "golden"), voicetest.GoldenOptions{}); err != nil {
					t.Fatal(err)
				}
				if n := noCanaryUnder(t, dir); n < 5 {
					t.Errorf("only %d files written", n)
				}
			})
		})
	}
}

func TestCanaryKeyInRejectedHandshakes(t *testing.T) {
	// The agent rejects the key (HTTP 401): the error says so without
	// repeating the key.
	peer := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-the-right-one"})
	a := realtime.New("gpt-realtime")
	a.URL, a.APIKey = peer.URL+"?api_key="+adapterCanary, adapterCanary
	var log canaryLog
	_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: a, Logf: log.logf, Script: []voicetest.Step{voicetest.AgentTurn()}})
	if err == nil {
		t.Fatal("a wrong key was accepted")
	}
	if strings.Contains(err.Error(), adapterCanary) || strings.Contains(log.String(), adapterCanary) {
		t.Errorf("the error or log repeats the key: %v\n%s", err, log.String())
	}

	eleven := elevenpeer.New(t, elevenpeer.Config{APIKey: "xi-the-right-one"})
	e := elevenlabs.New("agent_test")
	e.URL, e.APIKey = eleven.URL, adapterCanary
	if _, err := voicetest.Run(t.Context(), voicetest.Config{Agent: e, Logf: log.logf, Script: []voicetest.Step{voicetest.AgentTurn()}}); err == nil || strings.Contains(err.Error(), adapterCanary) {
		t.Errorf("elevenlabs with a wrong key: %v", err)
	}
	if strings.Contains(log.String(), adapterCanary) {
		t.Errorf("the log repeats the key:\n%s", log.String())
	}
}
