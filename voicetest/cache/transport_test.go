package cache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const canary = "sk-canary-7f3a9c21d4e8b605"

// fakeOpenAI is a loopback server speaking a little of the OpenAI API.
type fakeOpenAI struct {
	*httptest.Server
	calls    atomic.Int32
	bodies   chan []byte
	proceed  chan struct{} // the stream handler waits for it after the first event
	lastAuth atomic.Value
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{bodies: make(chan []byte, 100)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		f.lastAuth.Store(r.Header.Get("Authorization"))
		body, _ := io.ReadAll(r.Body)
		f.bodies <- body
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
			Echo   bool   `json:"echo_auth"`
		}
		json.Unmarshal(body, &req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("X-Request-Id", "req_123")
			fmt.Fprint(w, "data: {\"delta\":\"Hel\"}\n\n")
			w.(http.Flusher).Flush()
			if f.proceed != nil {
				<-f.proceed
			}
			fmt.Fprint(w, "data: {\"delta\":\"lo\"}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=abc123secret")
		w.Header().Set("Openai-Processing-Ms", "123")
		content := "Hello from " + req.Model
		if req.Echo {
			content = "you sent " + r.Header.Get("Authorization")
		}
		fmt.Fprintf(w, "{\n  \"id\": \"chatcmpl-%d\",\n  \"choices\": [{\"message\": {\"content\": %q}}]\n}\n", f.calls.Load(), content)
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		w.Header().Set("Content-Type", "audio/pcm")
		w.Write(testPCM(480, 9))
	})
	mux.HandleFunc("POST /v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		file, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data, _ := io.ReadAll(file)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"text":"heard %d bytes, model %s"}`, len(data), r.FormValue("model"))
	})
	mux.HandleFunc("/v1/fail", func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		http.Error(w, "rate limited", http.StatusTooManyRequests)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func chatRequest(t *testing.T, base, body string, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

func do(t *testing.T, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestTransportRecordReplayJSON(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	rec := openTest(t, dir, Record)
	body := `{"model":"gpt-4o-mini","temperature":0.7,"messages":[{"role":"user","content":"Hi <there> & you"}]}`
	hdr := map[string]string{"Authorization": "Bearer " + canary, "X-Stainless-Retry-Count": "0", "X-Stainless-Os": "Linux", "User-Agent": "OpenAI/Go 1.0"}
	resp, recorded := do(t, rec.Client(), chatRequest(t, srv.URL, body, hdr))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("record: %s %v", resp.Status, resp.Header)
	}
	if got := <-srv.bodies; string(got) != body {
		t.Errorf("server received body %q, want the caller's %q unchanged", got, body)
	}
	if got := srv.lastAuth.Load(); got != "Bearer "+canary {
		t.Errorf("server received Authorization %q; the real request must keep its credentials", got)
	}
	if resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("Openai-Processing-Ms") != "" {
		t.Errorf("response headers not limited to the allowlist: %v", resp.Header)
	}

	// Replay against another server on another port, with another key,
	// other client noise headers and the same JSON written differently.
	srv2 := newFakeOpenAI(t)
	srv2.Close()
	rep := openTest(t, dir, Replay)
	body2 := `{ "messages": [{"content": "Hi <there> & you", "role": "user"}], "temperature": 0.70, "model": "gpt-4o-mini" }`
	hdr2 := map[string]string{"Authorization": "Bearer sk-other-key-123456", "X-Stainless-Retry-Count": "2", "X-Stainless-Os": "MacOS", "User-Agent": "curl", "Idempotency-Key": "stainless-retry-77", "X-Request-Id": "abc"}
	resp2, replayed := do(t, rep.Client(), chatRequest(t, srv2.URL, body2, hdr2))
	if !bytes.Equal(replayed, recorded) {
		t.Fatalf("replayed body differs from the recorded one:\n%s\n%s", replayed, recorded)
	}
	if resp2.StatusCode != 200 || resp2.Header.Get("Content-Type") != "application/json" || resp2.ContentLength != int64(len(recorded)) {
		t.Errorf("replayed response: %s %v length %d", resp2.Status, resp2.Header, resp2.ContentLength)
	}
	if srv.calls.Load() != 1 {
		t.Errorf("server called %d times, want 1", srv.calls.Load())
	}

	// The key follows what matters: a different temperature misses.
	_, err := rep.Client().Do(chatRequest(t, srv2.URL, strings.Replace(body2, "0.70", "0.8", 1), nil))
	var miss *MissError
	if !errors.As(err, &miss) {
		t.Fatalf("changed temperature: error = %v, want *MissError", err)
	}
	if miss.Kind != "llm" || miss.Model != "gpt-4o-mini" || miss.Provider != "loopback" ||
		!strings.Contains(err.Error(), "POST /v1/chat/completions model=gpt-4o-mini body=") ||
		!strings.Contains(err.Error(), "-run '^TestTransportRecordReplayJSON$' -voicetest.record") {
		t.Errorf("miss error: %v", err)
	}
}

// A canary API key in the Authorization header, other credential headers,
// the query string and body fields never reaches a file on disk.
func TestTransportCanaryNeverOnDisk(t *testing.T) {
	dir, usage := t.TempDir(), t.TempDir()
	srv := newFakeOpenAI(t)
	c := openTest(t, dir, Record, WithUsageDir(usage))
	client := c.Client(WithProvider("openai"))
	hdr := map[string]string{
		"Authorization":       "Bearer " + canary,
		"Api-Key":             canary,
		"X-Api-Key":           canary,
		"OpenAI-Organization": "org-" + canary,
		"OpenAI-Project":      "proj-" + canary,
		"Cookie":              "session=" + canary,
		"X-Custom-Token":      canary,
	}
	bodies := []string{
		`{"model":"gpt-4o-mini","api_key":"` + canary + `","user":"` + canary + `","metadata":{"secret":"` + canary + `","note":"key is ` + canary + `"}}`,
		`{"model":"gpt-4o-mini","echo_auth":true}`,
		`{"model":"gpt-4o-mini","stream":true,"user":"` + canary + `"}`,
	}
	for _, body := range bodies {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/v1/chat/completions?api_key="+canary+"&key="+canary+"&x=1", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, got := do(t, client, req)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", body, resp.Status)
		}
		if strings.Contains(body, "echo_auth") && !strings.Contains(string(got), "REDACTED") {
			t.Errorf("response echoing the key was not redacted for the caller: %s", got)
		}
	}
	// Multipart upload with the key as a form field.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("model", "whisper-1")
	mw.WriteField("api_key", canary)
	mw.WriteField("prompt", "context "+canary)
	fw, _ := mw.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF fake audio"))
	mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/v1/audio/transcriptions", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+canary)
	if resp, _ := do(t, client, req); resp.StatusCode != 200 {
		t.Fatalf("transcription: %s", resp.Status)
	}

	n := 0
	if os.Getenv("VOICETEST_CACHE_DUMP") != "" {
		for _, f := range files(t, dir) {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			t.Logf("%s:\n%s", f, b)
		}
	}
	for _, root := range []string{dir, usage} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			n++
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte("canary")) {
				t.Errorf("%s contains the canary key:\n%s", p, data)
			}
			return nil
		})
	}
	if n < 8 {
		t.Errorf("only %d files written; expected entries and bodies for every request", n)
	}
}

