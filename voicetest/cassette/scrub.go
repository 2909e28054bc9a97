package cassette

import (
	"bytes"
	"encoding/json"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// scrubber removes secrets from everything a cassette stores as text: the
// agent's transcripts, tool calls, data payloads, log lines and hang-up
// reasons, the errors the adapter returned, and the caller's text. It is
// voicetest/scrub's Scrubber, the one every writer of voicetest shares,
// with the credentials of the environment learned (scrub.FromEnv: the
// values of OPENAI_API_KEY, ELEVENLABS_API_KEY, TWILIO_AUTH_TOKEN, …,
// wherever they appear), followed by the test's own WithScrub function.
//
// A cassette never holds the adapter's handshake, headers or URL in the
// first place: it records at the voicetest.Conn boundary, after the
// adapter has dialled.
type scrubber struct {
	sc   *scrub.Scrubber
	user func(string) string
}

// newScrubber learns the secrets in the environment.
func newScrubber(user func(string) string) *scrubber {
	return &scrubber{sc: scrub.FromEnv(), user: user}
}

// text scrubs a string.
func (s *scrubber) text(v string) string {
	v = s.sc.String(v)
	if s.user != nil {
		v = s.user(v)
	}
	return v
}

// json scrubs a JSON value: members named like secrets, and what the
// Scrubber blanks in any text; then the WithScrub function on each string.
// A value that is not JSON is scrubbed as text and stored as a string.
func (s *scrubber) json(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		out, _ := json.Marshal(s.text(string(raw)))
		return out
	}
	clean := s.sc.JSON(raw)
	if s.user == nil {
		return clean
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return clean
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.strings(v)); err != nil {
		return clean
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

// strings applies the WithScrub function to every string of a decoded
// JSON value.
func (s *scrubber) strings(v any) any {
	switch x := v.(type) {
	case string:
		return s.user(x)
	case []any:
		for i := range x {
			x[i] = s.strings(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = s.strings(e)
		}
	}
	return v
}

// tool scrubs a tool call or result.
func (s *scrubber) tool(tc *voicetest.ToolCall) {
	tc.ID = s.text(tc.ID)
	tc.Name = s.text(tc.Name)
	tc.Arguments = s.json(tc.Arguments)
	tc.Result = s.json(tc.Result)
}
