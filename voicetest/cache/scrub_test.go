package cache

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echoServer answers every request with a JSON document that repeats the
// request's body and userinfo, as servers do in error details and
// "you sent" fields, plus a credential of its own (an OAuth token
// endpoint's access_token).
func echoServer(t *testing.T, issued string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		user, pass, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"received":%q,"user":%q,"pass":%q,"access_token":%q,"token_type":"bearer"}`, body, user, pass, issued)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Issue #15, item 6: secrets sent only in a request body (JSON or form),
// or only in a URL's userinfo, and echoed back by the server, never reach
// a cache file; nor does a credential the server issues. One canary per
// path.
func TestTransportBodySecretsEchoedNeverOnDisk(t *testing.T) {
	const issued = "srv-issued-canary-0b1e5c7a"
	cases := []struct {
		name, canary, ctype, body, userinfo string
	}{
		{"json api_key", "jsonkey-canary-5e1d0c", "application/json", `{"model":"m","api_key":"%s"}`, ""},
		{"json password nested", "jsonpw-canary-77ac21", "application/json", `{"model":"m","auth":{"password":"%s"}}`, ""},
		{"json client_secret", "jsoncs-canary-3f9a4e", "application/json", `{"grant":"x","client_secret":"%s"}`, ""},
		{"json token", "jsontok-canary-c0ffee", "application/json", `{"token":"%s","q":"hello"}`, ""},
		{"form client_secret", "formcs-canary-a1b2c3", "application/x-www-form-urlencoded", "grant_type=client_credentials&client_secret=%s", ""},
		{"form password", "formpw-canary-d4e5f6", "application/x-www-form-urlencoded", "username=bob&password=%s", ""},
		{"url userinfo", "userinfo-canary-998877", "application/json", `{"model":"m"}`, "bob:%s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := echoServer(t, issued)
			c := openTest(t, dir, Record)
			client := c.Client(WithProvider("echo"))
			target := srv.URL + "/v1/token"
			if tc.userinfo != "" {
				u, _ := url.Parse(target)
				user, pass, _ := strings.Cut(fmt.Sprintf(tc.userinfo, tc.canary), ":")
				u.User = url.UserPassword(user, pass)
				target = u.String()
			}
			body := tc.body
			if strings.Contains(body, "%s") {
				body = fmt.Sprintf(body, tc.canary)
			}
			req, err := http.NewRequestWithContext(t.Context(), "POST", target, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.ctype)
			resp, got := do(t, client, req)
			if resp.StatusCode != 200 {
				t.Fatalf("%s", resp.Status)
			}
			if !bytes.Contains(got, []byte("received")) {
				t.Fatalf("the echo server did not answer: %s", got)
			}
			if n := secretsOnDisk(t, []string{dir}, tc.canary, issued); n < 2 {
				t.Errorf("%d files written, want an entry and a body", n)
			}
		})
	}
}

// secretsOnDisk fails t for each secret found in a file under roots, and
// returns how many files it read.
func secretsOnDisk(t *testing.T, roots []string, secrets ...string) int {
	t.Helper()
	n := 0
	for _, root := range roots {
		for _, f := range files(t, root) {
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			n++
			for _, secret := range secrets {
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("%s holds %q:\n%s", f, secret, data)
				}
			}
		}
	}
	return n
}

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
	if n := secretsOnDisk(t, []string{dir, usage}, envCanary); n < 6 {
		t.Errorf("only %d files written: the three answers were not all stored", n)
	}
}