func TestTransportMultipartBoundaryIndependent(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	audio := testPCM(1000, 4)
	upload := func(c *Cache, base string) (*http.Response, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf) // a new random boundary each time
		mw.WriteField("model", "whisper-1")
		mw.WriteField("language", "en")
		fw, _ := mw.CreateFormFile("file", "speech.wav")
		fw.Write(audio)
		mw.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/audio/transcriptions", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return do(t, c.Client(), req)
	}
	_, recorded := upload(openTest(t, dir, Record), srv.URL)
	if !strings.Contains(string(recorded), "heard 2000 bytes, model whisper-1") {
		t.Fatalf("record: %s", recorded)
	}
	srv.Close()
	_, replayed := upload(openTest(t, dir, Replay), "http://127.0.0.1:1")
	if !bytes.Equal(replayed, recorded) {
		t.Fatalf("replay = %s, want %s", replayed, recorded)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "stt", "*.json"))
	var entryFiles []string
	for _, m := range matches {
		if strings.Count(filepath.Base(m), ".") == 1 {
			entryFiles = append(entryFiles, m)
		}
	}
	if len(entryFiles) != 1 {
		t.Fatalf("stt entries: %v", matches)
	}
	entry, _ := os.ReadFile(entryFiles[0])
	for _, want := range []string{`"model": "whisper-1"`, `"filename": "speech.wav"`, `"sha256": "` + sha256Hex(audio) + `"`, `"size": 2000`} {
		if !bytes.Contains(entry, []byte(want)) {
			t.Errorf("entry lacks %s:\n%s", want, entry)
		}
	}
}

func TestTransportBinaryAudio(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	speech := func(c *Cache, base string) []byte {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/audio/speech", strings.NewReader(`{"model":"tts-1","voice":"alloy","input":"hi","response_format":"pcm"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, body := do(t, c.Client(), req)
		if resp.Header.Get("Content-Type") != "audio/pcm" {
			t.Errorf("Content-Type = %q", resp.Header.Get("Content-Type"))
		}
		return body
	}
	recorded := speech(openTest(t, dir, Record), srv.URL)
	if !bytes.Equal(recorded, testPCM(480, 9)) {
		t.Fatal("record mode changed the audio")
	}
	if replayed := speech(openTest(t, dir, Replay), "http://localhost:9"); !bytes.Equal(replayed, recorded) {
		t.Fatal("replayed audio is not byte-identical")
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "tts", "*.bin"))
	if len(bins) != 1 {
		t.Errorf("want one .bin body under tts/, got %v", bins)
	}
}

