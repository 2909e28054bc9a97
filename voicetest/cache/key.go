package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Key names one cached answer: what kind of call it was, which provider and
// model answered, and every input that determines the answer.
//
// Fields holds exactly the inputs that change the answer (voice, speed,
// temperature, input text, messages, tools, audio by AudioDigest, …) and
// nothing else: no API keys, request ids, timestamps or user agents. A field
// whose name looks like a secret (api_key, token, password, …) is rejected by
// Digest. Field values may be any JSON-encodable value; they are encoded
// canonically, so map order, 1 versus 1.0 and struct versus map make no
// difference.
type Key struct {
	// Kind is the kind of call: "tts", "stt", "llm", "judge", "http", …
	// It must be lower case letters, digits, '.', '_' or '-', because it
	// names the directory the entry is stored in.
	Kind string
	// Provider names who answers: "openai", "flite", "pocketsphinx", …
	Provider string
	// Model is the model or voice engine version, if any.
	Model string
	// Fields are the inputs that determine the answer.
	Fields map[string]any
	// Env names, for each input of the key that the environment chose
	// rather than the code ("model", "provider", a field's name), the
	// variable that chose it: {"model": "VOICETEST_LLM_MODEL"}. It is not
	// part of the digest. A replay miss names those variables, and the
	// record command it suggests sets them to the key's values, so that
	// the command records this very entry on any machine. Variables whose
	// names look like secrets are never shown.
	Env map[string]string
}

// keyFormat is mixed into every digest so that a future change of the
// canonical encoding cannot silently collide with old entries.
const keyFormat = "voicetest-cache-key/v1"

// Digest returns the key's hex SHA-256 over its canonical encoding. It
// fails if Kind or Provider is invalid, a field name looks like a secret, or
// a field value cannot be encoded as JSON (NaN, channels, functions, …).
func (k Key) Digest() (string, error) {
	enc, err := k.canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(enc)
	return hex.EncodeToString(sum[:]), nil
}

// canonical validates k and returns the bytes its digest is computed over.
func (k Key) canonical() ([]byte, error) {
	if err := validKind(k.Kind); err != nil {
		return nil, err
	}
	if strings.TrimSpace(k.Provider) == "" {
		return nil, fmt.Errorf("voicetest/cache: key of kind %q has no Provider; set it to who answers, e.g. \"openai\" or \"flite\"", k.Kind)
	}
	for name := range k.Fields {
		if secretName(name) {
			return nil, fmt.Errorf("voicetest/cache: key field %q looks like a secret; secrets must never enter a cache key or file, so leave it out", name)
		}
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, keyFormat...)
	buf = append(buf, '\n')
	buf = append(buf, `{"fields":`...)
	var err error
	if k.Fields == nil {
		buf = append(buf, "{}"...)
	} else if buf, err = appendCanonical(buf, k.Fields); err != nil {
		return nil, fmt.Errorf("voicetest/cache: key field %w", err)
	}
	buf = append(buf, `,"kind":`...)
	buf = appendString(buf, k.Kind)
	buf = append(buf, `,"model":`...)
	buf = appendString(buf, k.Model)
	buf = append(buf, `,"provider":`...)
	buf = appendString(buf, k.Provider)
	buf = append(buf, '}')
	return buf, nil
}

func validKind(kind string) error {
	if kind == "" {
		return errors.New(`voicetest/cache: key has no Kind; set it to the kind of call, e.g. "tts", "stt" or "llm"`)
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '.' || c == '_' || c == '-'))
		if !ok {
			return fmt.Errorf("voicetest/cache: key Kind %q is invalid: use lower case letters, digits, '.', '_' and '-', starting with a letter or digit", kind)
		}
	}
	if len(kind) > 64 {
		return fmt.Errorf("voicetest/cache: key Kind %q is longer than 64 bytes", kind)
	}
	return nil
}

// secretName reports whether a field, header or query parameter name looks
// like it carries a credential (scrub.Name). Counts such as "max_tokens"
// are not secrets.
func secretName(name string) bool { return scrub.Name(name) }

