package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// TransportOption configures Transport.
type TransportOption func(*transport)

// WithProvider sets the key's Provider for every request (for example
// "openai"). By default it is the request's host name, or "loopback" for a
// server on this machine.
func WithProvider(name string) TransportOption {
	return func(t *transport) { t.provider = name }
}

// WithKind sets the key's Kind for every request. By default it follows
// the path: ".../audio/speech" is "tts", ".../audio/transcriptions" and
// ".../audio/translations" are "stt", ".../chat/completions",
// ".../completions" and ".../responses" are "llm", anything else "http".
func WithKind(kind string) TransportOption {
	return func(t *transport) { t.kind = kind }
}

// WithHostAlias makes requests to host (a host name, or host:port) enter the
// key as alias instead of their scheme and host, so recordings made against
// one server replay against another, e.g.
// WithHostAlias("localhost:11434", "ollama"). Loopback hosts never enter the
// key, because test servers listen on random ports.
func WithHostAlias(host, alias string) TransportOption {
	return func(t *transport) { t.aliases[strings.ToLower(host)] = alias }
}

// KeyOnPath leaves the scheme and host out of every key, so the same path
// on any server shares entries.
func KeyOnPath() TransportOption {
	return func(t *transport) { t.pathOnly = true }
}

// IgnoreHeaders leaves more request headers out of the key, for headers a
// client sends that vary from run to run. Credentials, user agents, request
// ids, idempotency keys, tracing and X-Stainless-* headers are always left
// out.
func IgnoreHeaders(names ...string) TransportOption {
	return func(t *transport) {
		for _, n := range names {
			t.ignore[http.CanonicalHeaderKey(n)] = true
		}
	}
}

// Transport returns an http.RoundTripper that answers requests from the
// cache and calls base (http.DefaultTransport if nil) according to the
// mode. Use it for HTTP providers, e.g. with openai-go:
//
//	client := openai.NewClient(option.WithHTTPClient(c.Client()))
//
// The key of a request is its method, URL path, sorted query, the headers
// that can change the answer, and its body: JSON canonically, multipart
// forms by field with file parts by SHA-256 (independent of the random
// boundary), anything else by SHA-256. Credentials (Authorization, Api-Key
// and any header, query parameter or JSON field named like a key, token,
// secret or password), cookies, user agents, X-Stainless-* headers, request
// ids and idempotency keys never enter a key or a file. What is stored is
// scrubbed with a scrub.Scrubber that learned the request's secrets (its
// credential headers, its URL's userinfo and credential parameters, and
// the credential fields of a JSON, form or multipart body) and those of
// the environment (scrub.FromEnv): they are blanked wherever the server
// echoes them, and credentials the server issues (JSON members or form
// fields named like them, such as an access_token) are blanked by name.
//
// Only 2xx responses are stored; others are passed through unstored in
// Record and Refresh modes. A stored response is its status, Content-Type
// (and Content-Encoding) and the body, replayed byte for byte. A streamed
// response (text/event-stream, or a request with "stream": true) reaches
// the caller as it arrives and is stored when its body has been read to the
// end; one closed early is not stored.
//
// Every identical request gets the same stored answer: the cache does not
// keep sequences of different answers to one request.
func (c *Cache) Transport(base http.RoundTripper, opts ...TransportOption) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{c: c, base: base, aliases: map[string]string{}, ignore: map[string]bool{}}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Client returns an *http.Client whose transport is c.Transport(nil, opts...).
func (c *Cache) Client(opts ...TransportOption) *http.Client {
	return &http.Client{Transport: c.Transport(nil, opts...)}
}

type transport struct {
	c        *Cache
	base     http.RoundTripper
	provider string
	kind     string
	pathOnly bool
	aliases  map[string]string
	ignore   map[string]bool
}

