package cassette

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
)

// redacted replaces a secret in a cassette.
const redacted = "REDACTED"

// scrubber removes secrets from everything a cassette stores as text: the
// agent's transcripts, tool calls, data payloads, log lines and hang-up
// reasons, the errors the adapter returned, and the caller's text. It is
// the one place a cassette scrubs, so that a project-wide scrubber can
// replace it: what it removes is
//
//   - the value of every environment variable whose name says it holds a
//     credential (OPENAI_API_KEY, ELEVENLABS_API_KEY, TWILIO_AUTH_TOKEN,
//     …), wherever it appears;
//   - credentials in URL query parameters (key, token, signature, …) and
//     after "Bearer ";
//   - in JSON payloads, string and number members named like a credential
//     (api_key, token, password, authorization, …);
//   - then whatever the test's own WithScrub function removes.
//
// A cassette never holds the adapter's handshake, headers or URL in the
// first place: it records at the voicetest.Conn boundary, after the
// adapter has dialled.
type scrubber struct {
	secrets []string // longest first
	user    func(string) string
}

// newScrubber collects the secrets in the environment.
func newScrubber(user func(string) string) *scrubber {
	s := &scrubber{user: user}
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if n := normName(name); (secretName(n) || strings.HasSuffix(n, "key")) && len(val) >= 8 {
			s.secrets = append(s.secrets, val)
		}
	}
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
	return s
}

var (
	secretParam = regexp.MustCompile(`(?i)([?&;](?:[a-z0-9_.-]*(?:key|token|secret|signature|sig|password|auth|credential)[a-z0-9_.-]*)=)[^&#\s"'<>]+`)
	bearer      = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}`)
)

// text scrubs a string.
func (s *scrubber) text(v string) string {
	for _, sec := range s.secrets {
		v = strings.ReplaceAll(v, sec, redacted)
	}
	v = secretParam.ReplaceAllString(v, "${1}"+redacted)
	v = bearer.ReplaceAllString(v, "${1} "+redacted)
	if s.user != nil {
		v = s.user(v)
	}
	return v
}

// json scrubs a JSON value: its strings, and members named like secrets.
// A value that is not JSON is scrubbed as text and stored as a string.
func (s *scrubber) json(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		out, _ := json.Marshal(s.text(string(raw)))
		return out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.tree(v)); err != nil {
		out, _ := json.Marshal(s.text(string(raw)))
		return out
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

func (s *scrubber) tree(v any) any {
	switch x := v.(type) {
	case string:
		return s.text(x)
	case []any:
		for i := range x {
			x[i] = s.tree(x[i])
		}
	case map[string]any:
		for k, e := range x {
			switch e.(type) {
			case string, json.Number:
				if secretName(normName(k)) {
					x[k] = redacted
					continue
				}
			}
			x[k] = s.tree(e)
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

// normName lower-cases a name and drops '-', '_' and '.'.
func normName(name string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
}

// secretName reports whether a normalised variable or member name says it
// holds a credential. Counts such as max_tokens do not.
func secretName(n string) bool {
	for _, w := range []string{"apikey", "secret", "password", "passwd", "credential", "privatekey", "authorization", "authtoken", "signature", "cookie", "bearer"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	if strings.Contains(n, "token") && !strings.Contains(n, "tokens") && !strings.Contains(n, "tokencount") {
		return true
	}
	return n == "key" || n == "auth" || n == "sig"
}