func TestTransportStreaming(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	srv.proceed = make(chan struct{})
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[]}`
	resp, err := openTest(t, dir, Record).Client().Do(chatRequest(t, srv.URL, body, nil))
	if err != nil {
		t.Fatal(err)
	}
	// The first event reaches the caller while the server is still
	// holding the rest back: record mode streams.
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "data: {\"delta\":\"Hel\"}\n" {
		t.Fatalf("first event: %q, %v", first, err)
	}
	close(srv.proceed)
	rest, err := io.ReadAll(br)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	recorded := first + string(rest)

	resp2, replayed := do(t, openTest(t, dir, Replay).Client(), chatRequest(t, srv.URL, body, nil))
	if string(replayed) != recorded {
		t.Fatalf("replayed stream:\n%q\nrecorded:\n%q", replayed, recorded)
	}
	if resp2.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("replayed Content-Type %q", resp2.Header.Get("Content-Type"))
	}
	if sse, _ := filepath.Glob(filepath.Join(dir, "llm", "*.sse")); len(sse) != 1 {
		t.Errorf("want one .sse body, got %v", sse)
	}
}

func TestTransportStreamClosedEarlyNotStored(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	srv.proceed = make(chan struct{})
	defer close(srv.proceed)
	resp, err := openTest(t, dir, Record).Client().Do(chatRequest(t, srv.URL, `{"model":"m","stream":true}`, nil))
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("a stream closed early was stored: %v", fs)
	}
}

func TestTransportErrorStatusNotStored(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/fail", nil)
	resp, body := do(t, openTest(t, dir, Record).Client(), req)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "rate limited") {
		t.Fatalf("got %s %q, want the 429 passed through", resp.Status, body)
	}
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("an error response was stored: %v", fs)
	}
}

func TestTransportHostInKey(t *testing.T) {
	tr := openTest(t, t.TempDir(), Replay).Transport(nil).(*transport)
	key := func(tr *transport, rawURL string) Key {
		req, _ := http.NewRequest("GET", rawURL, nil)
		hr, err := tr.describe(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hr.key
	}
	digest := func(k Key) string { d, _ := k.Digest(); return d }
	a := key(tr, "http://127.0.0.1:40001/v1/models?b=2&a=1")
	b := key(tr, "http://localhost:40002/v1/models?a=1&b=2")
	if digest(a) != digest(b) {
		t.Errorf("loopback host:port or query order entered the key:\n%v\n%v", a, b)
	}
	remote1 := key(tr, "https://api.openai.com/v1/models")
	remote2 := key(tr, "https://api.example.com/v1/models")
	if digest(remote1) == digest(remote2) {
		t.Error("remote hosts do not enter the key")
	}
	if remote1.Provider != "api.openai.com" || a.Provider != "loopback" {
		t.Errorf("providers %q, %q", remote1.Provider, a.Provider)
	}
	aliased := openTest(t, t.TempDir(), Replay).Transport(nil, WithHostAlias("gpu-box:8000", "vllm")).(*transport)
	if k := key(aliased, "http://gpu-box:8000/v1/models"); k.Provider != "vllm" || k.Fields["origin"] != "vllm" {
		t.Errorf("alias: %+v", k)
	}
	same := openTest(t, t.TempDir(), Replay).Transport(nil, KeyOnPath(), WithProvider("p")).(*transport)
	if digest(key(same, "https://a.example/v1/x")) != digest(key(same, "https://b.example/v1/x")) {
		t.Error("KeyOnPath with WithProvider: hosts still in the key")
	}
}

func TestTransportScrubKeepsSchemas(t *testing.T) {
	tr := openTest(t, t.TempDir(), Replay).Transport(nil).(*transport)
	body := `{"model":"m","api_key":"abcdefgh","tools":[{"parameters":{"properties":{"password":{"type":"string"}}}}],"max_tokens":5}`
	req, _ := http.NewRequest("POST", "https://api.example.com/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-Id", "s-123")
	hr, err := tr.describe(req, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := canonical(hr.key.Fields)
	for _, want := range []string{`"password":{"type":"string"}`, `"max_tokens":5`} {
		if !strings.Contains(string(enc), want) {
			t.Errorf("key lacks %s: %s", want, enc)
		}
	}
	for _, unwanted := range []string{"api_key", "abcdefgh", "s-123"} {
		if strings.Contains(string(enc), unwanted) {
			t.Errorf("key contains %s: %s", unwanted, enc)
		}
	}
}

func TestTransportOffPassesThrough(t *testing.T) {
	dir := t.TempDir()
	srv := newFakeOpenAI(t)
	client := openTest(t, dir, Off).Client()
	for i := 1; i <= 2; i++ {
		resp, body := do(t, client, chatRequest(t, srv.URL, `{"model":"m"}`, nil))
		if want := fmt.Sprintf(`"id": "chatcmpl-%d"`, i); !strings.Contains(string(body), want) {
			t.Errorf("call %d: body %s lacks %s: off mode must call the server every time", i, body, want)
		}
		if resp.Header.Get("Openai-Processing-Ms") == "" {
			t.Errorf("off mode changed the response headers: %v", resp.Header)
		}
	}
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("off mode wrote %v", fs)
	}
}
