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
// a non-empty string or a number under a credential name.
func reference(v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = reference(x[i])
		}
	case map[string]any:
		for k, e := range x {
			switch e := e.(type) {
			case string:
				if e != "" && scrub.Name(k) {
					x[k] = scrub.Placeholder
				}
			case json.Number:
				if scrub.Name(k) {
					x[k] = scrub.Placeholder
				}
			default:
				x[k] = reference(e)
			}
		}
	}
	return v
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
		want := reference(decode(t, data))
		if got := decode(t, out); !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON(%q)\n = %q\nwant the tree %#v", data, out, want)
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
