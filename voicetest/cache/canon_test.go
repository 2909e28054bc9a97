package cache

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCanonicalEncoding(t *testing.T) {
	type pair struct {
		B int     `json:"b"`
		A float64 `json:"a"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"sorted keys", map[string]any{"b": 1, "a": 2, "c": map[string]any{"z": true, "y": false}}, `{"a":2,"b":1,"c":{"y":false,"z":true}}`},
		{"integral float is integer", 1.0, `1`},
		{"0.7 stays 0.7", 0.7, `0.7`},
		{"float32 0.7 stays 0.7", float32(0.7), `0.7`},
		{"negative zero", math.Copysign(0, -1), `0`},
		{"large float exponent", 1e21, `1e+21`},
		{"below exponent limit", 1e20, `100000000000000000000`},
		{"tiny float", 1e-7, `1e-7`},
		{"small float", 0.000001, `0.000001`},
		{"number literal with exponent", json.Number("7e-1"), `0.7`},
		{"number literal 1.0", json.Number("1.0"), `1`},
		{"big integer literal exact", json.Number("12345678901234567890123"), `12345678901234567890123`},
		{"integer literal leading zero stripped", json.Number("-0"), `0`},
		{"no HTML escaping", "<a&b>", `"<a&b>"`},
		{"control characters", "a\nb\t\"c\"\\\x01", `"a\nb\t\"c\"\\\u0001"`},
		{"invalid UTF-8 replaced", "a\xffb", "\"a\ufffdb\""},
		{"line separator escaped", "a\u2028b", `"a\u2028b"`},
		{"struct equals map", pair{B: 2, A: 1.5}, `{"a":1.5,"b":2}`},
		{"raw message re-encoded", json.RawMessage(`{"y": 1.50, "x": [1, 2.0]}`), `{"x":[1,2],"y":1.5}`},
		{"string slice", []string{"b", "a"}, `["b","a"]`},
		{"typed map", map[string]int{"b": 1, "a": 2}, `{"a":2,"b":1}`},
		{"string map", map[string]string{"b": "1", "a": "2"}, `{"a":"2","b":"1"}`},
		{"uint64 max", uint64(math.MaxUint64), `18446744073709551615`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := canonical(tc.in)
			if err != nil {
				t.Fatalf("canonical(%#v): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("canonical(%#v) = %s, want %s", tc.in, got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("canonical(%#v) = %s is not valid JSON", tc.in, got)
			}
		})
	}
}

func TestCanonicalRejectsUnencodable(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"x": math.Inf(-1)}, make(chan int), func() {}} {
		if got, err := canonical(v); err == nil {
			t.Errorf("canonical(%T) = %s, want an error", v, got)
		}
	}
	if _, err := canonical(json.RawMessage(`{"a":1} trailing`)); err == nil {
		t.Error("canonical of JSON with trailing data: want an error")
	}
}

// Floats must round-trip: parsing the canonical form gives the same float.
func TestCanonicalFloatsRoundTrip(t *testing.T) {
	for _, f := range []float64{0.7, 0.1, 1.0 / 3, 2.5e-8, 123456.789, -0.25, 1e300, 5e-324, math.MaxFloat64} {
		enc, err := canonical(f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := strconv.ParseFloat(string(enc), 64)
		if err != nil || back != f {
			t.Errorf("canonical(%v) = %s, parses back as %v (%v)", f, enc, back, err)
		}
		// The same number written differently encodes the same.
		alt, err := canonical(json.Number(strconv.FormatFloat(f, 'e', -1, 64)))
		if err != nil || string(alt) != string(enc) {
			t.Errorf("canonical of %v in exponent form = %s, want %s", f, alt, enc)
		}
	}
}

func TestCanonicalKeyOrderIndependent(t *testing.T) {
	var first string
	for i := 0; i < 50; i++ {
		m := map[string]any{}
		// Insert in a different order each time.
		for j := 0; j < 20; j++ {
			k := strconv.Itoa((j*7 + i) % 20)
			m["k"+k] = map[string]any{"v": k, "w": []any{k, 1.5}}
		}
		enc, err := canonical(m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = string(enc)
		} else if string(enc) != first {
			t.Fatalf("encoding changed with insertion order:\n%s\n%s", first, enc)
		}
	}
	if !strings.HasPrefix(first, `{"k0":`) {
		t.Errorf("keys not sorted: %s", first[:20])
	}
}
