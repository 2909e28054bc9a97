package sdkcheck_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// browserTimeout bounds one browser conformance run, Chromium's start on
// a loaded machine included.
const browserTimeout = 3 * time.Minute

// pageSpeech returns the user's lines the browser pages speak, as raw
// PCM16 fake speech at rate: hello.pcm, specials.pcm and barge.pcm.
func pageSpeech(t *testing.T, rate int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for name, text := range map[string]string{"hello": "a table for two", "specials": "what are the specials", "barge": "make it eight"} {
		_, samples := fakeSpeech(t, text, rate)
		files[name+".pcm"] = pcm.EncodePCM16(nil, samples)
	}
	return files
}

// requireChromium returns the Chromium binary, after checking the SDKs.
func requireChromium(t *testing.T) string {
	t.Helper()
	checkPins(t)
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "chromium not found: install the Debian package chromium (apt-get install -y chromium)")
	return ""
}

// runBrowser opens page (an HTML page of this folder) in the shared
// headless Chromium (in a browser context of its own), with query as the
// page's query string, and returns the report the page posts to /report.
// The folder (with node_modules) is served from a loopback HTTP server, with files at /files/<name> and routes (pattern
// to handler) beside them, on the page's own origin; what the page posts
// to /log is logged.
func runBrowser(t *testing.T, page string, query url.Values, files map[string][]byte, routes map[string]http.Handler) *report {
	t.Helper()
	chromium := requireChromium(t)
	var (
		mu     sync.Mutex
		logs   []string
		result = make(chan []byte, 1)
	)
	static := http.FileServer(http.Dir("."))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		select {
		case result <- b:
		default:
		}
	})
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		mu.Lock()
		logs = append(logs, string(b))
		mu.Unlock()
	})
	mux.HandleFunc("GET /files/{name}", func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
	for pattern, h := range routes {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if ext := path.Ext(r.URL.Path); ext == ".mjs" || ext == ".js" {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		static.ServeHTTP(w, r)
	})
	b := browser.get(t, chromium) // starting, while the page's server starts
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	defer b.open(ctx, t, srv.URL+"/"+page+"?"+query.Encode())()
	var out []byte
	select {
	case out = <-result:
	case <-b.done():
		t.Fatalf("chromium exited before %s reported: %v\n%s", page, b.waitErr, tail(b.stderr.String(), 3000))
	case <-ctx.Done():
		mu.Lock()
		t.Logf("%s log:\n%s", page, strings.Join(logs, "\n"))
		mu.Unlock()
		t.Fatalf("%s reported nothing within %v; chromium stderr:\n%s", page, browserTimeout, tail(b.stderr.String(), 3000))
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s posted a report that is not JSON (%v): %.500s", page, err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(r.Failures) > 0 || testing.Verbose() {
		t.Logf("%s log:\n%s", page, strings.Join(logs, "\n"))
	}
	return &r
}
