package cache

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A credential of the environment that the request does not carry where
// a credential goes (the client library sends another key, or the server
// knows it from its own environment) never reaches a cache file: not the
// stored response that quotes it, in a JSON body or an event stream, nor
// the key of a request whose text holds it.
func TestTransportEnvironmentCredentialsNeverOnDisk(t *testing.T) {
	const envCanary = "env-cache-canary-4be0917d"
	t.Setenv("ACME_SERVER_API_KEY", envCanary)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"delta\":\"served with %s\"}\n\ndata: [DONE]\n\n", envCanary)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"note":"this server runs with %s","answer":"We open at nine."}`, envCanary)
	}))
	t.Cleanup(srv.Close)
	dir, usage := t.TempDir(), t.TempDir()
	c := openTest(t, dir, Record, WithUsageDir(usage))
	client := c.Client(WithProvider("acme"))
	for _, tc := range []struct{ path, body string }{
		{"/v1/answer", `{"model":"m","prompt":"When do you open?"}`},
		{"/v1/answer", `{"model":"m","prompt":"my key is ` + envCanary + `"}`},
		{"/v1/stream", `{"model":"m","stream":true,"prompt":"Hello"}`},
	} {
		req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-client-key-0123456789")
		if resp, got := do(t, client, req); resp.StatusCode != 200 || len(got) == 0 {
			t.Fatalf("%s: %s %q", tc.path, resp.Status, got)
		}
	}
	c.Close()
	n := 0
	for _, root := range []string{dir, usage} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			if bytes.Contains(b, []byte(envCanary)) {
				t.Errorf("%s holds the environment's key:\n%s", p, b)
			}
			return nil
		})
	}
	if n < 6 {
		t.Errorf("only %d files written: the three answers were not all stored", n)
	}
}
