package scrub_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

const canary = "sk-canary-7c1d93e2-SCRUB"

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name          string
		field, header bool
		param         bool
	}{
		{"api_key", true, true, true},
		{"apiKey", true, true, true},
		{"password", true, true, true},
		{"client_secret", true, true, true},
		{"token", true, true, true},
		{"access_token", true, true, true},
		{"X-Amz-Signature", true, true, true},
		{"max_tokens", false, true, false},
		{"token_count", false, true, false},
		{"model", false, false, false},
		{"client_session_key", false, true, true},
		{"Authorization", true, true, true},
		{"Xi-Api-Key", true, true, true},
		{"X-Auth-Token", true, true, true},
		{"Content-Type", false, false, false},
		{"OpenAI-Organization", false, true, false},
		{"monkey", false, true, true},
	} {
		if got := scrub.Name(tc.name); got != tc.field {
			t.Errorf("Name(%q) = %v, want %v", tc.name, got, tc.field)
		}
		if got := scrub.HeaderName(tc.name); got != tc.header {
			t.Errorf("HeaderName(%q) = %v, want %v", tc.name, got, tc.header)
		}
		if got := scrub.ParamName(tc.name); got != tc.param {
			t.Errorf("ParamName(%q) = %v, want %v", tc.name, got, tc.param)
		}
	}
}

func TestLearnedValuesAndTheirForms(t *testing.T) {
	secret := "p@ss w/rd+\"quoted\"-123"
	sc := scrub.New(secret, "short")
	for _, text := range []string{
		"plain " + secret + " end",
		"query ?k=" + url.QueryEscape(secret),
		"path /" + url.PathEscape(secret) + "/x",
		`json {"v":"p@ss w/rd+\"quoted\"-123"}`,
	} {
		got := sc.String(text)
		if strings.Contains(got, "w/rd") || strings.Contains(got, "w%2Frd") {
			t.Errorf("String(%q) = %q: the secret is still there", text, got)
		}
		if !strings.Contains(got, scrub.Placeholder) {
			t.Errorf("String(%q) = %q: no placeholder", text, got)
		}
	}
	if got := sc.String("a short word"); got != "a short word" {
		t.Errorf("a value shorter than MinLen was learned: %q", got)
	}
	var nilSc *scrub.Scrubber
	if got := nilSc.String("x " + canary); got != "x "+canary {
		t.Errorf("a nil Scrubber blanked a value it cannot know: %q", got)
	}
}

func TestBytesReturnsItsInputWhenClean(t *testing.T) {
	sc := scrub.New(canary)
	b := []byte(`{"type":"media","payload":"AAAA"}`)
	if got := sc.Bytes(b); &got[0] != &b[0] {
		t.Error("Bytes copied a clean input")
	}
	dirty := []byte("x " + canary)
	orig := string(dirty)
	if got := sc.Bytes(dirty); string(got) != "x "+scrub.Placeholder || string(dirty) != orig {
		t.Errorf("Bytes = %q, input now %q: it must blank into a copy", got, dirty)
	}
}

func TestHeaders(t *testing.T) {
	sc := scrub.New()
	basic := base64.StdEncoding.EncodeToString([]byte("alice:" + canary))
	sc.AddHeader(http.Header{
		"Authorization":       {"Bearer " + canary + "-bearer"},
		"Xi-Api-Key":          {canary + "-xi"},
		"Cookie":              {"session=" + canary + "-cookie; theme=dark"},
		"Proxy-Authorization": {"Basic " + basic},
		"Content-Type":        {"application/json"},
	})
	for _, echoed := range []string{canary + "-bearer", canary + "-xi", canary + "-cookie", canary, basic} {
		if got := sc.String("the server says: " + echoed); strings.Contains(got, canary) || strings.Contains(got, basic) {
			t.Errorf("an echoed %q survived: %q", echoed, got)
		}
	}
	if got := sc.String("application/json"); got != "application/json" {
		t.Errorf("a header that is not a credential was learned: %q", got)
	}
	h := sc.Header(http.Header{"Authorization": {"Bearer x"}, "Accept": {"echo " + canary}})
	if h.Get("Authorization") != scrub.Placeholder || strings.Contains(h.Get("Accept"), canary) {
		t.Errorf("Header = %v", h)
	}
}