// httpRequest is a request reduced to its key, plus what redaction needs.
type httpRequest struct {
	key     Key
	summary func() string
	scrub   *scrub.Scrubber // knows the request's secrets
	stream  bool
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("voicetest/cache: reading request body of %s %s: %w", req.Method, req.URL.Path, err)
		}
		body = b
	}
	hr, err := t.describe(req, body)
	if err != nil {
		return nil, err
	}
	r, err := t.c.newRequest(hr.key, hr.summary)
	if err != nil {
		return nil, err
	}
	// The request sent on is the caller's, unchanged, with its body restored.
	send := func(ctx context.Context) (*http.Response, error) {
		out := req.Clone(ctx)
		if body != nil {
			out.Body = io.NopCloser(bytes.NewReader(body))
			out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			out.ContentLength = int64(len(body))
		}
		return t.base.RoundTrip(out)
	}
	if t.c.mode == Off {
		// The cache is not involved: the response, streamed or not, is the
		// server's, untouched.
		return send(req.Context())
	}
	if hr.stream {
		return t.roundTripStream(req, r, hr, send)
	}
	s, err := t.c.get(req.Context(), r, func(ctx context.Context) (stored, error) {
		resp, err := send(ctx)
		if err != nil {
			return stored{}, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return stored{}, fmt.Errorf("reading response body: %w", err)
		}
		s := responseStored(resp, data, hr.scrub)
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return stored{}, &unstored{s}
		}
		return s, nil
	}, nil)
	var u *unstored
	if errors.As(err, &u) {
		return storedResponse(req, u.s), nil
	}
	if err != nil {
		return nil, err
	}
	return storedResponse(req, s), nil
}

// unstored carries a non-2xx response through the cache without storing it.
type unstored struct{ s stored }

func (u *unstored) Error() string { return "HTTP " + strconv.Itoa(u.s.meta.Status) + " (not stored)" }

// roundTripStream serves a streamed request: a stored answer at once, or the
// live response teed into the store as the caller reads it.
func (t *transport) roundTripStream(req *http.Request, r request, hr httpRequest, send func(context.Context) (*http.Response, error)) (*http.Response, error) {
	c := t.c
	c.mu.Lock()
	closed, refreshed := c.closed, c.refreshed[r.digest]
	c.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("voicetest/cache: cache %s used after Close (after its test ended?)", c.dir)
	}
	if c.mode != Refresh || refreshed {
		s, err := c.load(r)
		if err == nil {
			return storedResponse(req, s), c.markUsed(r)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if c.mode == Replay {
			return nil, c.missError(r)
		}
	}
	resp, err := send(req.Context())
	if err != nil {
		return nil, fmt.Errorf("voicetest/cache: %s from %s: %w", r.key.Kind, r.key.Provider, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, nil
	}
	meta := responseStored(resp, nil, nil)
	resp.Body = &teeBody{rc: resp.Body, done: func(data []byte) error {
		s := responseStored(resp, data, hr.scrub)
		if err := c.store(r, s); err != nil {
			return err
		}
		c.mu.Lock()
		c.refreshed[r.digest] = true
		c.mu.Unlock()
		return c.markUsed(r)
	}}
	resp.Header = meta.header()
	return resp, nil
}

// teeBody passes a response body through while keeping a copy, and stores
// the copy when the body has been read to io.EOF.
type teeBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	done func([]byte) error
	once sync.Once
	err  error
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.once.Do(func() { b.err = b.done(b.buf.Bytes()) })
		if b.err != nil {
			return n, b.err
		}
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// responseStored turns a live response into what is stored: status, the
// allowed headers and the body scrubbed by sc: the request's secrets
// blanked wherever the server echoed them, and credentials the server
// issued (members and fields named like them) blanked by name.
func responseStored(resp *http.Response, data []byte, sc *scrub.Scrubber) stored {
	s := stored{data: data, meta: respMeta{Status: resp.StatusCode}}
	for _, name := range []string{"Content-Type", "Content-Encoding"} {
		if v := resp.Header.Get(name); v != "" {
			if s.meta.Header == nil {
				s.meta.Header = map[string]string{}
			}
			s.meta.Header[name] = v
		}
	}
	s.typ = resp.Header.Get("Content-Type")
	s.ext = bodyExt(s.typ, resp.Header.Get("Content-Encoding"))
	if sc != nil && len(data) > 0 {
		clean := sc.Body(s.typ, data)
		if !bytes.Equal(clean, data) {
			s.data = clean
			s.meta.Redacted = true
		}
	}
	return s
}

func (s stored) header() http.Header {
	h := http.Header{}
	for k, v := range s.meta.Header {
		h.Set(k, v)
	}
	return h
}

// storedResponse builds the response a caller gets for a stored answer.
func storedResponse(req *http.Request, s stored) *http.Response {
	status := s.meta.Status
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        s.header(),
		Body:          io.NopCloser(bytes.NewReader(s.data)),
		ContentLength: int64(len(s.data)),
		Request:       req,
	}
}

