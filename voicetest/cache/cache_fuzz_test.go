package cache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// The fuzzers feed damaged entry and body files to a cache in replay mode:
// it must never panic, never answer anything but what was recorded, and
// report every damaged file as a *CorruptError.

var fuzzTextKey = cache.Key{Kind: "tts", Provider: "fuzz", Model: "m1", Fields: map[string]any{"text": "hello"}}
var fuzzAudioKey = cache.Key{Kind: "tts", Provider: "fuzz", Model: "m1", Fields: map[string]any{"text": "hello", "audio": true}}

const fuzzBody = "hello, world"

// recordEntry records answer for key in a new cache under dir and returns
// the entry file's path and content.
func recordText(t testing.TB, dir string) (string, []byte) {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(cache.Record))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Text(context.Background(), fuzzTextKey, func(context.Context) (string, error) { return fuzzBody, nil }); err != nil {
		t.Fatal(err)
	}
	return entryFile(t, dir, fuzzTextKey)
}

func entryFile(t testing.TB, dir string, k cache.Key) (string, []byte) {
	t.Helper()
	d, err := k.Digest()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, k.Kind, d+".json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, raw
}

func replay(t testing.TB, dir string) *cache.Cache {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(cache.Replay))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// copyDir copies the files of a recorded cache (one level of kind
// directories) into a new directory; cheaper than recording (no fsync).
func copyDir(t testing.TB, from string) string {
	t.Helper()
	to := t.TempDir()
	kinds, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		files, err := os.ReadDir(filepath.Join(from, k.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(to, k.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(from, k.Name(), f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, k.Name(), f.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return to
}

func FuzzCacheEntry(f *testing.F) {
	template := f.TempDir()
	_, valid := recordText(f, template)
	f.Add(valid)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format":"voicetest-cache/1"}`))
	f.Add(bytes.Replace(valid, []byte(`"size": 12`), []byte(`"size": -1`), 1))
	f.Add(bytes.Replace(valid, []byte(`.txt"`), []byte(`.txt/../../x"`), 1))
	f.Add(valid[:len(valid)/2])
	f.Fuzz(func(t *testing.T, entry []byte) {
		dir := copyDir(t, template)
		path, _ := entryFile(t, dir, fuzzTextKey)
		if err := os.WriteFile(path, entry, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := replay(t, dir).Text(context.Background(), fuzzTextKey, nil)
		if err == nil {
			if got != fuzzBody {
				t.Fatalf("answered %q from a damaged entry; the only recorded answer is %q", got, fuzzBody)
			}
			return
		}
		var ce *cache.CorruptError
		if !errors.As(err, &ce) || ce.Path == "" || !strings.Contains(err.Error(), ce.Path) {
			t.Fatalf("error %v (%T) for a damaged entry, want a *CorruptError naming the file", err, err)
		}
	})
}

// canonicalWAV is the WAV encoding the cache stores audio in.
func canonicalWAV(rate int, samples []int16) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+2*len(samples)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, uint32(2*len(samples)))
	binary.Write(&b, le, samples)
	return b.Bytes()
}

func FuzzCacheAudioBody(f *testing.F) {
	f.Add(canonicalWAV(16000, []int16{1, -2, 3, -4}), 16000, 4)
	f.Add(canonicalWAV(8000, nil), 8000, 0)
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"), 16000, 0)
	f.Add(canonicalWAV(24000, []int16{7})[:45], 24000, 1)
	template := f.TempDir()
	c, err := cache.Open(template, cache.WithMode(cache.Record))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := c.Audio(context.Background(), fuzzAudioKey, func(context.Context) (cache.Audio, error) {
		return cache.Audio{Rate: 16000, PCM: []byte{1, 0, 2, 0}}, nil
	}); err != nil {
		f.Fatal(err)
	}
	c.Close()
	f.Fuzz(func(t *testing.T, body []byte, rate, samples int) {
		dir := copyDir(t, template)
		// Replace the body by the fuzzed bytes and make the entry agree
		// with them, so that only the body's content is wrong.
		path, raw := entryFile(t, dir, fuzzAudioKey)
		var e map[string]any
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		hexSum := hex.EncodeToString(sum[:])
		d, _ := fuzzAudioKey.Digest()
		name := d + "." + hexSum[:12] + ".wav"
		e["body"] = map[string]any{"file": name, "type": "audio/wav", "size": len(body), "sha256": hexSum}
		e["response"] = map[string]any{"rate": rate, "samples": samples}
		raw, err = json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := replay(t, dir).Audio(context.Background(), fuzzAudioKey, nil)
		if err != nil {
			var ce *cache.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) for a damaged body, want a *CorruptError", err, err)
			}
			return
		}
		if a.Rate != rate || a.Rate <= 0 || len(a.PCM)%2 != 0 || len(a.PCM)/2 != samples || len(body) != 44+len(a.PCM) || !bytes.Equal(a.PCM, body[44:]) {
			t.Fatalf("answered rate %d with %d bytes from a %d-byte body (entry: rate %d, %d samples)", a.Rate, len(a.PCM), len(body), rate, samples)
		}
	})
}
