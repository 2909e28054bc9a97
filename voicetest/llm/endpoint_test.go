package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// scriptedServer answers the n-th request (from 0) with answer(n, w, r)
// and counts the requests.
func scriptedServer(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		answer(int(calls.Add(1))-1, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func writeCompletion(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"model":"m","choices":[{"finish_reason":"stop","message":{"role":"assistant","content":%q}}]}`, content)
}

func writeError(w http.ResponseWriter, status int, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":{"message":"status %d","type":"t","param":null,"code":429}}`, status)
}

var hi = voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}}

// TestCallRetriesAsOpenAIGo: the retry policy openai-go applied, kept
// when the Client sends requests itself: 408, 409, 429 and 5xx answers and
// connection errors are retried (twice by default) after the server's
// Retry-After or a backoff from 0.5 s; other statuses, and any the server
// marks x-should-retry: false, are not. It runs in a synctest bubble, so
// the waits are virtual and measured exactly.
func TestCallRetriesAsOpenAIGo(t *testing.T) {
	cases := []struct {
		name    string
		answer  func(n int, w http.ResponseWriter, r *http.Request)
		calls   int32
		wait    time.Duration // exact, or (with waitMax) at least
		waitMax time.Duration
		err     string // "": the call succeeds
		status  int
	}{
		{name: "429 with Retry-After-Ms", answer: func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				writeError(w, 429, "Retry-After-Ms", "1500")
				return
			}
			writeCompletion(w, "ok")
		}, calls: 2, wait: 1500 * time.Millisecond},
		{name: "503 with Retry-After seconds", answer: func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 2 {
				writeError(w, 503, "Retry-After", "3")
				return
			}
			writeCompletion(w, "ok")
		}, calls: 3, wait: 6 * time.Second},
		{name: "500 thrice: backoff, then the last error", answer: func(_ int, w http.ResponseWriter, _ *http.Request) {
			writeError(w, 500)
		}, calls: 3, wait: 1125 * time.Millisecond, waitMax: 1500 * time.Millisecond, err: "500 Internal Server Error: status 500 type=t code=429", status: 500},
		{name: "400 is not retried", answer: func(_ int, w http.ResponseWriter, _ *http.Request) {
			writeError(w, 400)
		}, calls: 1, err: "400 Bad Request: status 400", status: 400},
		{name: "x-should-retry false", answer: func(_ int, w http.ResponseWriter, _ *http.Request) {
			writeError(w, 429, "x-should-retry", "false")
		}, calls: 1, err: "429 Too Many Requests", status: 429},
		{name: "x-should-retry true on a 400", answer: func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				writeError(w, 400, "x-should-retry", "true", "Retry-After-Ms", "10")
				return
			}
			writeCompletion(w, "ok")
		}, calls: 2, wait: 10 * time.Millisecond},
		{name: "Retry-After over two minutes is not waited", answer: func(_ int, w http.ResponseWriter, _ *http.Request) {
			writeError(w, 429, "Retry-After", "121")
		}, calls: 1, err: "429 Too Many Requests", status: 429},
		{name: "connection error", answer: func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				c, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = c.Close()
				}
				return
			}
			writeCompletion(w, "ok")
		}, calls: 2, wait: 375 * time.Millisecond, waitMax: 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := scriptedServer(t, tc.answer)
			cl, err := New(withGetenv(noEnv), WithBaseURL(srv.URL+"/v1/"), WithAPIKey("k"), WithModel("m"))
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				resp, err := cl.Complete(t.Context(), hi)
				waited := time.Since(start)
				if tc.err == "" {
					require.NoError(t, err)
					assert.Equal(t, "ok", resp.Message.Content)
				} else {
					require.ErrorContains(t, err, tc.err)
					var apiErr *APIError
					require.True(t, errors.As(err, &apiErr), "%v is not an *APIError", err)
					assert.Equal(t, tc.status, apiErr.StatusCode)
					assert.Equal(t, fmt.Sprintf("status %d", tc.status), apiErr.Message)
					assert.Equal(t, "t", apiErr.Type)
					assert.Empty(t, apiErr.Param)
					assert.Equal(t, "429", apiErr.Code)
				}
				if tc.waitMax == 0 {
					assert.Equal(t, tc.wait, waited, "virtual time waited")
				} else {
					assert.GreaterOrEqual(t, waited, tc.wait, "virtual time waited")
					assert.LessOrEqual(t, waited, tc.waitMax, "virtual time waited")
				}
			})
			assert.Equal(t, tc.calls, calls.Load(), "requests")
		})
	}
}

// TestCallSendsHeadersAndRefusesForeignRedirects: a request carries the
// bearer key, JSON content type and accept headers; a redirect to another
// origin is not followed (the key never leaves the endpoint's origin),
// one within it is.
func TestCallSendsHeadersAndRefusesForeignRedirects(t *testing.T) {
	var foreign atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		writeCompletion(w, "elsewhere")
	}))
	t.Cleanup(other.Close)
	var got http.Header
	srv, calls := scriptedServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case n == 0:
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case n == 1:
			http.Redirect(w, r, "/v2/chat/completions", http.StatusPermanentRedirect)
		default:
			got = r.Header.Clone()
			writeCompletion(w, r.URL.Path)
		}
	})
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.URL+"/v1"), WithAPIKey("sk-secret"), WithModel("m"), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = cl.Complete(t.Context(), hi)
	require.ErrorContains(t, err, "another origin")
	assert.Zero(t, foreign.Load(), "the foreign origin was reached")
	resp, err := cl.Complete(t.Context(), hi)
	require.NoError(t, err)
	assert.Equal(t, "/v2/chat/completions", resp.Message.Content, "a redirect within the origin is followed")
	assert.EqualValues(t, 3, calls.Load())
	assert.Equal(t, "Bearer sk-secret", got.Get("Authorization"))
	assert.Equal(t, "application/json", got.Get("Content-Type"))
	assert.Equal(t, "application/json", got.Get("Accept"))
}

// TestCallBoundsTheAnswer: a 2xx answer larger than 64 MiB (by its
// Content-Length) is refused before it is read; an error answer's body is
// read only as far as its first megabyte, and its status still reported.
func TestCallBoundsTheAnswer(t *testing.T) {
	srv, _ := scriptedServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Content-Length", fmt.Sprint(keepalive.MaxResponseBytes+1))
			w.WriteHeader(http.StatusOK)
			return // the server closes the short body
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"`))
		_, _ = w.Write(bytes.Repeat([]byte("x"), 2*openaihttp.MaxErrorBody))
		_, _ = w.Write([]byte(`"}}`))
	})
	cl, err := New(withGetenv(noEnv), WithBaseURL(srv.URL+"/v1/"), WithAPIKey("k"), WithModel("m"), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = cl.Complete(t.Context(), hi)
	require.ErrorContains(t, err, "more than the 67108864 accepted")
	_, err = cl.Complete(t.Context(), hi)
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	assert.Less(t, len(apiErr.Message), 300, "the message quotes the start of the body")
}
