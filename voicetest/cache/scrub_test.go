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
			n := 0
			filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				if err != nil || info.IsDir() {
					return err
				}
				n++
				data, _ := os.ReadFile(p)
				for _, secret := range []string{tc.canary, issued} {
					if bytes.Contains(data, []byte(secret)) {
						t.Errorf("%s holds %q:\n%s", filepath.Base(p), secret, data)
					}
				}
				return nil
			})
			if n < 2 {
				t.Errorf("%d files written, want an entry and a body", n)
			}
		})
	}
}
