package openaioracle_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// captured is one request as the server saw it.
type captured struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// captureServer records every request and answers the n-th (from 0) with
// answer.
type captureServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newCaptureServer(t *testing.T, answer func(n int, c captured, w http.ResponseWriter, r *http.Request)) *captureServer {
	t.Helper()
	s := &captureServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c := captured{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, c)
		s.mu.Unlock()
		answer(n, c, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// take returns the requests captured since the last take.
func (s *captureServer) take() []captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// oracleKey is the bearer key of the oracle tests.
const oracleKey = "sk-oracle-key"

// oracleClient is openai-go configured as the clients configured it.
func oracleClient(base string, maxRetries int, h *http.Client) openai.Client {
	return openai.NewClient(option.WithBaseURL(base), option.WithAPIKey(oracleKey),
		option.WithHTTPClient(h), option.WithMaxRetries(maxRetries))
}

// formPart is one part of a multipart body.
type formPart struct {
	name, filename, contentType string
	data                        []byte
}

// parseForm returns the parts of a multipart/form-data body, sorted by
// name, and fails t if the body is not one.
func parseForm(t *testing.T, c captured) []formPart {
	t.Helper()
	mt, params, err := mime.ParseMediaType(c.header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/form-data", mt)
	var parts []formPart
	mr := multipart.NewReader(bytes.NewReader(c.body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(p)
		require.NoError(t, err)
		parts = append(parts, formPart{name: p.FormName(), filename: p.FileName(), contentType: p.Header.Get("Content-Type"), data: data})
	}
	slices.SortStableFunc(parts, func(a, b formPart) int { return strings.Compare(a.name, b.name) })
	return parts
}

// headersThatMatter returns h without what differs between two clients
// by design: the User-Agent, openai-go's X-Stainless-* telemetry, and the
// multipart boundary.
func headersThatMatter(h http.Header) http.Header {
	out := h.Clone()
	out.Del("User-Agent")
	for k := range out {
		if strings.HasPrefix(k, "X-Stainless-") {
			delete(out, k)
		}
	}
	if mt, _, err := mime.ParseMediaType(out.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		out.Set("Content-Type", mt)
	}
	return out
}

// assertSameRequest checks that ours is the request the oracle sent.
func assertSameRequest(t *testing.T, oracle, ours captured, multipartBody bool) {
	t.Helper()
	assert.Equal(t, oracle.method, ours.method, "method")
	assert.Equal(t, oracle.path, ours.path, "path")
	assert.Equal(t, oracle.query, ours.query, "query")
	assert.Equal(t, headersThatMatter(oracle.header), headersThatMatter(ours.header), "headers")
	assert.Equal(t, "Bearer "+oracleKey, ours.header.Get("Authorization"))
	assert.Equal(t, fmt.Sprint(len(ours.body)), ours.header.Get("Content-Length"), "the body is sent with its length")
	if multipartBody {
		assert.Equal(t, parseForm(t, oracle), parseForm(t, ours), "multipart fields and file")
	} else {
		assert.JSONEq(t, string(oracle.body), string(ours.body), "JSON body")
	}
}
