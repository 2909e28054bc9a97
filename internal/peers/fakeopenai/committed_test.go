package fakeopenai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
)

// llmEntry is what the scan reads of a committed LLM cache entry: the key's
// provider and model (its metadata file) and the producer its answer names
// (the body's "model", voicetest.ChatResponse.Model).
type llmEntry struct {
	path, provider, model, producer string
}

// committedLLMEntries reads every LLM entry of every
// testdata/voicetest/cache under root.
func committedLLMEntries(root string) ([]llmEntry, error) {
	var out []llmEntry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Base(filepath.Dir(path)) != "llm" || !strings.HasSuffix(filepath.ToSlash(filepath.Dir(filepath.Dir(path))), "testdata/voicetest/cache") ||
			!strings.HasSuffix(path, ".json") {
			return nil
		}
		var meta struct {
			Format, Kind, Provider, Model string
			Body                          struct{ File string }
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if json.Unmarshal(b, &meta) != nil || !strings.HasPrefix(meta.Format, "voicetest-cache/") {
			return nil // a body, not an entry's metadata
		}
		if meta.Kind != "llm" {
			return nil
		}
		e := llmEntry{path: path, provider: meta.Provider, model: meta.Model}
		if meta.Body.File == "" {
			return fmt.Errorf("%s: an llm entry with no body file", path)
		}
		body, err := os.ReadFile(filepath.Join(filepath.Dir(path), meta.Body.File))
		if err != nil {
			return fmt.Errorf("%s: its body: %w", path, err)
		}
		var resp struct{ Model string }
		if err := json.Unmarshal(body, &resp); err != nil {
			return fmt.Errorf("%s: its body is not a chat answer: %w", path, err)
		}
		e.producer = resp.Model
		out = append(out, e)
		return nil
	})
	return out, err
}

// checkProducer says what is wrong with an entry whose key does not name
// what produced its answer: every entry must record its producer; one the
// double produced must be keyed by the double's provider and model; one
// keyed by the double must have been produced by it; and any other must
// be keyed by the model that answered (OpenAI reports the snapshot, e.g.
// "gpt-4o-mini-2024-07-18" for "gpt-4o-mini").
func checkProducer(e llmEntry) error {
	double := e.producer == fakeopenai.Model
	switch {
	case e.producer == "":
		return errors.New("records no producer (its body has no \"model\"): it was recorded before answers named their model; record it again")
	case double && (e.provider != fakeopenai.Provider || e.model != fakeopenai.Model):
		return fmt.Errorf("was produced by the test double %q but is keyed as provider %q, model %q: record it with llm.WithProvider(fakeopenai.Provider), llm.WithModel(fakeopenai.Model)",
			fakeopenai.Model, e.provider, e.model)
	case !double && (e.provider == fakeopenai.Provider || e.model == fakeopenai.Model):
		return fmt.Errorf("is keyed as the test double (provider %q, model %q) but was produced by %q", e.provider, e.model, e.producer)
	case !double && e.producer != e.model && !isSnapshot(e.producer, e.model):
		return fmt.Errorf("is keyed as model %q but was produced by %q", e.model, e.producer)
	}
	return nil
}

// isSnapshot says whether producer is a dated snapshot of model, as OpenAI
// names them: "gpt-4o-mini-2024-07-18" of "gpt-4o-mini", but not of
// "gpt-4o".
func isSnapshot(producer, model string) bool {
	rest, ok := strings.CutPrefix(producer, model+"-")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// TestCommittedLLMEntriesNameTheirProducer scans every committed LLM cache
// entry of the module: none may name a model that did not produce it, so
// an answer scripted by this double is never presented as a model's.
func TestCommittedLLMEntriesNameTheirProducer(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	entries, err := committedLLMEntries(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("found no committed llm cache entry: the scan looks in the wrong place")
	}
	byDouble := 0
	for _, e := range entries {
		rel, _ := filepath.Rel(root, e.path)
		if err := checkProducer(e); err != nil {
			t.Errorf("%s %v", rel, err)
		}
		if e.producer == fakeopenai.Model {
			byDouble++
		}
	}
	t.Logf("%d committed llm entries, %d of them the test double's", len(entries), byDouble)
}

// TestCheckProducerCatchesMislabels shows that the scan can fail: an entry
// of the double's keyed as gpt-4o-mini (as the committed entries were
// before answers named their producer) is reported, and so are the other
// mislabels.
func TestCheckProducerCatchesMislabels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pkg", "testdata", "voicetest", "cache", "llm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(key, provider, model, producer string) {
		t.Helper()
		meta := fmt.Sprintf(`{"format":"voicetest-cache/v1","key":%q,"kind":"llm","provider":%q,"model":%q,"body":{"file":%q}}`,
			key, provider, model, key+".body.json")
		body := `{"message":{"role":"assistant","content":"hi"}}`
		if producer != "" {
			body = fmt.Sprintf(`{"message":{"role":"assistant","content":"hi"},"model":%q}`, producer)
		}
		for name, data := range map[string]string{key + ".json": meta, key + ".body.json": body} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("a", "openai", "gpt-4o-mini", fakeopenai.Model)                       // the double's answer named as gpt-4o-mini
	write("b", "openai", "gpt-4o-mini", "")                                     // no producer
	write("c", fakeopenai.Provider, fakeopenai.Model, "gpt-4o-mini-2024-07-18") // a model's answer named as the double
	write("d", "openai", "gpt-4o", "gpt-4o-mini-2024-07-18")                    // another model
	write("e", "openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18")               // right
	write("f", fakeopenai.Provider, fakeopenai.Model, fakeopenai.Model)         // right
	entries, err := committedLLMEntries(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(dir)))))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		if err := checkProducer(e); err != nil {
			got[strings.TrimSuffix(filepath.Base(e.path), ".json")] = err.Error()
		}
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if got[k] == "" {
			t.Errorf("entry %s: no error, want one", k)
		}
	}
	for _, k := range []string{"e", "f"} {
		if got[k] != "" {
			t.Errorf("entry %s: %s, want no error", k, got[k])
		}
	}
	if !isSnapshot("gpt-4o-mini-2024-07-18", "gpt-4o-mini") || isSnapshot("gpt-4o-mini-2024-07-18", "gpt-4o") {
		t.Error("isSnapshot does not tell a snapshot from another model")
	}
	if !strings.Contains(got["a"], `produced by the test double "fakeopenai-double" but is keyed as provider "openai", model "gpt-4o-mini"`) {
		t.Errorf("entry a: %q does not say what is wrong", got["a"])
	}
	if len(entries) != 6 {
		t.Errorf("read %d entries, want 6", len(entries))
	}
}