// bodyExt picks a body file extension from a response's media type.
func bodyExt(contentType, encoding string) string {
	if encoding != "" && !strings.EqualFold(encoding, "identity") {
		return "bin"
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "bin"
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json"
	case mt == "text/event-stream":
		return "sse"
	case strings.HasPrefix(mt, "text/"):
		return "txt"
	case mt == "audio/wav" || mt == "audio/x-wav" || mt == "audio/wave" || mt == "audio/vnd.wave":
		return "wav"
	case mt == "audio/mpeg" || mt == "audio/mp3":
		return "mp3"
	case mt == "audio/ogg" || mt == "audio/opus":
		return "ogg"
	case mt == "audio/flac":
		return "flac"
	case mt == "audio/aac":
		return "aac"
	}
	return "bin"
}

// describe reduces a request to its key.
func (t *transport) describe(req *http.Request, body []byte) (httpRequest, error) {
	var hr httpRequest
	u := req.URL
	if u == nil {
		return hr, errors.New("voicetest/cache: request has no URL")
	}

	// The request's secrets, learned before anything is written: the
	// credentials of the environment (a client library reads its key
	// there, and a server beside the tests shares them), the request's
	// credential headers, its URL's userinfo and credential parameters,
	// and the credential fields of its body.
	ct := req.Header.Get("Content-Type")
	sc := scrub.FromEnv()
	sc.AddHeader(req.Header)
	sc.AddURL(u.String())
	sc.AddBody(ct, body)
	hr.scrub = sc

	// Headers: keep what can change the answer.
	headers := map[string]any{}
	for name, vals := range req.Header {
		cname := http.CanonicalHeaderKey(name)
		switch {
		case scrub.HeaderName(cname):
		case noiseHeader(cname) || t.ignore[cname] || cname == "Content-Type":
		default:
			headers[strings.ToLower(cname)] = strings.Join(vals, ", ")
		}
	}

	// Query: sorted by encoding, secret parameters out.
	query := map[string]any{}
	for name, vals := range u.Query() {
		if scrub.ParamName(name) {
			continue
		}
		query[name] = slices.Clone(vals)
	}

	fields := map[string]any{"method": req.Method, "path": u.EscapedPath()}
	if fields["path"] == "" {
		fields["path"] = "/"
	}
	if origin := t.origin(u); origin != "" {
		fields["origin"] = origin
	}
	if len(query) > 0 {
		fields["query"] = scrubTree(anyStrings(query), sc)
	}
	if len(headers) > 0 {
		fields["headers"] = scrubTree(headers, sc)
	}

	model := ""
	if len(body) > 0 {
		mt, params, _ := mime.ParseMediaType(ct)
		var b any
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json") || (mt == "" && json.Valid(body)):
			tree, err := decodeTree(body)
			if err != nil {
				b = rawBody(mt, body)
				break
			}
			tree = scrubTree(tree, sc)
			if m, ok := tree.(map[string]any); ok {
				model, _ = m["model"].(string)
				if s, ok := m["stream"].(bool); ok && s {
					hr.stream = true
				}
			}
			b = tree
		case mt == "multipart/form-data":
			form, err := multipartFields(body, params["boundary"], sc)
			if err != nil {
				return hr, fmt.Errorf("voicetest/cache: %s %s: %w", req.Method, u.Path, err)
			}
			if m, ok := form["model"].(string); ok {
				model = m
			}
			b = map[string]any{"form": form}
		case mt == "application/x-www-form-urlencoded":
			vals, err := url.ParseQuery(string(body))
			if err != nil {
				b = rawBody(mt, body)
				break
			}
			form := map[string]any{}
			for name, vs := range vals {
				if scrub.Name(name) {
					continue
				}
				form[name] = anyList(vs)
			}
			b = map[string]any{"form": scrubTree(form, sc)}
		default:
			b = rawBody(mt, body)
		}
		fields["body"] = b
		if mt != "" {
			fields["content_type"] = mt
		}
	}
	if strings.Contains(strings.ToLower(req.Header.Get("Accept")), "text/event-stream") {
		hr.stream = true
	}

	kind := t.kind
	if kind == "" {
		kind = kindFromPath(u.Path)
	}
	provider := t.provider
	if provider == "" {
		provider = t.defaultProvider(u)
	}
	hr.key = Key{Kind: kind, Provider: provider, Model: model, Fields: fields}
	hr.summary = func() string {
		sum := req.Method + " " + u.EscapedPath()
		if model != "" {
			sum += " model=" + model
		}
		if b, ok := fields["body"]; ok {
			if enc, err := canonical(b); err == nil {
				sum += " body=" + preview(string(enc), 160)
			}
		}
		return sum
	}
	return hr, nil
}