func TestURLs(t *testing.T) {
	sc := scrub.New()
	raw := "wss://user:" + canary + "@agent.example/ws?api_key=" + canary + "-q&lang=en&X-Amz-Signature=" + canary + "-sig#frag"
	sc.AddURL(raw)
	got := sc.URL(raw)
	if strings.Contains(got, canary) {
		t.Fatalf("URL = %q", got)
	}
	if want := "wss://user:REDACTED@agent.example/ws?api_key=REDACTED&lang=en&X-Amz-Signature=REDACTED#frag"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	// Learned: the values are blanked in text that is not a URL.
	for _, v := range []string{canary, canary + "-q", canary + "-sig"} {
		if out := sc.String(`dial failed: server said "` + v + `"`); strings.Contains(out, canary) {
			t.Errorf("an echoed URL secret survived: %q", out)
		}
	}
	// By position, with nothing learned: any userinfo password in text.
	var none *scrub.Scrubber
	msg := `failed to dial: Get "http://bob:hunter2@127.0.0.1:1/x": refused; see ws://[::1]:80/a and https://h/p@q:r`
	want := `failed to dial: Get "http://bob:REDACTED@127.0.0.1:1/x": refused; see ws://[::1]:80/a and https://h/p@q:r`
	if out := none.String(msg); out != want {
		t.Errorf("String(%q)\n = %q\nwant %q", msg, out, want)
	}
	if got := none.URL("ws://127.0.0.1:8080/ws?lang=en"); got != "ws://127.0.0.1:8080/ws?lang=en" {
		t.Errorf("a clean URL changed: %q", got)
	}
}

