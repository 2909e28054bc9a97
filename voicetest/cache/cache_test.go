package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openTest(t *testing.T, dir string, mode Mode, opts ...Option) *Cache {
	t.Helper()
	c, err := Open(dir, append([]Option{WithMode(mode), WithName(t.Name()), WithUsageDir("")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func textKey(text string) Key {
	return Key{Kind: "llm", Provider: "test", Model: "m1", Fields: map[string]any{"prompt": text, "temperature": 0.7}}
}

func constText(s string, calls *atomic.Int32) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		calls.Add(1)
		return s, nil
	}
}

// files returns every file under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestTextRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	var calls atomic.Int32
	answer := "Sure — a table for two at 7 pm.\n<confirmed> & \"done\"\x00\xff"

	rec := openTest(t, dir, Record)
	got, err := rec.Text(ctx, textKey("book"), constText(answer, &calls))
	if err != nil || got != answer {
		t.Fatalf("record: %q, %v", got, err)
	}
	// A second call in Record mode is a hit.
	if got, err := rec.Text(ctx, textKey("book"), constText("other", &calls)); err != nil || got != answer {
		t.Fatalf("record hit: %q, %v", got, err)
	}
	if calls.Load() != 1 {
		t.Fatalf("producer called %d times, want 1", calls.Load())
	}

	rep := openTest(t, dir, Replay)
	got, err = rep.Text(ctx, textKey("book"), func(context.Context) (string, error) {
		t.Fatal("producer called in replay mode")
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != answer {
		t.Fatalf("replay = %q, want byte-identical %q", got, answer)
	}

	digest, _ := textKey("book").Digest()
	fs := files(t, dir)
	bodyName := "llm/" + digest + "." + sha256Hex([]byte(answer))[:12] + ".txt"
	if want := []string{bodyName, "llm/" + digest + ".json"}; !slices.Equal(fs, want) {
		t.Fatalf("files = %v, want %v", fs, want)
	}
	body, _ := os.ReadFile(filepath.Join(dir, bodyName))
	if string(body) != answer {
		t.Errorf("body file = %q, want %q", body, answer)
	}
	var e map[string]any
	raw, _ := os.ReadFile(filepath.Join(dir, "llm", digest+".json"))
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"kind": "llm", "provider": "test", "model": "m1", "key": digest, "format": entryFormat} {
		if e[k] != want {
			t.Errorf("entry %s = %v, want %v", k, e[k], want)
		}
	}
	if f := e["fields"].(map[string]any); f["prompt"] != "book" || f["temperature"] != 0.7 {
		t.Errorf("entry fields = %v", f)
	}
	if _, err := time.Parse(time.RFC3339, e["created"].(string)); err != nil {
		t.Errorf("entry created: %v", err)
	}
}

func TestJSONRecordThenReplay(t *testing.T) {
	type verdict struct {
		Pass     bool               `json:"pass"`
		Reason   string             `json:"reason"`
		Scores   map[string]float64 `json:"scores"`
		internal int
	}
	dir := t.TempDir()
	want := verdict{Pass: true, Reason: "confirmed <time> & size", Scores: map[string]float64{"b": 0.7, "a": 1}, internal: 5}
	key := Key{Kind: "judge", Provider: "test", Fields: map[string]any{"criteria": []string{"confirms time"}}}

	got, err := DoJSON(t.Context(), openTest(t, dir, Record), key, func(context.Context) (verdict, error) { return want, nil })
	if err != nil {
		t.Fatal(err)
	}
	// Record returns what replay will return: unexported fields are not stored.
	want.internal = 0
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("record = %+v, want %+v", got, want)
	}
	replayed, err := DoJSON(t.Context(), openTest(t, dir, Replay), key, func(context.Context) (verdict, error) {
		return verdict{}, errors.New("must not be called")
	})
	if err != nil || fmt.Sprint(replayed) != fmt.Sprint(want) {
		t.Fatalf("replay = %+v, %v; want %+v", replayed, err, want)
	}
	// The body is readable JSON without HTML escaping.
	for _, f := range files(t, dir) {
		if strings.Count(f, ".") == 2 {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if !bytes.Contains(b, []byte("<time> & size")) || !bytes.Contains(b, []byte("\n  \"pass\": true")) {
				t.Errorf("JSON body not readable:\n%s", b)
			}
		}
	}
}

func testPCM(n int, seed int) []byte {
	b := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		v := int16((i*seed*7919 + seed) % 65536)
		b[2*i] = byte(v)
		b[2*i+1] = byte(uint16(v) >> 8)
	}
	return b
}

func TestAudioRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	pcm := testPCM(2400, 3)
	key := Key{Kind: "tts", Provider: "flite", Model: "slt", Fields: map[string]any{"text": "hello"}}
	got, err := openTest(t, dir, Record).Audio(t.Context(), key, func(context.Context) (Audio, error) {
		return Audio{Rate: 24000, PCM: pcm}, nil
	})
	if err != nil || got.Rate != 24000 || !bytes.Equal(got.PCM, pcm) {
		t.Fatalf("record: rate %d, %d bytes, %v", got.Rate, len(got.PCM), err)
	}
	rep, err := openTest(t, dir, Replay).Audio(t.Context(), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rate != 24000 || !bytes.Equal(rep.PCM, pcm) {
		t.Fatalf("replay: rate %d, %d bytes; not identical to the recording", rep.Rate, len(rep.PCM))
	}
	var wav string
	for _, f := range files(t, dir) {
		if strings.HasSuffix(f, ".wav") {
			wav = f
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, wav))
	if err != nil {
		t.Fatalf("no WAV body file: %v (files %v)", err, files(t, dir))
	}
	if len(data) != 44+len(pcm) || string(data[:4]) != "RIFF" {
		t.Errorf("WAV body has %d bytes, want %d", len(data), 44+len(pcm))
	}
	digest, _ := key.Digest()
	entry, _ := os.ReadFile(filepath.Join(dir, "tts", digest+".json"))
	for _, want := range []string{`"rate": 24000`, `"samples": 2400`, `"duration": "100ms"`, `"type": "audio/wav"`} {
		if !bytes.Contains(entry, []byte(want)) {
			t.Errorf("entry lacks %s:\n%s", want, entry)
		}
	}
}

func TestAudioInvalidNotStored(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Record)
	key := Key{Kind: "tts", Provider: "flite", Fields: map[string]any{"text": "x"}}
	for _, a := range []Audio{{Rate: 24000, PCM: []byte{1, 2, 3}}, {Rate: 0, PCM: []byte{1, 2}}, {Rate: -8000}} {
		if _, err := c.Audio(t.Context(), key, func(context.Context) (Audio, error) { return a, nil }); err == nil {
			t.Errorf("Audio with rate %d and %d bytes: want an error", a.Rate, len(a.PCM))
		}
	}
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("invalid audio left files: %v", fs)
	}
}

func TestReplayMissError(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Replay)
	_, err := c.Text(t.Context(), textKey("never recorded"), func(context.Context) (string, error) {
		t.Fatal("producer called in replay mode")
		return "", nil
	})
	var miss *MissError
	if !errors.As(err, &miss) {
		t.Fatalf("error = %v, want *MissError", err)
	}
	if miss.Test != t.Name() || miss.Provider != "test" || miss.Kind != "llm" {
		t.Errorf("MissError = %+v", miss)
	}
	msg := err.Error()
	for _, want := range []string{
		"TestReplayMissError", "from test", "(model m1)", `prompt="never recorded"`,
		"go test ./voicetest/cache -run '^TestReplayMissError$' -voicetest.record",
		filepath.Join(dir, "llm"),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss error lacks %q:\n%s", want, msg)
		}
	}
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("replay miss wrote files: %v", fs)
	}
}

