package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
)

// Retry policy, as openai-go's (internal/requestconfig, v3.95.0), which
// the Client used before it sent requests itself.
const (
	// defaultMaxRetries is how often a failed call is retried unless
	// WithMaxRetries says otherwise.
	defaultMaxRetries = 2
	// maxRetryDelay bounds the backoff before a retry.
	maxRetryDelay = 8 * time.Second
	// maxRetryAfter bounds the Retry-After (or Retry-After-Ms) delay the
	// client waits: a server asking more is not retried.
	maxRetryAfter = 2 * time.Minute
	// maxErrorBody bounds the body of an error response that is read.
	maxErrorBody = 1 << 20
)

// userAgent is the User-Agent of the Client's requests.
const userAgent = "voicetest-llm/1 (Go)"

// APIError is an error status answered by the endpoint, with the error
// object of its body (OpenAI's {"error": {"message", "type", "param",
// "code"}}) when it sent one. Complete's errors wrap it: use errors.As to
// read the status.
type APIError struct {
	// StatusCode is the HTTP status, 400 or above.
	StatusCode int
	// Message, Type, Param and Code are the body's error object's fields
	// (code as text, whether it was sent as a string or a number).
	Message, Type, Param, Code string
	// Method and URL are the request's.
	Method, URL string
}

// Error implements error: the request, the status and the endpoint's
// message.
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	s := fmt.Sprintf("%s %q: %d %s: %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode), msg)
	if e.Type != "" {
		s += " type=" + e.Type
	}
	if e.Param != "" {
		s += " param=" + e.Param
	}
	if e.Code != "" {
		s += " code=" + e.Code
	}
	return s
}

// endpoint posts JSON to one URL of an OpenAI-compatible server: the
// headers, retries and error statuses openai-go handled, with none of its
// per-call option building, middleware or reflection.
type endpoint struct {
	client     *http.Client
	url        *url.URL    // the request's URL; copied per request
	urlText    string      // url as text, for errors
	header     http.Header // the headers of every request; cloned per request
	maxRetries int
}

// newEndpoint returns an endpoint posting to base + path with key as its
// bearer token through h, which it does not modify: a redirect to another
// origin than base's is refused, so that the key never leaves it.
func newEndpoint(h *http.Client, base, path, key string, maxRetries int) (*endpoint, error) {
	bu, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(bu.Path, "/") {
		bu.Path += "/"
		if bu.RawPath != "" {
			bu.RawPath += "/"
		}
	}
	u, err := bu.Parse(path)
	if err != nil {
		return nil, err
	}
	hc := *h
	next := h.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("llm: the endpoint redirected to %s://%s, another origin than %s://%s; the request is not followed there", req.URL.Scheme, req.URL.Host, u.Scheme, u.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("llm: stopped after 10 redirects")
		}
		return nil
	}
	hdr := http.Header{
		"Authorization": {"Bearer " + key},
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
		"User-Agent":    {userAgent},
	}
	return &endpoint{client: &hc, url: u, urlText: u.String(), header: hdr, maxRetries: maxRetries}, nil
}

// post sends body and returns the response body of a 2xx answer (at most
// keepalive.MaxResponseBytes), retrying as openai-go did: after a
// connection error, or a 408, 409, 429 or 5xx answer (unless the server's
// x-should-retry says otherwise), waiting the server's Retry-After or an
// exponential backoff from 0.5 s. An error status is returned as an *APIError.
func (e *endpoint) post(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		res, err := e.attempt(ctx, body)
		if err == nil {
			out, rerr := readBody(res)
			if rerr != nil {
				return nil, rerr
			}
			if res.StatusCode < 400 {
				return out, nil
			}
			err = apiError(res, out, e.urlText)
		}
		if cerr := ctx.Err(); cerr != nil {
			if res != nil {
				return nil, fmt.Errorf("%w (%w)", cerr, err)
			}
			return nil, err
		}
		if attempt >= e.maxRetries || !retryable(res) {
			return nil, err
		}
		delay, ok := retryDelay(res, attempt)
		if !ok {
			return nil, err
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("waiting %v to retry: %w (after %w)", delay.Round(time.Millisecond), ctx.Err(), err)
		case <-timer.C:
		}
	}
}