func TestJSONBodies(t *testing.T) {
	sc := scrub.New()
	req := []byte(`{"model":"m","client_secret":"` + canary + `-cs","auth":{"password":"` + canary + `-pw","pin":1234567},` +
		`"tools":[{"parameters":{"properties":{"password":{"type":"string"}}}}],"max_tokens":100,"api_key":98765432}`)
	sc.AddJSON(req)
	// The response echoes what was sent, in several places.
	resp := []byte(`{"echo":"you sent ` + canary + `-cs and ` + canary + `-pw", "token":"fresh-` + canary + `", "max_tokens":100,` +
		`"nested":[{"secret":"` + canary + `-n"}], "schema":{"password":{"type":"string"}}, "n":98765432, "ok":true, "password":null, "api_key":""}`)
	got := sc.JSON(resp)
	if bytes.Contains(got, []byte(canary)) {
		t.Errorf("JSON left a secret: %s", got)
	}
	if !json.Valid(got) {
		t.Fatalf("JSON made invalid JSON: %s", got)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if v["max_tokens"] != float64(100) || v["ok"] != true || v["password"] != nil || v["api_key"] != "" {
		t.Errorf("JSON blanked what is not a secret: %s", got)
	}
	if fmt.Sprint(v["schema"]) != "map[password:map[type:string]]" {
		t.Errorf("JSON blanked a schema: %v", v["schema"])
	}
	if v["n"] != float64(98765432) {
		t.Errorf("a number equal to a numeric secret was blanked (numbers are blanked by name only, which keeps the JSON valid): %v", v["n"])
	}
	// Invalid JSON: the learned values are still blanked.
	if got := sc.JSON([]byte(`not json ` + canary + `-cs`)); bytes.Contains(got, []byte(canary)) {
		t.Errorf("JSON of a non-JSON body left a learned secret: %s", got)
	}
}

func TestFormBodies(t *testing.T) {
	sc := scrub.New()
	sc.AddForm("grant_type=client_credentials&client_secret=" + canary + "-cs&password=" + canary + "%2Bpw")
	for _, echoed := range []string{canary + "-cs", canary + "+pw", canary + "%2Bpw"} {
		if got := sc.String("echo: " + echoed); strings.Contains(got, canary) {
			t.Errorf("an echoed form secret survived: %q", got)
		}
	}
	if got := sc.Form("a=1&token=abc&b=2"); got != "a=1&token=REDACTED&b=2" {
		t.Errorf("Form = %q", got)
	}
}

func TestBodyByContentType(t *testing.T) {
	var sc *scrub.Scrubber
	sse := "event: x\ndata: {\"type\":\"session\",\"client_secret\":\"" + canary + "\"}\r\n\ndata: [DONE]\n"
	got := string(sc.Body("text/event-stream", []byte(sse)))
	if strings.Contains(got, canary) {
		t.Errorf("Body(event stream) = %q", got)
	}
	if want := "event: x\ndata: {\"type\":\"session\",\"client_secret\":\"REDACTED\"}\r\n\ndata: [DONE]\n"; got != want {
		t.Errorf("Body(event stream) = %q, want %q", got, want)
	}
	if got := string(sc.Body("application/x-www-form-urlencoded", []byte("access_token="+canary+"&x=1"))); got != "access_token=REDACTED&x=1" {
		t.Errorf("Body(form) = %q", got)
	}
	if got := string(sc.Body("application/vnd.api+json", []byte(`{"refresh_token":"`+canary+`"}`))); strings.Contains(got, canary) {
		t.Errorf("Body(+json) = %q", got)
	}
}

func TestAddBodyMultipart(t *testing.T) {
	body := "--XX\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n" +
		"--XX\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\n" + canary + "\r\n--XX--\r\n"
	sc := scrub.New()
	sc.AddBody("multipart/form-data; boundary=XX", []byte(body))
	if got := sc.String("echo " + canary); strings.Contains(got, canary) {
		t.Errorf("a multipart secret was not learned: %q", got)
	}
	if got := sc.String("whisper-1"); got != "whisper-1" {
		t.Errorf("a field that is not a credential was learned: %q", got)
	}
}

func TestError(t *testing.T) {
	sc := scrub.New(canary)
	base := fmt.Errorf("dial: %s: %w", canary, fs.ErrNotExist)
	err := sc.Error(base)
	if strings.Contains(err.Error(), canary) {
		t.Fatalf("Error = %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the scrubbed error no longer matches what the original matched")
	}
	if errors.Unwrap(err) != nil {
		t.Error("the scrubbed error unwraps to the original, whose message holds the secret")
	}
	clean := errors.New("nothing secret")
	if sc.Error(clean) != clean {
		t.Error("a clean error was wrapped")
	}
	if sc.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

func TestConcurrentLearningAndScrubbing(t *testing.T) {
	sc := scrub.New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			sc.Add(fmt.Sprintf("%s-%03d", canary, i))
		}
	}()
	for i := range 200 {
		_ = sc.String(fmt.Sprintf("text %s-%03d", canary, i))
	}
	<-done
	for i := range 200 {
		if got := sc.String(fmt.Sprintf("text %s-%03d", canary, i)); strings.Contains(got, canary) {
			t.Fatalf("secret %d not blanked after learning: %q", i, got)
		}
	}
}

func TestJSONKeysWithEscapes(t *testing.T) {
	var sc *scrub.Scrubber
	for _, doc := range []string{
		`{"pass\"word\"x":"s3cr3t-value"}`,
		`{"password\"x":"s3cr3t-value"}`,
		`{"api\u005fkey":"s3cr3t-value"}`,
		`{"a" : {"Client-Secret" : "s3cr3t-value"}}`,
	} {
		var v map[string]any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		named := false
		for k := range v {
			named = named || scrub.Name(k)
		}
		got := string(sc.JSON([]byte(doc)))
		if strings.Contains(got, "s3cr3t") == (named || strings.Contains(doc, "Client")) {
			t.Errorf("JSON(%s) = %s", doc, got)
		}
	}
}
