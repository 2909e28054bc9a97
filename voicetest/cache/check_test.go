package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Issue 14, item 5: the cache never keeps a bad answer, and a miss names
// every input of its key.

type verdict struct {
	Status string `json:"status"`
}

func checkVerdict(v verdict) error {
	switch v.Status {
	case "pass", "fail":
		return nil
	}
	return errors.New(`status is "` + v.Status + `"; want pass or fail`)
}

func constVerdict(status string, calls *atomic.Int32) func(context.Context) (verdict, error) {
	return func(context.Context) (verdict, error) {
		calls.Add(1)
		return verdict{Status: status}, nil
	}
}

// An answer that fails its check is not stored, and the error says what
// was wrong and how to ask again.
func TestCheckedAnswerThatFailsIsNotStored(t *testing.T) {
	dir := t.TempDir()
	key := textKey("judge this")
	var calls atomic.Int32
	c := openTest(t, dir, Record)
	_, err := DoJSONChecked(t.Context(), c, key, constVerdict("maybe", &calls), checkVerdict)
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Stored {
		t.Fatalf("err = %v, want an *InvalidError for a fresh answer", err)
	}
	for _, want := range []string{`status is "maybe"`, "was not stored", "go test ./voicetest/cache -run '^TestCheckedAnswerThatFailsIsNotStored$' -voicetest.record"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("the cache stored a bad answer: %v", got)
	}
	// A good answer is stored, and replays.
	if v, err := DoJSONChecked(t.Context(), c, key, constVerdict("pass", &calls), checkVerdict); err != nil || v.Status != "pass" {
		t.Fatalf("good answer: %v, %v", v, err)
	}
	r := openTest(t, dir, Replay)
	if v, err := DoJSONChecked(t.Context(), r, key, nil, checkVerdict); err != nil || v.Status != "pass" {
		t.Fatalf("replay: %v, %v", v, err)
	}
}

// A bad answer already on disk (recorded before its check existed) is
// never served: replay names the entry and the command that re-records
// it, and record mode replaces it.
func TestCheckedEntryThatFailsIsReplaced(t *testing.T) {
	dir := t.TempDir()
	key := textKey("judge that")
	var calls atomic.Int32
	if _, err := DoJSON(t.Context(), openTest(t, dir, Record), key, constVerdict("maybe", &calls)); err != nil {
		t.Fatal(err)
	}
	_, err := DoJSONChecked(t.Context(), openTest(t, dir, Replay), key, nil, checkVerdict)
	var ie *InvalidError
	if !errors.As(err, &ie) || !ie.Stored || !strings.HasSuffix(ie.Path, ".json") {
		t.Fatalf("replay of a bad entry: %v, want an *InvalidError naming the stored entry", err)
	}
	for _, want := range []string{ie.Path, `status is "maybe"`, "-voicetest.record"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	v, err := DoJSONChecked(t.Context(), openTest(t, dir, Record), key, constVerdict("fail", &calls), checkVerdict)
	if err != nil || v.Status != "fail" || calls.Load() != 2 {
		t.Fatalf("record over a bad entry: %v, %v, %d calls", v, err, calls.Load())
	}
	if v, err := DoJSONChecked(t.Context(), openTest(t, dir, Replay), key, nil, checkVerdict); err != nil || v.Status != "fail" {
		t.Fatalf("replay after re-recording: %v, %v", v, err)
	}
}

// A replay miss names every input of the key, those the environment chose
// included, and its record command sets them, so that it records this
// very entry.
func TestMissNamesEveryInput(t *testing.T) {
	c := openTest(t, t.TempDir(), Replay)
	key := Key{Kind: "llm", Provider: "openai", Model: "llama3", Fields: map[string]any{"request": map[string]any{"messages": []any{"hi"}}},
		Env: map[string]string{"model": "VOICETEST_LLM_MODEL", "provider": "OPENAI_API_KEY"}}
	_, err := c.Text(t.Context(), key, nil)
	var miss *MissError
	if !errors.As(err, &miss) {
		t.Fatalf("err = %v, want a miss", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"inputs: kind llm, provider openai, model llama3 (from VOICETEST_LLM_MODEL), field request",
		"record it with: VOICETEST_LLM_MODEL=llama3 go test ./voicetest/cache -run '^TestMissNamesEveryInput$' -voicetest.record",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "OPENAI_API_KEY") {
		t.Errorf("a secret-looking variable reached the message:\n%s", msg)
	}
	// Env is not part of the key: the same inputs chosen in code are the
	// same entry.
	d1, _ := key.Digest()
	key.Env = nil
	if d2, _ := key.Digest(); d1 != d2 {
		t.Error("Env changed the digest")
	}
	if _, err := os.Stat(filepath.Join(c.Dir(), "llm")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a replay miss wrote to the cache: %v", err)
	}
}