// attempt sends body once.
func (e *endpoint) attempt(ctx context.Context, body []byte) (*http.Response, error) {
	u := *e.url
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           &u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        e.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Host:          u.Host,
	}).WithContext(ctx)
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return e.client.Do(req)
}

// readBody reads and closes res's body, at most
// keepalive.MaxResponseBytes of it; of an error status's body, the first
// maxErrorBody bytes, which are enough for its message.
func readBody(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		out, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		if err != nil {
			return nil, fmt.Errorf("reading the %d answer's body: %w", res.StatusCode, err)
		}
		return out, nil
	}
	const limit = int64(keepalive.MaxResponseBytes)
	if n := res.ContentLength; n >= 0 {
		if n > limit {
			return nil, fmt.Errorf("reading the response body: the endpoint sends %d bytes, more than the %d accepted", n, limit)
		}
		out := make([]byte, n)
		if _, err := io.ReadFull(res.Body, out); err != nil {
			return nil, fmt.Errorf("reading the response body: %w", err)
		}
		return out, nil
	}
	out, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response body: %w", err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("reading the response body: it is larger than the %d bytes accepted", limit)
	}
	return out, nil
}

// apiError returns the error of an error status whose body is body.
func apiError(res *http.Response, body []byte, u string) *APIError {
	e := &APIError{StatusCode: res.StatusCode, Method: http.MethodPost, URL: u}
	var env struct {
		Error *struct {
			Message lenientString   `json:"message"`
			Type    lenientString   `json:"type"`
			Param   lenientString   `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Message, e.Type, e.Param = string(env.Error.Message), string(env.Error.Type), string(env.Error.Param)
		var code lenientString
		if len(env.Error.Code) > 0 && json.Unmarshal(env.Error.Code, &code) == nil && code != "" {
			e.Code = string(code)
		} else if c := string(env.Error.Code); c != "" && c != "null" {
			e.Code = c
		}
	} else if len(body) > 0 {
		e.Message = fmt.Sprintf("%.200q", body)
	}
	return e
}

// retryable reports whether a call that got res (nil: no response, a
// connection error) is worth another attempt.
func retryable(res *http.Response) bool {
	if res == nil {
		return true
	}
	switch res.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusConflict ||
		res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= http.StatusInternalServerError
}

// retryDelay returns how long to wait before retry number attempt+1 and
// whether to retry at all: what the server's Retry-After-Ms or
// Retry-After (seconds or an HTTP date) asks for, if it asks for at most
// maxRetryAfter (asking more means no retry); without one, 0.5 s doubled
// per attempt up to maxRetryDelay, less up to a quarter of jitter.
func retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	if d, ok := retryAfter(res); ok {
		return d, d <= maxRetryAfter
	}
	backoff := 0.5 * float64(time.Second) * math.Pow(2, float64(attempt))
	delay := maxRetryDelay
	if backoff < float64(maxRetryDelay) {
		delay = time.Duration(backoff)
	}
	if j := int64(delay / 4); j > 0 {
		delay -= time.Duration(rand.Int64N(j))
	}
	return delay, true
}

// retryAfter returns the delay res's Retry-After-Ms or Retry-After header
// asks for (0 for a date past; more than maxRetryAfter, capped, for one
// too far), if one is valid.
func retryAfter(res *http.Response) (time.Duration, bool) {
	if res == nil {
		return 0, false
	}
	for _, h := range [...]struct {
		name string
		unit time.Duration
	}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
		v := res.Header.Get(h.name)
		if v == "" {
			continue
		}
		if n, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			switch {
			case math.IsNaN(n) || n < 0:
				continue
			case n > float64(maxRetryAfter)/float64(h.unit):
				return maxRetryAfter + 1, true
			}
			return time.Duration(n * float64(h.unit)), true
		}
		if h.name == "Retry-After" {
			if at, err := http.ParseTime(v); err == nil {
				return min(max(time.Until(at), 0), maxRetryAfter+1), true
			}
		}
	}
	return 0, false
}
