package cassette

import (
	"encoding/json"
	"testing"
	"time"
)

func TestReindent(t *testing.T) {
	src := `{"a":[{"b":[{"c":[{"d":{"e":[{"x":"{[,:]}\"q","y":[1,2]},{}]},"f":[]}]}]}],"g":{}}`
	want := `{
  "a": [
    {
      "b": [
        {
          "c": [
            {"d":{"e":[{"x":"{[,:]}\"q","y":[1,2]},{}]},"f":[]}
          ]
        }
      ]
    }
  ],
  "g": {}
}
`
	if got := string(reindent([]byte(src))); got != want {
		t.Errorf("reindent:\n%s\nwant:\n%s", got, want)
	}
	var v any
	if err := json.Unmarshal(reindent([]byte(src)), &v); err != nil {
		t.Errorf("reindented JSON does not parse: %v", err)
	}
}

func TestMillis(t *testing.T) {
	for _, d := range []time.Duration{0, time.Microsecond, 1234567 * time.Microsecond, 90 * time.Minute} {
		b, err := json.Marshal(millis(d))
		if err != nil {
			t.Fatal(err)
		}
		var m millis
		if err := json.Unmarshal(b, &m); err != nil || time.Duration(m) != d {
			t.Errorf("%v: %s reads back as %v (%v)", d, b, time.Duration(m), err)
		}
	}
	var m millis
	for _, bad := range []string{`-1`, `"1"`, `1e300`, `null`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
