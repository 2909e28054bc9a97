package sdkcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// browserTimeout bounds one browser conformance run, Chromium's start on
// a loaded machine included.
const browserTimeout = 3 * time.Minute

// The user's lines the browser pages speak. The pages wait for each to be
// said in real time, so they are short: helloLine and specialsLine are
// checked word for word where the double transcribes them; bargeLine,
// said over the agent's speech, is only some speech there (its words are
// scripted or not checked: overlapping the agent's playback, it is when a
// loaded machine is most likely to drop some of it). None is shorter than
// in session 8: said as "eight" (0.5 s), at load 35 ElevenLabs' double
// once heard nothing of bargeLine, and the barge-in never came; said as
// "the specials", specialsLine came garbled in 4 of 21 LayerCode runs at
// load 12-45 (the longer line, never in 90).
const (
	helloLine    = "a table for two"
	specialsLine = "what are the specials"
	bargeLine    = "make it eight"
)

// pageSpeechSpeed is the speed of the fake speech the browser pages say
// (FakeTTS's Speed: its bursts, gaps and edges scale by 1/speed, and
// FakeSTT learns the speed from the bursts): the pages wait for each line
// to be said in real time, and at 1.5 the four lines LayerCode's page says
// take 3.8 s instead of 5.7. The words, and so what the doubles must
// transcribe, are the same.
const pageSpeechSpeed = 1.5

// pageSpeech returns the user's lines the browser pages speak, as raw
// PCM16 fake speech at rate: hello.pcm, specials.pcm and barge.pcm.
func pageSpeech(t *testing.T, rate int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for name, text := range map[string]string{"hello": helloLine, "specials": specialsLine, "barge": bargeLine} {
		_, samples := fakeSpeech(t, text, rate, pageSpeechSpeed)
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

// omniboxPopups names the Chromium features that build the omnibox's
// WebUI popup: headless Chromium still builds it, in a renderer of its
// own that loads dozens of chrome://resources modules, about 2 of the 5
// CPU-seconds an idle Chromium spends starting (measured by suite-sdk4,
// see BENCHMARKS.md). Nothing here uses the omnibox.
const omniboxPopups = "WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup"

// browserEnv returns Chromium's environment: environ with TMPDIR and
// XDG_RUNTIME_DIR set to dir, and without PULSE_ settings. Chromium
// makes its singleton socket's directory (org.chromium.Chromium.XXXXXX)
// in TMPDIR and leaves it there when it is killed, as runBrowser's
// Chromium is; and the pages' WebRTC loads the PulseAudio client, which
// without XDG_RUNTIME_DIR makes pulse-XXXXXXXXXXXX in TMPDIR and links
// ~/.config/pulse to it, or with the user's XDG_RUNTIME_DIR reaches the
// user's sound server. In dir (browserTempDir) both are the test's own
// and removed with it.
func browserEnv(environ []string, dir string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "TMPDIR" || name == "XDG_RUNTIME_DIR" || strings.HasPrefix(name, "PULSE_")
	})
	return append(env, "TMPDIR="+dir, "XDG_RUNTIME_DIR="+dir)
}

// browserTempDir returns a new directory in os.TempDir for Chromium's
// TMPDIR, removed when t ends. It is not a t.TempDir, whose path (it
// holds the test's name) makes the singleton socket's path too long for
// a Unix socket (108 bytes; Chromium then aborts).
func browserTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runBrowser opens page (an HTML page of this folder) in headless
// Chromium, with query as the page's query string, and returns the report
// the page posts to /report. The folder (with node_modules) is served from
// a loopback HTTP server, with files at /files/<name> and routes (pattern
// to handler) beside them, on the page's own origin; what the page posts
// to /log is logged.
func runBrowser(t *testing.T, page string, query url.Values, files map[string][]byte, routes map[string]http.Handler) *report {
	t.Helper()
	browser := requireChromium(t)
	var (
		mu     sync.Mutex
		logs   []string
		result = make(chan []byte, 1)
		// first is when the page's first request came, for the phase
		// times logged under -v.
		first     time.Time
		firstOnce sync.Once
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
		firstOnce.Do(func() {
			mu.Lock()
			first = time.Now()
			mu.Unlock()
		})
		if ext := path.Ext(r.URL.Path); ext == ".mjs" || ext == ".js" {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		static.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-features=Translate,MediaRouter,"+omniboxPopups, "--autoplay-policy=no-user-gesture-required",
		"--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
		"--user-data-dir="+t.TempDir(), srv.URL+"/"+page+"?"+query.Encode())
	cmd.Env = browserEnv(os.Environ(), browserTempDir(t))
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var reported time.Time
	defer func() {
		cancel()
		<-exited
		if testing.Verbose() && !reported.IsZero() {
			mu.Lock()
			t.Logf("%s: chromium started to the page's first request %v, to its report %v, chromium gone %v after the report",
				page, first.Sub(start).Round(time.Millisecond), reported.Sub(start).Round(time.Millisecond), time.Since(reported).Round(time.Millisecond))
			mu.Unlock()
		}
	}()
	var out []byte
	select {
	case out = <-result:
		reported = time.Now()
	case err := <-exited:
		exited <- err
		t.Fatalf("chromium exited before %s reported: %v\n%s", page, err, tail(stderr.String(), 3000))
	case <-ctx.Done():
		mu.Lock()
		t.Logf("%s log:\n%s", page, strings.Join(logs, "\n"))
		mu.Unlock()
		t.Fatalf("%s reported nothing within %v; chromium stderr:\n%s", page, browserTimeout, tail(stderr.String(), 3000))
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
