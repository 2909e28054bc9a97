package openaihttp

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

// Retry policy and bounds, as openai-go's (internal/requestconfig,
// v3.95.0), which voicetest's clients used before they sent requests
// themselves.
const (
	// DefaultMaxRetries is how often a failed call is retried unless the
	// client's WithMaxRetries says otherwise.
	DefaultMaxRetries = 2
	// MaxRetryDelay bounds the backoff before a retry.
	MaxRetryDelay = 8 * time.Second
	// MaxRetryAfter bounds the Retry-After (or Retry-After-Ms) delay the
	// endpoint waits: a server asking more is not retried.
	MaxRetryAfter = 2 * time.Minute
	// MaxErrorBody bounds the body of an error response that is read.
	MaxErrorBody = 1 << 20
	// MaxBody is the default bound of a 2xx answer's body, the keep-alive
	// transport's bound of a whole response.
	MaxBody = keepalive.MaxResponseBytes
)

// APIError is an error status answered by the endpoint, with the error
// object of its body (OpenAI's {"error": {"message", "type", "param",
// "code"}}) when it sent one. The clients' errors wrap it: use errors.As
// to read the status.
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

// TooLargeError is a 2xx answer whose body is larger than the endpoint
// accepts (Config.MaxBody); the body is not read past the bound.
type TooLargeError struct {
	// Limit is the bound, in bytes.
	Limit int64
	// Declared is the answer's Content-Length, or -1 when it sent none
	// (the body was read to one byte past Limit).
	Declared int64
}

// Error implements error.
func (e *TooLargeError) Error() string {
	if e.Declared >= 0 {
		return fmt.Sprintf("reading the response body: the endpoint sends %d bytes, more than the %d accepted", e.Declared, e.Limit)
	}
	return fmt.Sprintf("reading the response body: it is larger than the %d bytes accepted", e.Limit)
}

// Config says where and how an Endpoint posts.
type Config struct {
	// Base is the server's base URL ("https://api.openai.com/v1/"); Path
	// is the endpoint's path relative to it ("chat/completions").
	Base, Path string
	// Key is the bearer key sent with every request (and only there).
	Key string
	// UserAgent, ContentType and Accept are the requests' headers;
	// Post may give another content type per request.
	UserAgent, ContentType, Accept string
	// MaxRetries is how often a failed call is retried.
	MaxRetries int
	// MaxBody bounds a 2xx answer's body (0: MaxBody).
	MaxBody int64
}

// Endpoint posts to one URL of an OpenAI-compatible server: the headers,
// retries and error statuses openai-go handled, with none of its per-call
// option building, middleware or reflection. It is safe for concurrent
// use.
type Endpoint struct {
	client     *http.Client
	url        *url.URL    // the request's URL; copied per request
	urlText    string      // url as text, for errors
	header     http.Header // the headers of every request; cloned per request
	maxRetries int
	maxBody    int64
}

