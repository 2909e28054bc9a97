package llm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// canary is an API key that must never be written anywhere: not in cache
// entries or bodies, golden files, artifacts, the wire capture or the logs.
const canary = "sk-canary-4f1e9b7a2c0d-MUST-NOT-LEAK"

// realClockAgent hides the fake agent's VirtualTime, so the scenario runs on
// the real clock and talks to the loopback providers for real.
type realClockAgent struct{ voicetest.Agent }

// lockedLog collects log lines from several goroutines.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// leaks reports where in text the canary (or its base64, as in a basic
// auth header) appears.
func leaks(text []byte) bool {
	for _, form := range []string{canary, canary[3:], base64.StdEncoding.EncodeToString([]byte(canary)), base64.StdEncoding.EncodeToString([]byte(":" + canary))} {
		if bytes.Contains(text, []byte(form)) {
			return true
		}
	}
	return false
}

// scanDir fails t for every file under dir holding the canary, and returns
// how many files it read.
func scanDir(t *testing.T, dir string) int {
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
		if leaks(b) || leaks([]byte(path)) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCanaryKeyNeverLeaks(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithAPIKey(canary))
	srv.HandleChat(func(r fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		if strings.Contains(r.Messages[0].Content, "judge") {
			return fakeopenai.ChatReply{Content: "pass"}, nil
		}
		return fakeopenai.ChatReply{Content: "For two."}, nil
	})
	// The echo agent plays the user's speech back, so the agent says the
	// user's line. The line is short: the echo plays it back on the real
	// clock (fakeopenai's speech lasts 0.2 s + 60 ms a character).
	srv.HandleTranscription(func(fakeopenai.TranscriptionRequest) (string, error) {
		return "For two.", nil
	})
	cacheDir := filepath.Join(t.TempDir(), "cache")
	var log lockedLog
	c, err := cache.Open(cacheDir, cache.WithMode(cache.Record), cache.WithLogf(log.logf), cache.WithName(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	tts, err := speech.NewOpenAITTS(speech.WithAPIKey(canary), speech.WithBaseURL(srv.BaseURL()), speech.WithCache(c), speech.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	stt, err := speech.NewOpenAISTT(speech.WithAPIKey(canary), speech.WithBaseURL(srv.BaseURL()), speech.WithCache(c), speech.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	chat, err := llm.New(llm.WithAPIKey(canary), llm.WithBaseURL(srv.BaseURL()), llm.WithCache(c), llm.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		resp, err := chat.Complete(ctx, voicetest.ChatRequest{Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: "You are a caller booking a table."},
			{Role: voicetest.ChatUser, Content: "Say your line."},
		}})
		return voicetest.Utterance{Text: resp.Message.Content}, err
	})
	judge := voicetest.JudgeFunc(func(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		resp, err := chat.Complete(ctx, voicetest.ChatRequest{Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: "You are a judge."},
			{Role: voicetest.ChatUser, Content: req.State.AgentText()},
		}})
		if err != nil {
			return voicetest.Judgment{}, err
		}
		return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{
			{Criterion: "the agent answers", Status: voicetest.Status(resp.Message.Content)}}}, nil
	})

	var capture bytes.Buffer
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Name:  "canary",
		Agent: realClockAgent{fixtures.Fake(fixtures.FakeConfig{Echo: true, NoTranscripts: true, EchoLatency: 10 * time.Millisecond})},
		User:  user, Judge: judge, UserVoice: tts, AgentSTT: stt,
		Pacing:   voicetest.PaceFast,
		Script:   []voicetest.Step{voicetest.UserTurn(), voicetest.AgentTurn(), voicetest.Verdict()},
		Capture:  &capture,
		Logf:     log.logf,
		Timeouts: voicetest.Timeouts{TailSilence: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatalf("the scenario failed: %v", err)
	}
	// The key was really used: every provider request carried it.
	reqs := srv.Requests()
	paths := map[string]bool{}
	for _, r := range reqs {
		paths[r.Path] = true
		if r.Header.Get("Authorization") != "Bearer "+canary {
			t.Errorf("%s was sent without the canary key", r.Path)
		}
	}
	for _, p := range []string{"/v1/audio/speech", "/v1/audio/transcriptions", "/v1/chat/completions"} {
		if !paths[p] {
			t.Errorf("no request to %s: the canary did not pass through every provider (got %v)", p, paths)
		}
	}
	if got := res.Transcript[len(res.Transcript)-1].Text; !strings.Contains(got, "For two") {
		t.Errorf("the echoed speech transcribed as %q", got)
	}

	artifacts := filepath.Join(t.TempDir(), "artifacts")
	if err := res.Save(artifacts); err != nil {
		t.Fatal(err)
	}
	goldens := filepath.Join(t.TempDir(), "golden")
	if err := res.WriteGolden(goldens, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := scanDir(t, goldens); n != 2 {
		t.Errorf("%d golden files written, want 2", n)
	}
	if n := scanDir(t, cacheDir); n < 6 {
		t.Errorf("only %d cache files were written; want entries and bodies for TTS, STT and two chats", n)
	}
	if n := scanDir(t, artifacts); n < 4 {
		t.Errorf("only %d artifact files were written", n)
	}
	if leaks(capture.Bytes()) {
		t.Error("the wire capture holds the API key")
	}
	if leaks([]byte(log.String())) || leaks([]byte(res.Reasoning)) || leaks([]byte(fmt.Sprint(res.Err))) {
		t.Errorf("the logs or the result hold the API key:\n%s", log.String())
	}
	manifest, err := res.Manifest()
	if err != nil || leaks(manifest) {
		t.Errorf("manifest: err %v, or it holds the API key", err)
	}

	// Replaying from what was recorded needs no key at all.
	rc, err := cache.Open(cacheDir, cache.WithMode(cache.Replay))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	replayTTS, err := speech.NewOpenAITTS(speech.WithBaseURL(srv.BaseURL()), speech.WithCache(rc), speech.WithAPIKey("sk-other"))
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	if _, err := replayTTS.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "For two.", Rate: 24000}); err != nil {
		t.Errorf("replaying the TTS entry with another key: %v", err)
	}
	if len(srv.Requests()) != before {
		t.Error("the replay reached the server: the key entered the cache key")
	}
}

func TestCanaryKeyInFailedRequestsNeverLeaks(t *testing.T) {
	// A rejected key (HTTP 401) produces an error; the error, the log and
	// the cache must not repeat the key either.
	srv := fakeopenai.New(t) // expects another key
	cacheDir := t.TempDir()
	var log lockedLog
	c, err := cache.Open(cacheDir, cache.WithMode(cache.Record), cache.WithLogf(log.logf))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	chat, err := llm.New(llm.WithAPIKey(canary), llm.WithBaseURL(srv.BaseURL()), llm.WithCache(c), llm.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = chat.Complete(t.Context(), voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}})
	if err == nil {
		t.Fatal("a wrong key was accepted")
	}
	if leaks([]byte(err.Error())) || leaks([]byte(log.String())) {
		t.Errorf("the error or log repeats the key: %v\n%s", err, log.String())
	}
	scanDir(t, cacheDir)
}
