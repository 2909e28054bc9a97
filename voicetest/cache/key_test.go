package cache

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// stableKey is a key whose digest is pinned below: if the canonical
// encoding ever changes, every committed cache would silently miss, so the
// change must be deliberate (and bump keyFormat).
func stableKey() Key {
	return Key{
		Kind:     "tts",
		Provider: "openai",
		Model:    "gpt-4o-mini-tts",
		Fields: map[string]any{
			"voice":        "alloy",
			"input":        "Hello <world> & friends",
			"speed":        1.0,
			"temperature":  0.7,
			"instructions": []any{"calm", map[string]any{"pace": 2, "pitch": -0.5}},
			"audio":        AudioDigest(24000, []byte{1, 0, 2, 0}),
		},
	}
}

// stableDigest was cross-checked with Python: sha256 of
// "voicetest-cache-key/v1\n" + json.dumps(obj, sort_keys=True,
// separators=(",", ":"), ensure_ascii=False).
const stableDigest = "3b766a3531c8f6ba9d79f94ce9e6a2c87efa07a094f5b3d35f19c4b6bb83b9e0"

func TestKeyDigestStable(t *testing.T) {
	got, err := stableKey().Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got != stableDigest {
		enc, _ := stableKey().canonical()
		t.Errorf("digest = %s, want %s\ncanonical encoding:\n%s", got, stableDigest, enc)
	}
}

// The same key built with equivalent values (1 vs 1.0, struct vs map, a
// different map insertion order) has the same digest.
func TestKeyDigestEquivalentValues(t *testing.T) {
	type tone struct {
		Pitch float64 `json:"pitch"`
		Pace  int     `json:"pace"`
	}
	k := stableKey()
	k.Fields = map[string]any{
		"temperature":  json.Number("0.70"),
		"speed":        1,
		"instructions": []any{"calm", tone{Pitch: -0.5, Pace: 2}},
		"input":        "Hello <world> & friends",
		"audio":        AudioDigest(24000, []byte{1, 0, 2, 0}),
		"voice":        "alloy",
	}
	got, err := k.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got != stableDigest {
		t.Errorf("equivalent key digest = %s, want %s", got, stableDigest)
	}
}

func TestKeyDigestDistinguishes(t *testing.T) {
	base, _ := stableKey().Digest()
	mutations := map[string]func(*Key){
		"kind":     func(k *Key) { k.Kind = "stt" },
		"provider": func(k *Key) { k.Provider = "flite" },
		"model":    func(k *Key) { k.Model = "tts-1" },
		"field":    func(k *Key) { k.Fields["voice"] = "echo" },
		"float":    func(k *Key) { k.Fields["temperature"] = 0.70000001 },
		"added":    func(k *Key) { k.Fields["format"] = "wav" },
		"audio":    func(k *Key) { k.Fields["audio"] = AudioDigest(16000, []byte{1, 0, 2, 0}) },
		"model in fields vs model": func(k *Key) {
			k.Model = ""
			k.Fields["model"] = "gpt-4o-mini-tts"
		},
	}
	for name, mutate := range mutations {
		k := stableKey()
		mutate(&k)
		got, err := k.Digest()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got == base {
			t.Errorf("changing the %s did not change the digest", name)
		}
	}
}

func TestKeyDigestErrors(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		want string
	}{
		{"no kind", Key{Provider: "p"}, "no Kind"},
		{"bad kind", Key{Kind: "../tts", Provider: "p"}, "Kind"},
		{"upper kind", Key{Kind: "TTS", Provider: "p"}, "Kind"},
		{"no provider", Key{Kind: "tts"}, "no Provider"},
		{"api key field", Key{Kind: "llm", Provider: "p", Fields: map[string]any{"api_key": "x"}}, "looks like a secret"},
		{"auth token field", Key{Kind: "llm", Provider: "p", Fields: map[string]any{"authToken": "x"}}, "looks like a secret"},
		{"NaN field", Key{Kind: "llm", Provider: "p", Fields: map[string]any{"t": nanValue()}}, "no JSON encoding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.key.Digest()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Digest() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Counts of tokens are parameters, not secrets.
	if _, err := (Key{Kind: "llm", Provider: "p", Fields: map[string]any{"max_tokens": 5, "max_completion_tokens": 9}}).Digest(); err != nil {
		t.Errorf("max_tokens rejected: %v", err)
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestAudioDigest(t *testing.T) {
	a := AudioDigest(24000, []byte{1, 2, 3, 4})
	if !strings.HasPrefix(a, "pcm16le/24000/sha256:") || len(a) != len("pcm16le/24000/sha256:")+64 {
		t.Errorf("AudioDigest = %q, want pcm16le/24000/sha256:<64 hex>", a)
	}
	if a == AudioDigest(16000, []byte{1, 2, 3, 4}) {
		t.Error("AudioDigest ignores the rate")
	}
	if a == AudioDigest(24000, []byte{1, 2, 3, 5}) {
		t.Error("AudioDigest ignores the samples")
	}
	if a != AudioDigest(24000, []byte{1, 2, 3, 4}) {
		t.Error("AudioDigest is not deterministic")
	}
}

// A fresh process (new map seeds, new heap) computes the same digest.
func TestKeyDigestAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	for i := 0; i < 3; i++ {
		out, err := helperCommand(t, "digest").Output()
		if err != nil {
			t.Fatalf("helper process: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != stableDigest {
			t.Fatalf("process %d computed %q, want %s", i, got, stableDigest)
		}
	}
}

// helperCommand runs this test binary as a helper process doing job.
func helperCommand(t *testing.T, job string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{"VOICETEST_CACHE_HELPER=" + job}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestHelperProcess is not a real test: helperCommand runs it in a child
// process to do one job.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("VOICETEST_CACHE_HELPER") {
	case "":
		t.Skip("only runs as a helper process")
	case "digest":
		d, err := stableKey().Digest()
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString(d + "\n")
		os.Exit(0)
	case "writers":
		os.Exit(runWriters())
	}
	os.Exit(3)
}