// AudioDigest returns a content hash of PCM16 little-endian mono audio at a
// sample rate, to put audio into a Key field instead of the samples:
// "pcm16le/<rate>/sha256:<hex>". Equal samples at the same rate give equal
// digests on every machine.
func AudioDigest(rate int, pcm16le []byte) string {
	h := sha256.New()
	var hdr [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(int64(rate)))
	h.Write([]byte("pcm16le\n"))
	h.Write(hdr[:])
	h.Write(pcm16le)
	return "pcm16le/" + strconv.Itoa(rate) + "/sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Limits for what an entry file shows of a key's fields. Longer values are
// shown as a digest with a short preview, so entries stay readable in review.
const (
	maxShownString = 240  // runes of a string field value
	maxShownValue  = 4096 // bytes of a canonical object or array
	previewRunes   = 80
)

// displayFields returns the key's fields as they are written to an entry
// file: a canonical JSON tree in which long strings and large objects are
// replaced by {"sha256", "size", "preview"} summaries.
func displayFields(fields map[string]any) (any, error) {
	if len(fields) == 0 {
		return map[string]any{}, nil
	}
	raw, err := canonical(fields)
	if err != nil {
		return nil, err
	}
	tree, err := decodeTree(raw)
	if err != nil {
		return nil, err
	}
	return summarise(tree), nil
}

func summarise(v any) any {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) <= maxShownString {
			return x
		}
		return digestSummary([]byte(x), x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = summarise(e)
		}
		if enc, _ := canonical(out); len(enc) > maxShownValue {
			raw, _ := canonical(x)
			return digestSummary(raw, string(raw))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = summarise(e)
		}
		if enc, _ := canonical(out); len(enc) > maxShownValue {
			raw, _ := canonical(x)
			return digestSummary(raw, string(raw))
		}
		return out
	}
	return v
}

func digestSummary(data []byte, text string) map[string]any {
	sum := sha256.Sum256(data)
	return map[string]any{
		"sha256":  hex.EncodeToString(sum[:]),
		"size":    len(data),
		"preview": preview(text, previewRunes),
	}
}

// preview returns the first n runes of s, with "…" when it was cut.
func preview(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}

// inputs lists the key's inputs for a miss, each with the environment
// variable that chose it, if any: "model llama3 (from
// VOICETEST_LLM_MODEL)".
func (k Key) inputs() string {
	from := func(input string) string {
		if v := k.Env[input]; v != "" && !secretName(v) {
			return " (from " + v + ")"
		}
		return ""
	}
	parts := []string{"kind " + k.Kind + from("kind"), "provider " + k.Provider + from("provider")}
	if k.Model != "" {
		parts = append(parts, "model "+k.Model+from("model"))
	}
	names := make([]string, 0, len(k.Fields))
	for name := range k.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		parts = append(parts, "field "+name+from(name))
	}
	return strings.Join(parts, ", ")
}

// envAssignments returns the assignments that make the environment choose
// the key's inputs as it did: "VOICETEST_LLM_MODEL=llama3 ", sorted, with
// values quoted for a POSIX shell when they need it.
func (k Key) envAssignments() string {
	var out []string
	for input, v := range k.Env {
		if v == "" || secretName(v) {
			continue
		}
		var val string
		switch input {
		case "kind":
			val = k.Kind
		case "provider":
			val = k.Provider
		case "model":
			val = k.Model
		default:
			f, ok := k.Fields[input]
			if !ok {
				continue
			}
			if s, ok := f.(string); ok {
				val = s
			} else if enc, err := canonical(f); err == nil {
				val = string(enc)
			} else {
				continue
			}
		}
		out = append(out, v+"="+shellQuote(val)+" ")
	}
	slices.Sort(out)
	return strings.Join(out, "")
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:@+,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// summary renders a key as one short line for error messages.
func (k Key) summary() string {
	var b strings.Builder
	b.WriteString(k.Kind)
	b.WriteString(" ")
	b.WriteString(k.Provider)
	if k.Model != "" {
		b.WriteString("/")
		b.WriteString(k.Model)
	}
	names := make([]string, 0, len(k.Fields))
	for name := range k.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		enc, err := canonical(k.Fields[name])
		if err != nil {
			continue
		}
		b.WriteString(" ")
		b.WriteString(name)
		b.WriteString("=")
		b.WriteString(preview(string(enc), 60))
		if b.Len() > 400 {
			b.WriteString(" …")
			break
		}
	}
	return b.String()
}
