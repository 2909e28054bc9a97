package cassette_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// canary is a fake credential: it must never reach a cassette.
const canary = "sk-canary-7f3a9c2e51d04b8a"

// leakyAgent is a test double of an agent that leaks credentials in what
// it sends: a data payload, a tool call, a log line, a transcript, and an
// error message, each holding the canary in a different form.
type leakyAgent struct{ *fixtures.FakeAgent }

func newLeakyAgent() leakyAgent {
	return leakyAgent{fixtures.Fake(fixtures.FakeConfig{
		Name: "leaky",
		Greeting: fixtures.Reply{Text: "Your key is " + canary,
			Data:     json.RawMessage(`{"api_key":"` + canary + `","url":"wss://agent.example/ws?token=` + canary + `&lang=en","n":3,"max_tokens":20}`),
			DataName: "session",
			Tools:    []voicetest.ToolCall{{Name: "auth", Arguments: json.RawMessage(`{"authorization":"Bearer ` + canary + `"}`), Result: json.RawMessage(`{"ok":true}`)}}},
		Replies: []fixtures.Reply{{Text: "Noted"}},
	})}
}

// TestScrub: the canary, set in the environment as an API key and sent
// by the agent in every field a cassette stores, is nowhere in the
// cassette's files, and the replay still works from what was kept.
func TestScrub(t *testing.T) {
	t.Setenv("LEAKY_AGENT_API_KEY", canary)
	dir := t.TempDir()
	cfg := voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("my token is " + canary),
			voicetest.AgentTurn(),
		},
	}
	rec := record(t, dir, newLeakyAgent(), cfg)
	if !strings.Contains(rec.TranscriptText(), canary) {
		t.Fatalf("the live run did not see the canary: the test proves nothing\n%s", rec.TranscriptText())
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, form := range []string{canary, "canary-7f3a9c2e"} {
			if bytes.Contains(b, []byte(form)) {
				t.Errorf("%s holds the canary (%q)", path, form)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "conv", "cassette.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{`"n":3`, `"max_tokens":20`, `&lang=en`, `Your key is REDACTED`, `"api_key":"REDACTED"`, `"authorization":"REDACTED"`} {
		if !bytes.Contains(index, []byte(kept)) {
			t.Errorf("the index lacks %s", kept)
		}
	}
	res, _, err := run(t, dir, cache.Replay, dialFails{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The user's own line is the script's, not the cassette's.
	if got := res.State.AgentText(); strings.Contains(got, canary) || !strings.Contains(got, "Your key is REDACTED") {
		t.Errorf("replayed agent text: %s", got)
	}
}

// TestWithScrub: the test's own scrubbing runs after the built-in one.
func TestWithScrub(t *testing.T) {
	dir := t.TempDir()
	agent := fixtures.TextAgent(fixtures.Reply{Text: "Booked for Mrs Garcia, order 4711"})
	cfg := voicetest.Config{Script: []voicetest.Step{voicetest.UserSays("book it"), voicetest.AgentTurn()}}
	hide := strings.NewReplacer("Garcia", "<name>", "4711", "<order>").Replace
	t.Run("record", func(t *testing.T) {
		a := newCassette(t, dir, cache.Record, agent, hide)
		cfg.Agent = a
		if _, err := runIn(t, cfg); err != nil {
			t.Fatal(err)
		}
	})
	index, _ := os.ReadFile(filepath.Join(dir, "conv", "cassette.json"))
	if bytes.Contains(index, []byte("Garcia")) || !bytes.Contains(index, []byte("Booked for Mrs <name>, order <order>")) {
		t.Errorf("index:\n%s", index)
	}
}

// TestScrubByPosition: credentials that nothing taught the cassette (not
// in the environment, not sent by the caller) are blanked by where they
// stand, one canary per rule of the shared Scrubber, in a transcript, a
// data payload and a tool call: a URL password, a Bearer token, Basic
// credentials and a credential parameter of a log line.
func TestScrubByPosition(t *testing.T) {
	const (
		password = "userinfo-pw-canary-55e1"
		bearer   = "bearer-canary-8c1f0a"
		param    = "param-canary-3d9b27"
	)
	basic := base64.StdEncoding.EncodeToString([]byte("alice:basic-canary-6a2e"))
	agent := fixtures.Fake(fixtures.FakeConfig{
		Name: "positional",
		// One transcript per reply: word-by-word partials split a
		// "Bearer" from its token, which no rule by position can join.
		TextOnly: true,
		Greeting: fixtures.Reply{Text: "I dialled wss://bot:" + password + "@agent.example/ws and sent Authorization: Bearer " + bearer,
			Data:     json.RawMessage(`{"log":"level=info client_secret=` + param + ` lang=en","note":"Basic ` + basic + `"}`),
			DataName: "session",
			Tools:    []voicetest.ToolCall{{Name: "fetch", Arguments: json.RawMessage(`{"url":"https://bot:` + password + `@h/x?lang=en&token=` + param + `"}`), Result: json.RawMessage(`{"ok":true}`)}}},
	})
	dir := t.TempDir()
	cfg := voicetest.Config{Script: []voicetest.Step{voicetest.AgentTurn()}}
	rec := record(t, dir, agent, cfg)
	if !strings.Contains(rec.TranscriptText(), bearer) {
		t.Fatalf("the live run did not see the canaries: the test proves nothing\n%s", rec.TranscriptText())
	}
	index, err := os.ReadFile(filepath.Join(dir, "conv", "cassette.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{password, bearer, param, basic, "basic-canary"} {
		if bytes.Contains(index, []byte(c)) {
			t.Errorf("the cassette holds %q:\n%s", c, index)
		}
	}
	for _, kept := range []string{"wss://bot:REDACTED@agent.example/ws", "Bearer REDACTED", "client_secret=REDACTED lang=en", "Basic REDACTED", "lang=en\u0026token=REDACTED"} {
		if !bytes.Contains(index, []byte(kept)) {
			t.Errorf("the index lacks %s:\n%s", kept, index)
		}
	}
}