func TestRunPattern(t *testing.T) {
	for in, want := range map[string]string{
		"TestX":               "^TestX$",
		"TestX/sub_case#01":   "^TestX$/^sub_case#01$",
		"TestX/a.b(c)/it's":   `^TestX$/^a\.b\(c\)$/^it'\''s$`,
		"TestBooking/rushed+": `^TestBooking$/^rushed\+$`,
	} {
		if got := runPattern(in); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOffModeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	c := openTest(t, dir, Off)
	for i := 0; i < 2; i++ {
		if got, err := c.Text(t.Context(), textKey("x"), constText("live", &calls)); err != nil || got != "live" {
			t.Fatalf("off: %q, %v", got, err)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("off mode called producer %d times, want 2", calls.Load())
	}
	if _, err := os.Stat(dir); err == nil {
		if fs := files(t, dir); len(fs) != 0 {
			t.Errorf("off mode wrote %v", fs)
		}
	}
}

func TestRefresh(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	clock := func(s string) Option {
		return withClock(func() time.Time { tm, _ := time.Parse(time.RFC3339, s); return tm })
	}
	openTest(t, dir, Record, clock("2026-01-01T00:00:00Z")).Text(t.Context(), textKey("q"), constText("old", &calls))
	digest, _ := textKey("q").Digest()
	entryPath := filepath.Join(dir, "llm", digest+".json")
	before, _ := os.ReadFile(entryPath)

	// Refreshing with the same answer changes nothing, not even created.
	c := openTest(t, dir, Refresh, clock("2026-02-02T00:00:00Z"))
	if got, err := c.Text(t.Context(), textKey("q"), constText("old", &calls)); err != nil || got != "old" {
		t.Fatalf("refresh: %q, %v", got, err)
	}
	after, _ := os.ReadFile(entryPath)
	if !bytes.Equal(before, after) {
		t.Errorf("refresh with an identical answer rewrote the entry:\n%s\n%s", before, after)
	}

	// A new answer overwrites; later calls in the same Cache are hits.
	c = openTest(t, dir, Refresh, clock("2026-03-03T00:00:00Z"))
	for i := 0; i < 3; i++ {
		if got, err := c.Text(t.Context(), textKey("q"), constText("new", &calls)); err != nil || got != "new" {
			t.Fatalf("refresh: %q, %v", got, err)
		}
	}
	if calls.Load() != 3 {
		t.Errorf("producer called %d times, want 3 (record, refresh, refresh once)", calls.Load())
	}
	if got, err := openTest(t, dir, Replay).Text(t.Context(), textKey("q"), nil); err != nil || got != "new" {
		t.Fatalf("replay after refresh: %q, %v", got, err)
	}
	if e, _ := os.ReadFile(entryPath); !bytes.Contains(e, []byte(`"created": "2026-03-03T00:00:00Z"`)) {
		t.Errorf("refreshed entry:\n%s", e)
	}
}

func TestProducerErrorNotStored(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("engine crashed")
	_, err := openTest(t, dir, Record).Text(t.Context(), textKey("x"), func(context.Context) (string, error) { return "", boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "llm from test") {
		t.Fatalf("error = %v, want it to wrap the producer's error", err)
	}
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("failed producer left files: %v", fs)
	}
}

func TestLargeFieldsShownAsDigest(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("You are a helpful booking assistant. ", 40)
	msgs := []any{}
	for i := 0; i < 200; i++ {
		msgs = append(msgs, map[string]any{"role": "user", "content": "turn " + strconv.Itoa(i)})
	}
	key := Key{Kind: "llm", Provider: "test", Fields: map[string]any{"system": long, "messages": msgs, "short": "kept"}}
	if _, err := openTest(t, dir, Record).Text(t.Context(), key, func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	digest, _ := key.Digest()
	raw, _ := os.ReadFile(filepath.Join(dir, "llm", digest+".json"))
	if len(raw) > 2000 {
		t.Errorf("entry is %d bytes; large fields should be summarised:\n%s", len(raw), raw)
	}
	var e struct{ Fields map[string]any }
	json.Unmarshal(raw, &e)
	sys, ok := e.Fields["system"].(map[string]any)
	if !ok || len(sys["sha256"].(string)) != 64 || !strings.HasPrefix(sys["preview"].(string), "You are a helpful") {
		t.Errorf("system field shown as %v", e.Fields["system"])
	}
	if m, ok := e.Fields["messages"].(map[string]any); !ok || m["sha256"] == nil {
		t.Errorf("messages shown as %v", e.Fields["messages"])
	}
	if e.Fields["short"] != "kept" {
		t.Errorf("short field shown as %v", e.Fields["short"])
	}
}

func TestNoAbsolutePathsOnDisk(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Record)
	c.Text(t.Context(), textKey("x"), func(context.Context) (string, error) { return "y", nil })
	c.Audio(t.Context(), Key{Kind: "tts", Provider: "p"}, func(context.Context) (Audio, error) { return Audio{Rate: 8000, PCM: []byte{0, 0}}, nil })
	wd, _ := os.Getwd()
	for _, f := range files(t, dir) {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		for _, p := range []string{dir, wd, os.TempDir()} {
			if bytes.Contains(b, []byte(p)) {
				t.Errorf("%s contains the absolute path %s", f, p)
			}
		}
	}
}

// corrupt damages the stored entry or body of textKey("x") with "answer".
func TestCorruptEntries(t *testing.T) {
	digest, _ := textKey("x").Digest()
	audioKey := Key{Kind: "tts", Provider: "p", Fields: map[string]any{"t": 1}}
	audioDigest, _ := audioKey.Digest()
	tests := []struct {
		name   string
		audio  bool
		damage func(t *testing.T, dir, entry, body string)
		want   string
	}{
		{"truncated entry", false, func(t *testing.T, dir, entry, body string) { truncate(t, entry, 40) }, "entry does not parse"},
		{"empty entry", false, func(t *testing.T, dir, entry, body string) { truncate(t, entry, 0) }, "entry does not parse"},
		{"merge conflict in entry", false, func(t *testing.T, dir, entry, body string) {
			b, _ := os.ReadFile(entry)
			os.WriteFile(entry, append([]byte("<<<<<<< HEAD\n"), b...), 0o644)
		}, "entry does not parse"},
		{"entry of another key", false, func(t *testing.T, dir, entry, body string) {
			editEntry(t, entry, func(e map[string]any) { e["key"] = strings.Repeat("0", 64) })
		}, "does not match its file name"},
		{"body path escapes", false, func(t *testing.T, dir, entry, body string) {
			editEntry(t, entry, func(e map[string]any) { e["body"].(map[string]any)["file"] = "../../etc/passwd" })
		}, "body file name"},
		{"missing body", false, func(t *testing.T, dir, entry, body string) { os.Remove(body) }, "is missing"},
		{"truncated body", false, func(t *testing.T, dir, entry, body string) { truncate(t, body, 3) }, "truncated?"},
		{"changed body", false, func(t *testing.T, dir, entry, body string) {
			b, _ := os.ReadFile(body)
			b[0] ^= 1
			os.WriteFile(body, b, 0o644)
		}, "does not match the SHA-256"},
		{"unknown format", false, func(t *testing.T, dir, entry, body string) {
			editEntry(t, entry, func(e map[string]any) { e["format"] = "voicetest-cache/v9" })
		}, "format"},
		// A WAV body whose hash was updated to match is still checked.
		{"bad WAV with matching hash", true, func(t *testing.T, dir, entry, body string) {
			b, _ := os.ReadFile(body)
			b[22] = 2 // stereo
			rehash(t, entry, body, b)
		}, "2 channels"},
		{"truncated WAV with matching hash", true, func(t *testing.T, dir, entry, body string) {
			b, _ := os.ReadFile(body)
			rehash(t, entry, body, b[:len(b)-2])
		}, "truncated?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openTest(t, dir, Record)
			var entry string
			if tc.audio {
				c.Audio(t.Context(), audioKey, func(context.Context) (Audio, error) { return Audio{Rate: 16000, PCM: testPCM(100, 1)}, nil })
				entry = filepath.Join(dir, "tts", audioDigest+".json")
			} else {
				c.Text(t.Context(), textKey("x"), func(context.Context) (string, error) { return "answer", nil })
				entry = filepath.Join(dir, "llm", digest+".json")
			}
			var body string
			for _, f := range files(t, dir) {
				if strings.Count(filepath.Base(f), ".") == 2 {
					body = filepath.Join(dir, f)
				}
			}
			tc.damage(t, dir, entry, body)
			for _, mode := range []Mode{Replay, Record} {
				var err error
				if tc.audio {
					_, err = openTest(t, dir, mode).Audio(t.Context(), audioKey, func(context.Context) (Audio, error) {
						return Audio{}, errors.New("producer must not be called")
					})
				} else {
					_, err = openTest(t, dir, mode).Text(t.Context(), textKey("x"), func(context.Context) (string, error) {
						return "", errors.New("producer must not be called")
					})
				}
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("%s: error = %v, want *CorruptError", mode, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.want) || !strings.Contains(msg, dir) || !strings.Contains(msg, "-voicetest.record") || !strings.Contains(msg, "remove it") {
					t.Errorf("%s: error lacks %q, the file or the command:\n%s", mode, tc.want, msg)
				}
			}
			// Refresh replaces the damaged entry.
			if !tc.audio {
				got, err := openTest(t, dir, Refresh).Text(t.Context(), textKey("x"), func(context.Context) (string, error) { return "fixed", nil })
				if err != nil || got != "fixed" {
					t.Fatalf("refresh over corrupt entry: %q, %v", got, err)
				}
				if got, err := openTest(t, dir, Replay).Text(t.Context(), textKey("x"), nil); err != nil || got != "fixed" {
					t.Fatalf("replay after refresh: %q, %v", got, err)
				}
			}
		})
	}
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	if err := os.Truncate(path, n); err != nil {
		t.Fatal(err)
	}
}

func editEntry(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	edit(e)
	raw, _ = json.Marshal(e)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rehash writes data as the body and updates the entry's size and hash to
// match, as a careless hand edit would.
func rehash(t *testing.T, entry, body string, data []byte) {
	t.Helper()
	os.WriteFile(body, data, 0o644)
	editEntry(t, entry, func(e map[string]any) {
		b := e["body"].(map[string]any)
		b["size"] = len(data)
		b["sha256"] = sha256Hex(data)
	})
}

func TestSingleFlight(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Record)
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]string, 32)
	errs := make([]error, 32)
	for i := range 32 {
		wg.Go(func() {
			results[i], errs[i] = c.Text(t.Context(), textKey("same"), func(context.Context) (string, error) {
				calls.Add(1)
				<-release
				return "only once", nil
			})
		})
	}
	// Let the goroutines pile up on the in-flight call, then release it.
	for c.inflight() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("producer called %d times for one key, want 1", calls.Load())
	}
	for i := range 32 {
		if errs[i] != nil || results[i] != "only once" {
			t.Errorf("caller %d: %q, %v", i, results[i], errs[i])
		}
	}
}