func rawBody(mt string, body []byte) map[string]any {
	sum := sha256.Sum256(body)
	return map[string]any{"sha256": hex.EncodeToString(sum[:]), "size": len(body), "type": mt}
}

func anyStrings(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if vs, ok := v.([]string); ok {
			out[k] = anyList(vs)
		} else {
			out[k] = v
		}
	}
	return out
}

// anyList returns one value as itself and several as a list.
func anyList(vs []string) any {
	if len(vs) == 1 {
		return vs[0]
	}
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// multipartFields reads a multipart form into field name → value (or list
// of values); file parts become {"filename","type","sha256","size"}.
func multipartFields(body []byte, boundary string, sc *scrub.Scrubber) (map[string]any, error) {
	if boundary == "" {
		return nil, errors.New("multipart/form-data request has no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	lists := map[string][]any{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("malformed multipart body: %w", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("malformed multipart body: %w", err)
		}
		name := p.FormName()
		if scrub.Name(name) {
			continue
		}
		var v any
		ptype := p.Header.Get("Content-Type")
		if p.FileName() != "" || (ptype != "" && !strings.HasPrefix(ptype, "text/")) {
			sum := sha256.Sum256(data)
			v = map[string]any{"filename": p.FileName(), "type": ptype, "sha256": hex.EncodeToString(sum[:]), "size": len(data)}
		} else {
			v = scrubTree(string(data), sc)
		}
		lists[name] = append(lists[name], v)
	}
	form := make(map[string]any, len(lists))
	for name, vs := range lists {
		if len(vs) == 1 {
			form[name] = vs[0]
		} else {
			form[name] = vs
		}
	}
	return form, nil
}

// scrubTree removes scalar object members named like secrets and blanks
// secret values inside strings, in a decoded JSON tree.
func scrubTree(v any, sc *scrub.Scrubber) any {
	switch x := v.(type) {
	case string:
		return sc.String(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrubTree(e, sc)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			// A credential is a string (or number); an object under such a
			// name is data, like a JSON schema property called "password".
			if scrub.Name(k) && isScalar(e) {
				continue
			}
			out[k] = scrubTree(e, sc)
		}
		return out
	}
	return v
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// noiseHeader reports request headers that vary between runs or machines
// without changing the answer.
func noiseHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "user-agent", "content-length", "accept-encoding", "connection", "host",
		"date", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
		"expect", "via", "traceparent", "tracestate", "baggage", "x-amzn-trace-id",
		"x-cloud-trace-context", "if-none-match", "if-modified-since", "cache-control", "pragma":
		return true
	}
	return strings.HasPrefix(n, "x-stainless-") || strings.HasPrefix(n, "x-b3-") ||
		strings.HasPrefix(n, "x-forwarded-") || strings.HasPrefix(n, "proxy-") ||
		strings.Contains(n, "request-id") || strings.Contains(n, "requestid") ||
		strings.Contains(n, "idempotency") || strings.Contains(n, "correlation") ||
		strings.Contains(n, "trace") || strings.Contains(n, "timestamp") ||
		strings.Contains(n, "session") ||
		strings.Contains(n, "nonce")
}

func kindFromPath(p string) string {
	switch {
	case strings.HasSuffix(p, "/audio/speech"):
		return "tts"
	case strings.HasSuffix(p, "/audio/transcriptions"), strings.HasSuffix(p, "/audio/translations"):
		return "stt"
	case strings.HasSuffix(p, "/chat/completions"), strings.HasSuffix(p, "/completions"), strings.HasSuffix(p, "/responses"):
		return "llm"
	}
	return "http"
}

// origin returns what of scheme and host enters the key: "" for loopback
// hosts and KeyOnPath, the alias for aliased hosts, else scheme://host.
func (t *transport) origin(u *url.URL) string {
	if t.pathOnly {
		return ""
	}
	if a, ok := t.alias(u); ok {
		return a
	}
	if isLoopback(u.Hostname()) {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

func (t *transport) alias(u *url.URL) (string, bool) {
	if a, ok := t.aliases[strings.ToLower(u.Host)]; ok {
		return a, true
	}
	a, ok := t.aliases[strings.ToLower(u.Hostname())]
	return a, ok
}

func (t *transport) defaultProvider(u *url.URL) string {
	if a, ok := t.alias(u); ok {
		return a
	}
	h := strings.ToLower(u.Hostname())
	if h == "" || isLoopback(h) {
		return "loopback"
	}
	return h
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
