package scrub_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// TestEveryRule has one canary per rule of the Scrubber, in a text where
// no other rule can reach it: remove a rule and its case fails.
func TestEveryRule(t *testing.T) {
	const c = "c4n4ry-7e1d93-RULE"
	basic := base64.StdEncoding.EncodeToString([]byte("alice:" + c))
	for _, tc := range []struct {
		rule  string
		learn func(*scrub.Scrubber)
		scrub func(*scrub.Scrubber) string
	}{
		{"userinfo password", nil, func(s *scrub.Scrubber) string { return s.String("dial ws://bot:" + c + "@h/ws: refused") }},
		{"Bearer token in text", nil, func(s *scrub.Scrubber) string { return s.String("curl -H 'Authorization: Bearer " + c + "' h") }},
		{"Basic credentials in text", nil, func(s *scrub.Scrubber) string { return s.String("Authorization: Basic " + basic) }},
		{"credential parameter in text", nil, func(s *scrub.Scrubber) string { return s.String("level=info api_key=" + c + " lang=en") }},
		{"credential parameter of a URL", nil, func(s *scrub.Scrubber) string { return s.URL("wss://h/ws?lang=en&token=x:" + c) }},
		{"credential header", nil, func(s *scrub.Scrubber) string {
			return s.Header(http.Header{"X-Api-Key": {"plain " + c}}).Get("X-Api-Key")
		}},
		{"JSON member", nil, func(s *scrub.Scrubber) string { return string(s.JSON([]byte(`{"client_secret":"plain ` + c + `"}`))) }},
		{"form field", nil, func(s *scrub.Scrubber) string { return s.Form("client_secret=x:" + c) }},
		{"event stream data", nil, func(s *scrub.Scrubber) string {
			return string(s.Body("text/event-stream", []byte(`data: {"secret":"plain `+c+`"}`+"\n")))
		}},
		{"Add", func(s *scrub.Scrubber) { s.Add(c) }, echo(c)},
		{"AddHeader", func(s *scrub.Scrubber) { s.AddHeader(http.Header{"X-Api-Key": {c}}) }, echo(c)},
		{"AddURL", func(s *scrub.Scrubber) { s.AddURL("wss://h/ws?token=" + c) }, echo(c)},
		{"AddJSON", func(s *scrub.Scrubber) { s.AddJSON([]byte(`{"password":"` + c + `"}`)) }, echo(c)},
		{"AddForm", func(s *scrub.Scrubber) { s.AddForm("password=" + c) }, echo(c)},
		{"AddBody", func(s *scrub.Scrubber) { s.AddBody("application/json", []byte(`{"token":"`+c+`"}`)) }, echo(c)},
		{"AddEnv", func(s *scrub.Scrubber) { s.AddEnv([]string{"ACME_API_KEY=" + c}) }, echo(c)},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			sc := scrub.New()
			if tc.learn != nil {
				tc.learn(sc)
			}
			got := tc.scrub(sc)
			if strings.Contains(got, c) || strings.Contains(got, basic) {
				t.Errorf("the canary survived: %q", got)
			}
			if !strings.Contains(got, scrub.Placeholder) {
				t.Errorf("no placeholder: %q", got)
			}
		})
	}
}

// echo returns a scrub function for a server's echo of a learned value,
// which only the learned value can blank: it stands in prose, after no
// credential's name.
func echo(c string) func(*scrub.Scrubber) string {
	return func(s *scrub.Scrubber) string { return s.String("the server says: you sent " + c + ", which is wrong") }
}