// New returns an Endpoint posting to cfg.Base + cfg.Path through h, which
// it does not modify: a redirect to another origin than the endpoint's is
// refused, so that the key never leaves it.
func New(h *http.Client, cfg Config) (*Endpoint, error) {
	bu, err := url.Parse(cfg.Base)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(bu.Path, "/") {
		bu.Path += "/"
		if bu.RawPath != "" {
			bu.RawPath += "/"
		}
	}
	u, err := bu.Parse(cfg.Path)
	if err != nil {
		return nil, err
	}
	hc := *h
	next := h.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("the endpoint redirected to %s://%s, another origin than %s://%s; the request is not followed there", req.URL.Scheme, req.URL.Host, u.Scheme, u.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	hdr := http.Header{
		"Authorization": {"Bearer " + cfg.Key},
		"Content-Type":  {cfg.ContentType},
		"Accept":        {cfg.Accept},
		"User-Agent":    {cfg.UserAgent},
	}
	maxBody := cfg.MaxBody
	if maxBody <= 0 {
		maxBody = MaxBody
	}
	return &Endpoint{client: &hc, url: u, urlText: u.String(), header: hdr, maxRetries: max(cfg.MaxRetries, 0), maxBody: maxBody}, nil
}

// URL returns the URL the endpoint posts to.
func (e *Endpoint) URL() string { return e.urlText }

// Post sends body (with contentType, or Config.ContentType when it is
// empty) and returns the body and headers of a 2xx answer (at most
// Config.MaxBody bytes; a larger one is a *TooLargeError), retrying as
// openai-go did: after a connection error, or a 408, 409, 429 or 5xx
// answer (unless the server's x-should-retry says otherwise), waiting the
// server's Retry-After or an exponential backoff from 0.5 s. An error
// status is returned as an *APIError.
func (e *Endpoint) Post(ctx context.Context, body []byte, contentType string) ([]byte, http.Header, error) {
	for attempt := 0; ; attempt++ {
		res, err := e.attempt(ctx, body, contentType)
		if err == nil {
			out, rerr := e.readBody(res)
			if rerr != nil {
				return nil, nil, rerr
			}
			if res.StatusCode < 400 {
				return out, res.Header, nil
			}
			err = apiError(res, out, e.urlText)
		}
		if cerr := ctx.Err(); cerr != nil {
			if res != nil {
				return nil, nil, fmt.Errorf("%w (%w)", cerr, err)
			}
			return nil, nil, err
		}
		if attempt >= e.maxRetries || !retryable(res) {
			return nil, nil, err
		}
		delay, ok := retryDelay(res, attempt)
		if !ok {
			return nil, nil, err
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, fmt.Errorf("waiting %v to retry: %w (after %w)", delay.Round(time.Millisecond), ctx.Err(), err)
		case <-timer.C:
		}
	}
}

// attempt sends body once.
func (e *Endpoint) attempt(ctx context.Context, body []byte, contentType string) (*http.Response, error) {
	u := *e.url
	h := e.header.Clone()
	if contentType != "" {
		h["Content-Type"] = []string{contentType}
	}
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           &u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Host:          u.Host,
	}).WithContext(ctx)
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return e.client.Do(req)
}

// readBody reads and closes res's body, at most e.maxBody of it; of an
// error status's body, the first MaxErrorBody bytes, which are enough for
// its message.
func (e *Endpoint) readBody(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		out, err := io.ReadAll(io.LimitReader(res.Body, MaxErrorBody))
		if err != nil {
			return nil, fmt.Errorf("reading the %d answer's body: %w", res.StatusCode, err)
		}
		return out, nil
	}
	limit := e.maxBody
	if n := res.ContentLength; n >= 0 {
		if n > limit {
			return nil, &TooLargeError{Limit: limit, Declared: n}
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
		return nil, &TooLargeError{Limit: limit, Declared: -1}
	}
	return out, nil
}

// LenientString is a JSON string that reads a value of another type (a
// number, null, an object) as empty instead of failing, as openai-go's
// decoding does.
type LenientString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *LenientString) UnmarshalJSON(b []byte) error {
	*s = ""
	if len(b) == 0 || b[0] != '"' {
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = LenientString(v)
	return nil
}

// apiError returns the error of an error status whose body is body.
func apiError(res *http.Response, body []byte, u string) *APIError {
	e := &APIError{StatusCode: res.StatusCode, Method: http.MethodPost, URL: u}
	var env struct {
		Error *struct {
			Message LenientString   `json:"message"`
			Type    LenientString   `json:"type"`
			Param   LenientString   `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Message, e.Type, e.Param = string(env.Error.Message), string(env.Error.Type), string(env.Error.Param)
		var code LenientString
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
// MaxRetryAfter (asking more means no retry); without one, 0.5 s doubled
// per attempt up to MaxRetryDelay, less up to a quarter of jitter.
func retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	if d, ok := retryAfter(res); ok {
		return d, d <= MaxRetryAfter
	}
	backoff := 0.5 * float64(time.Second) * math.Pow(2, float64(attempt))
	delay := MaxRetryDelay
	if backoff < float64(MaxRetryDelay) {
		delay = time.Duration(backoff)
	}
	if j := int64(delay / 4); j > 0 {
		delay -= time.Duration(rand.Int64N(j))
	}
	return delay, true
}

// retryAfter returns the delay res's Retry-After-Ms or Retry-After header
// asks for (0 for a date past; more than MaxRetryAfter, capped, for one
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
			case n > float64(MaxRetryAfter)/float64(h.unit):
				return MaxRetryAfter + 1, true
			}
			return time.Duration(n * float64(h.unit)), true
		}
		if h.name == "Retry-After" {
			if at, err := http.ParseTime(v); err == nil {
				return min(max(time.Until(at), 0), MaxRetryAfter+1), true
			}
		}
	}
	return 0, false
}
