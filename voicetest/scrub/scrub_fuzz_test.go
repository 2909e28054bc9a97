package scrub_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// reference blanks, in a decoded JSON tree, what Scrubber.JSON must blank:
// a non-empty string or a number under a credential name, and in every
// other string and every key what the text shows by position (a nil
// Scrubber's String).
func reference(v any) any {
	var none *scrub.Scrubber
	switch x := v.(type) {
	case string:
		return none.String(x)
	case []any:
		for i := range x {
			x[i] = reference(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch e := e.(type) {
			case string:
				if e != "" && scrub.Name(k) {
					out[none.String(k)] = scrub.Placeholder
					continue
				}
			case json.Number:
				if scrub.Name(k) {
					out[none.String(k)] = scrub.Placeholder
					continue
				}
			}
			out[none.String(k)] = reference(e)
		}
		return out
	}
	return v
}

// blankedFrom reports whether got is want with some runs replaced by
// scrub.Placeholder, in trees: what the text rules, which read the JSON
// text with its escapes, may leave of a string that holds escapes.
func blankedFrom(got, want any) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		parts := strings.Split(g, scrub.Placeholder)
		if len(parts) < 2 || !strings.HasPrefix(w, parts[0]) || !strings.HasSuffix(w[len(parts[0]):], parts[len(parts)-1]) {
			return false
		}
		rest := w[len(parts[0]) : len(w)-len(parts[len(parts)-1])]
		for _, p := range parts[1 : len(parts)-1] {
			i := strings.Index(rest, p)
			if i < 0 {
				return false
			}
			rest = rest[i+len(p):]
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !blankedFrom(g[i], w[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, we := range w {
			ge, ok := g[k]
			if !ok {
				return false // a blanked key: not worth matching
			}
			if !blankedFrom(ge, we) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

// FuzzScrubJSON checks the allocation-free JSON scanner behind
// Scrubber.JSON and AddJSON against encoding/json on arbitrary input: no
// panic; valid JSON stays valid; exactly the credential members are
// blanked; and a value learned from a document is gone from it.
func FuzzScrubJSON(f *testing.F) {
	for _, s := range []string{
		`{"api_key":"sk-123456","model":"m"}`,
		`{"a":[{"password":"hunter22"},{"token":12345678}],"max_tokens":5}`,
		`{"pass\u0077ord":"escaped-key","x":"y"}`,
		`[{"secret":{"type":"string"}},"token",{"token":""}]`,
		`{"client_secret":"abc\"def\\ghi"}`, `{}`, `[]`, `"x"`, `1e5`, `null`,
		`{"a":`, `{"token":"x"`, `{"k":[[[[[[[[[[]]]]]]]]]]}`, ` { "Auth" : "abcdefgh" } `,
		`{"h":"Authorization: Bearer sk-abc12345","u":"wss://h/ws?a=1&token=t0k3n-xyz","b":"Basic dXNlcjpwYXNzd29yZA=="}`,
		`{"u":"wss://h/ws?a=1\u0026api_key=k3y-value\ntoken=abc123","Bearer abcdefgh1":1,"s":"secret=s3cr3t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(runOne)
}

func runOne(t *testing.T, data []byte) {
	{
		var sc *scrub.Scrubber
		out := sc.JSON(data)
		if !json.Valid(data) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q, not JSON", data, out)
		}
		got := decode(t, out)
		if bytes.IndexByte(data, '\\') < 0 {
			if want := reference(decode(t, data)); !reflect.DeepEqual(got, want) {
				t.Fatalf("JSON(%q)\n = %q\nwant the tree %#v", data, out, want)
			}
		} else if want := reference(decode(t, data)); !blankedFrom(got, want) && !blankedFrom(got, decode(t, data)) {
			t.Fatalf("JSON(%q)\n = %q\nwant the tree %#v with runs blanked", data, out, want)
		}
		learner := scrub.New()
		learner.AddJSON(data)
		cleaned := learner.JSON(data)
		var vals []string
		collect(decode(t, data), &vals)
		for _, v := range vals {
			if len(v) >= scrub.MinLen && bytes.Contains(cleaned, []byte(v)) && !strings.Contains(scrub.Placeholder, v) {
				t.Fatalf("the learned secret %q is still in %q", v, cleaned)
			}
		}
	}
}

// collect appends the string values of the credential members of a tree.
func collect(v any, out *[]string) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collect(e, out)
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && scrub.Name(k) {
				*out = append(*out, s)
			}
			collect(e, out)
		}
	}
}