func TestAuthSchemesInText(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("user:p4ssw0rd!"))
	var sc *scrub.Scrubber
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer sk-proj-Ab3_9x.", "Authorization: Bearer REDACTED."},
		{"authorization: bearer eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJ", "authorization: bearer REDACTED"},
		{`{"auth":"BEARER  tok-1234567890"}`, `{"auth":"BEARER  REDACTED"}`},
		{"Basic " + basic + " was refused", "Basic REDACTED was refused"},
		{"Bearer abcdefghijklmnopqrstuvwxyz", "Bearer REDACTED"},
		{"Bearer REDACTED", "Bearer REDACTED"},
		// Prose: the word after the scheme is no credential.
		{"the bearer instruments.", "the bearer instruments."},
		{"a basic question, a Basic reservation", "a basic question, a Basic reservation"},
		{"Bearer short1", "Bearer short1"},
		{"bearerbonds Bearer", "bearerbonds Bearer"},
		{"xBearer sk-123456789", "xBearer sk-123456789"},
		{"Basic dGFibGVmb3J0d28=", "Basic dGFibGVmb3J0d28="}, // base64 of "tablefortwo": no ':'
	} {
		if got := sc.String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestParametersInText(t *testing.T) {
	var sc *scrub.Scrubber
	for _, tc := range []struct{ in, want string }{
		{`dial wss://h/ws?api_key=sk-123: refused`, `dial wss://h/ws?api_key=REDACTED: refused`},
		{`GET /x?a=1&access_token=t0k3n&b=2`, `GET /x?a=1&access_token=REDACTED&b=2`},
		{`https://s3/o?X-Amz-Signature=ab12cd%2B34;x=1`, `https://s3/o?X-Amz-Signature=REDACTED;x=1`},
		{"level=info secret=hunter2. done", "level=info secret=REDACTED. done"},
		{"token=abc at the start", "token=REDACTED at the start"},
		{`{"url":"wss://h/ws?a=1\u0026token=t0k3n","log":"x\nclient_secret=cs-1"}`, `{"url":"wss://h/ws?a=1\u0026token=REDACTED","log":"x\nclient_secret=REDACTED"}`},
		{`{"q":"api%5Fkey=k3y"}`, `{"q":"api%5Fkey=REDACTED"}`},
		{`say "password=letmein"`, `say "password=REDACTED"`},
		// Not credentials, or not values.
		{"max_tokens=20&lang=en&token_count=3", "max_tokens=20&lang=en&token_count=3"},
		{"a+b=c and key = value", "a+b=c and key = value"},
		{`{"delta":"AAAAkeyAAA="}`, `{"delta":"AAAAkeyAAA="}`},
		{"/files/token=abc", "/files/token=abc"}, // not after a separator
		{"token=REDACTED", "token=REDACTED"},
	} {
		if got := sc.String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"OPENAI_API_KEY", true}, {"ELEVENLABS_API_KEY", true}, {"TWILIO_AUTH_TOKEN", true},
		{"AWS_SECRET_ACCESS_KEY", true}, {"DB_PASSWORD", true}, {"STRIPE_KEY", true}, {"GITHUB_TOKEN", true},
		{"HOME", false}, {"PATH", false}, {"KEYMAP", false}, {"SSH_AUTH_SOCK", false}, {"MAX_TOKENS", false},
	} {
		if got := scrub.EnvName(tc.name); got != tc.want {
			t.Errorf("EnvName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	sc := scrub.New()
	sc.AddEnv([]string{
		"OPENAI_API_KEY=sk-env-canary-0001",
		"TWILIO_AUTH_TOKEN=tw-env-canary-0002",
		"HOME=/home/dev-canary-0003",
		"TOKENIZERS_PARALLELISM=false",
		"SHORT_KEY=k-0004",
		"MALFORMED",
	})
	got := sc.String("echo sk-env-canary-0001 tw-env-canary-0002 /home/dev-canary-0003 false k-0004")
	if want := "echo REDACTED REDACTED /home/dev-canary-0003 false k-0004"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestFromEnv(t *testing.T) {
	const key = "sk-from-env-canary-91ab"
	t.Setenv("VOICETEST_SCRUB_TEST_API_KEY", key)
	sc := scrub.FromEnv("extra-canary-5566")
	if got := sc.String("you sent " + key + " and extra-canary-5566"); got != "you sent REDACTED and REDACTED" {
		t.Errorf("String = %q", got)
	}
	if got := scrub.New().String("you sent " + key); !strings.Contains(got, key) {
		t.Errorf("New learned the environment: %q", got)
	}
}

func TestBinaryReadsNoText(t *testing.T) {
	sc := scrub.New("learned-canary-4321")
	frame := []byte("\x00\x20Bearer sk-123456789 token=abc ws://u:pw-9876@h learned-canary-4321\xff")
	got := string(sc.Binary(frame))
	if want := "\x00\x20Bearer sk-123456789 token=abc ws://u:REDACTED@h REDACTED\xff"; got != want {
		t.Errorf("Binary = %q, want %q", got, want)
	}
	clean := []byte("\x00\x20Bearer short= \xff")
	if out := sc.Binary(clean); &out[0] != &clean[0] {
		t.Error("Binary copied a clean frame")
	}
}

func TestStringReturnsItsInputWhenClean(t *testing.T) {
	sc := scrub.New("learned-canary-4321")
	text := "Sure, a table for two at seven thirty; key = value, max_tokens=3"
	if got := sc.String(text); got != text {
		t.Fatalf("String changed clean text: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = sc.String(text) }); n != 0 {
		t.Errorf("String of clean text allocates %v times", n)
	}
}