func (c *Cache) inflight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.flight)
}

// checkReadable loads the entry of key through a replay cache and fails
// unless it is absent or one of the allowed answers: never partial, never
// corrupt.
func checkReadable(c *Cache, key Key, allowed func(string) bool) error {
	got, err := c.Text(context.Background(), key, nil)
	var miss *MissError
	switch {
	case errors.As(err, &miss):
		return nil
	case err != nil:
		return err
	case !allowed(got):
		return fmt.Errorf("read %q, which no writer wrote", got)
	}
	return nil
}

func writerAnswer(s string) bool { return strings.HasPrefix(s, "writer ") }

// 32 goroutines, each with its own Cache (so no single flight), write
// different answers for the same key while a reader reads it.
func TestConcurrentWritersGoroutines(t *testing.T) {
	dir := t.TempDir()
	key := textKey("contended")
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	reader := openTest(t, dir, Replay)
	go func() {
		defer close(readErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := checkReadable(reader, key, writerAnswer); err != nil {
				readErr <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if _, err := Open(dir, WithMode(Refresh), WithUsageDir("")); err != nil {
				t.Error(err)
				return
			}
			for j := range 5 {
				c, _ := Open(dir, WithMode(Refresh), WithUsageDir(""))
				want := fmt.Sprintf("writer %d.%d %s", i, j, strings.Repeat("x", i*100))
				if got, err := c.Text(t.Context(), key, func(context.Context) (string, error) { return want, nil }); err != nil || got != want {
					t.Errorf("writer %d: %q, %v", i, got, err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readErr; err != nil {
		t.Fatalf("concurrent reader: %v", err)
	}
	if err := checkReadable(reader, key, writerAnswer); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Text(t.Context(), key, nil); err != nil {
		t.Fatalf("final entry: %v", err)
	}
	for _, f := range files(t, dir) {
		if strings.Contains(f, ".tmp-") {
			t.Errorf("temporary file left behind: %s", f)
		}
	}
}

// Four processes of eight writers each race on one entry while this
// process reads it.
func TestConcurrentWritersProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	key := textKey("contended")
	var cmds []*cmdResult
	for p := range 4 {
		cmd := helperCommand(t, "writers", "VOICETEST_CACHE_TEST_DIR="+dir, "VOICETEST_CACHE_TEST_PROC="+strconv.Itoa(p))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := &cmdResult{done: make(chan struct{})}
		go func() { r.err = cmd.Wait(); close(r.done) }()
		cmds = append(cmds, r)
	}
	reader := openTest(t, dir, Replay)
	for _, r := range cmds {
	wait:
		for {
			select {
			case <-r.done:
				break wait
			default:
				if err := checkReadable(reader, key, writerAnswer); err != nil {
					t.Fatalf("reader during multi-process writes: %v", err)
				}
			}
		}
		if r.err != nil {
			t.Fatalf("writer process: %v", r.err)
		}
	}
	if _, err := reader.Text(t.Context(), key, nil); err != nil {
		t.Fatalf("final entry: %v", err)
	}
}

type cmdResult struct {
	done chan struct{}
	err  error
}

// runWriters is the "writers" helper job: eight goroutines refresh one
// entry with distinct answers. It returns the exit code.
func runWriters() int {
	dir, proc := os.Getenv("VOICETEST_CACHE_TEST_DIR"), os.Getenv("VOICETEST_CACHE_TEST_PROC")
	var wg sync.WaitGroup
	var failed atomic.Bool
	for g := range 8 {
		wg.Go(func() {
			for j := range 5 {
				c, err := Open(dir, WithMode(Refresh), WithUsageDir(""))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
					return
				}
				want := fmt.Sprintf("writer %s.%d.%d %s", proc, g, j, strings.Repeat("y", g*300))
				got, err := c.Text(context.Background(), textKey("contended"), func(context.Context) (string, error) { return want, nil })
				if err != nil || got != want {
					fmt.Fprintf(os.Stderr, "writer %s.%d: %q, %v\n", proc, g, got, err)
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 1
	}
	return 0
}

func TestUsageTracking(t *testing.T) {
	dir, usage := t.TempDir(), t.TempDir()
	rec := openTest(t, dir, Record, WithUsageDir(usage))
	rec.Text(t.Context(), textKey("a"), func(context.Context) (string, error) { return "A", nil })
	rec.Text(t.Context(), textKey("b"), func(context.Context) (string, error) { return "B", nil })
	rec.Text(t.Context(), textKey("a"), func(context.Context) (string, error) { return "A", nil })
	rep := openTest(t, dir, Replay, WithUsageDir(usage))
	rep.Text(t.Context(), textKey("b"), nil)
	rep.Text(t.Context(), textKey("missing"), nil)

	raw, err := os.ReadFile(filepath.Join(usage, "usage-"+strconv.Itoa(os.Getpid())+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	da, _ := textKey("a").Digest()
	db, _ := textKey("b").Digest()
	want := []string{filepath.Join(dir, "llm", da+".json"), filepath.Join(dir, "llm", db+".json"), filepath.Join(dir, "llm", db+".json")}
	if !slices.Equal(lines, want) {
		t.Errorf("usage lines:\n%s\nwant (one per entry per Cache, misses excluded):\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// A usage directory that cannot be written is an error, not a silent
	// gap that would let voicetest-update prune a used entry.
	bad := openTest(t, dir, Replay, WithUsageDir(filepath.Join(usage, "no", "such", "dir")))
	if _, err := bad.Text(t.Context(), textKey("a"), nil); err == nil || !strings.Contains(err.Error(), EnvUsage) {
		t.Errorf("unwritable usage dir: error = %v", err)
	}
}

func TestClosedCache(t *testing.T) {
	c := openTest(t, t.TempDir(), Record)
	c.Close()
	if _, err := c.Text(t.Context(), textKey("a"), func(context.Context) (string, error) { return "A", nil }); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("use after Close: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\"): want an error")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f, WithMode(Record)); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("Open(file): %v", err)
	}
	if _, err := Open(t.TempDir(), WithMode(Mode(9))); err == nil {
		t.Error("Open with Mode(9): want an error")
	}
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := openTest(t, t.TempDir(), Record).Text(ctx, textKey("a"), func(context.Context) (string, error) { return "A", nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestForTest(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(EnvMode, "record")
	t.Setenv(EnvUsage, "")
	c := ForTest(t)
	if c.Mode() != Record && *cacheFlag == "" && !*recordFlag {
		t.Errorf("mode = %v, want record from %s", c.Mode(), EnvMode)
	}
	if c.Dir() != DefaultDir {
		t.Errorf("dir = %q", c.Dir())
	}
	if _, err := c.Text(t.Context(), textKey("a"), func(context.Context) (string, error) { return "A", nil }); err != nil {
		t.Fatal(err)
	}
	if fs := files(t, DefaultDir); len(fs) != 2 {
		t.Errorf("files under %s: %v", DefaultDir, fs)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestNilProducer(t *testing.T) {
	c := openTest(t, t.TempDir(), Record)
	if _, err := c.Text(t.Context(), textKey("a"), nil); !errors.Is(err, errNoProducer) {
		t.Errorf("Text with nil producer: %v", err)
	}
	if _, err := c.Audio(t.Context(), textKey("a"), nil); !errors.Is(err, errNoProducer) {
		t.Errorf("Audio with nil producer: %v", err)
	}
	if _, err := DoJSON[int](t.Context(), c, textKey("a"), nil); !errors.Is(err, errNoProducer) {
		t.Errorf("DoJSON with nil producer: %v", err)
	}
}
