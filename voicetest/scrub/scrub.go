// Package scrub keeps secrets out of everything voicetest writes: cache
// entries, wire captures, cassettes, artifacts, golden files, logs and
// error messages. Every writer of such a thing scrubs it with a Scrubber,
// so there is one definition of what a secret is and one way to blank it.
//
// A Scrubber blanks secrets in two ways:
//
//   - By position, with nothing learned: the password of a URL's userinfo
//     (scheme://user:PASSWORD@host), the credential after "Bearer " or
//     "Basic ", and the values of parameters named like credentials
//     (ParamName: ?api_key=…, &token=…, a log line's secret=…), all three
//     inside any text; headers named like credentials (HeaderName); and
//     JSON members and form fields named like credentials (Name) whose
//     value is a string or a number.
//   - By value: every secret it has learned, wherever it appears, also
//     query-escaped, path-escaped or JSON-escaped. It learns them from what
//     the writer sends: Add for a value the caller knows (an API key),
//     AddHeader for request headers, AddURL for a URL's userinfo and query,
//     AddJSON, AddForm and AddBody for request bodies; and from the
//     environment, AddEnv (or FromEnv) for the variables named like
//     credentials (EnvName: OPENAI_API_KEY, TWILIO_AUTH_TOKEN), which
//     adapters and client libraries read. So a value the server echoes
//     back (in a 401 body, an error event, a log line) is blanked too.
//
// A blanked secret reads Placeholder ("REDACTED"). Values shorter than
// MinLen bytes are not learned, since blanking them everywhere would blank
// ordinary words; they are still blanked by position.
//
// A Scrubber is safe for concurrent use, and a nil *Scrubber scrubs by
// position only. Share one per conversation (or per request) between
// everything that writes about it:
//
//	sc := scrub.FromEnv(apiKey)
//	sc.AddURL(url)
//	sc.AddHeader(req.Header)
//	capture.Write(sc.Bytes(frame))
//	return sc.Error(err)
//
// The package imports only the standard library, so that every package of
// voicetest can use it.
package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Placeholder replaces every secret.
const Placeholder = "REDACTED"

// MinLen is the length below which a value is not learned as a secret.
const MinLen = 6

// Scrubber blanks secrets in what is written. The zero value is ready to
// use and knows no secret yet.
type Scrubber struct {
	mu  sync.Mutex               // serialises learning
	pat atomic.Pointer[[][]byte] // learned forms, longest first; replaced whole
}

// New returns a Scrubber that knows secrets.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(secrets...)
	return s
}

// Add learns secret values: every later scrub blanks them, and their
// query-escaped, path-escaped and JSON-escaped forms, wherever they
// appear. Surrounding space is trimmed; values shorter than MinLen are
// ignored.
func (s *Scrubber) Add(secrets ...string) {
	if s == nil {
		return
	}
	var forms []string
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < MinLen {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
		if q, err := json.Marshal(v); err == nil {
			forms = append(forms, string(q[1:len(q)-1]))
		}
	}
	if len(forms) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur [][]byte
	if p := s.pat.Load(); p != nil {
		cur = *p
	}
	next := slices.Clone(cur)
	for _, f := range forms {
		if len(f) < MinLen || slices.ContainsFunc(next, func(b []byte) bool { return string(b) == f }) {
			continue
		}
		next = append(next, []byte(f))
	}
	if len(next) == len(cur) {
		return
	}
	// Longest first, so a secret that holds another is blanked whole.
	slices.SortStableFunc(next, func(a, b []byte) int { return len(b) - len(a) })
	s.pat.Store(&next)
}

// Len returns how many forms of secrets s has learned.
func (s *Scrubber) Len() int {
	if s == nil {
		return 0
	}
	if p := s.pat.Load(); p != nil {
		return len(*p)
	}
	return 0
}

// AddHeader learns the values of the credential headers in h
// (HeaderName): the whole value, the credential after an auth scheme
// ("Bearer sk-…"), the user:password of Basic auth, and each cookie.
func (s *Scrubber) AddHeader(h http.Header) {
	if s == nil {
		return
	}
	for name, vals := range h {
		if !HeaderName(name) {
			continue
		}
		for _, v := range vals {
			s.Add(v)
			scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
			if ok {
				cred = strings.TrimSpace(cred)
				s.Add(cred)
				if strings.EqualFold(scheme, "basic") {
					if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
						s.Add(string(dec))
						if _, pw, ok := strings.Cut(string(dec), ":"); ok {
							s.Add(pw)
						}
					}
				}
			}
			if strings.Contains(strings.ToLower(name), "cookie") {
				for part := range strings.SplitSeq(v, ";") {
					if _, val, ok := strings.Cut(part, "="); ok {
						s.Add(val)
					}
				}
			}
		}
	}
}

// AddURL learns the secrets of a URL: the password of its userinfo (as
// written and decoded) and the values of its credential query parameters
// (ParamName).
func (s *Scrubber) AddURL(raw string) {
	if s == nil {
		return
	}
	if pw, ok := rawPassword(raw); ok {
		s.Add(pw)
		if dec, err := url.PathUnescape(pw); err == nil {
			s.Add(dec)
		}
	}
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return
	}
	query, _, _ = strings.Cut(query, "#")
	for part := range strings.SplitSeq(query, "&") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			continue
		}
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if !ParamName(k) {
			continue
		}
		s.Add(v)
		if dv, err := url.QueryUnescape(v); err == nil {
			s.Add(dv)
		}
	}
}

// AddJSON learns the values of the credential members of a JSON document
// (Name): strings and numbers under names like "api_key", "password",
// "client_secret" or "token", at any depth. A body that is not JSON
// teaches nothing.
func (s *Scrubber) AddJSON(body []byte) {
	if s == nil || !mayNameSecret(body) || !json.Valid(body) {
		return
	}
	var vals []string
	_ = scanMembers(body, func(m member) {
		if secretMember(m) {
			vals = append(vals, memberValue(body, m))
		}
	})
	s.Add(vals...)
}

// AddForm learns the values of the credential fields (Name) of an
// application/x-www-form-urlencoded body.
func (s *Scrubber) AddForm(body string) {
	if s == nil {
		return
	}
	vals, err := url.ParseQuery(body)
	if err != nil {
		return
	}
	for k, vs := range vals {
		if Name(k) {
			s.Add(vs...)
		}
	}
}

// AddBody learns the credentials of a request body by its Content-Type:
// JSON members (AddJSON), form fields (AddForm) and the text fields of a
// multipart form, all by name (Name). Other bodies teach nothing.
func (s *Scrubber) AddBody(contentType string, body []byte) {
	if s == nil || len(body) == 0 {
		return
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "":
		s.AddJSON(body)
	case mt == "application/x-www-form-urlencoded":
		s.AddForm(string(body))
	case mt == "multipart/form-data" && params["boundary"] != "":
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				return
			}
			if p.FileName() == "" && Name(p.FormName()) {
				var b bytes.Buffer
				if _, err := b.ReadFrom(p); err == nil {
					s.Add(b.String())
				}
			}
		}
	}
}

// Bytes returns b with every secret blanked: the learned values, and what
// any text shows by position (URL userinfo passwords, credentials after
// "Bearer " or "Basic ", credential parameters). It returns b itself, not
// a copy, when there is nothing to blank, and never writes to b.
func (s *Scrubber) Bytes(b []byte) []byte {
	return s.learned(scrubText(scrubUserinfo(b)))
}

// learned returns b with every learned secret blanked, b itself when
// there is none.
func (s *Scrubber) learned(b []byte) []byte {
	if s == nil {
		return b
	}
	p := s.pat.Load()
	if p == nil {
		return b
	}
	owned := false
	for _, sec := range *p {
		if !bytes.Contains(b, sec) {
			continue
		}
		if !owned {
			b = bytes.Clone(b)
			owned = true
		}
		b = bytes.ReplaceAll(b, sec, []byte(Placeholder))
	}
	return b
}

// Binary is Bytes for a binary payload, such as audio or a binary
// WebSocket frame: it blanks the learned values and URL userinfo
// passwords, but does not look for the credentials that text shows after
// "Bearer " or "Basic " and in parameters, since binary data is not text.
// Those rules scan for every ' ' and '=', which PCM holds by chance (a
// 440 Hz tone at 24 kHz has 17 spaces in 20 ms): they made scrubbing that
// frame 2.5 times slower. It returns b itself when there is nothing to
// blank, and never writes to b.
func (s *Scrubber) Binary(b []byte) []byte {
	return s.learned(scrubUserinfo(b))
}

// String is Bytes for a string.
func (s *Scrubber) String(text string) string {
	if text == "" {
		return text
	}
	// A read-only view of text: Bytes never writes to its argument, and
	// returns it as is when there is nothing to blank, so that clean text
	// (nearly every log line and event) costs no copy.
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	out := s.Bytes(b)
	if same(out, b) {
		return text
	}
	return string(out)
}

// JSON returns a JSON document with the value of every credential member
// (Name) blanked, and every learned secret blanked anywhere in it. It
// returns body itself when there is nothing to blank; a body that is not
// JSON has only its learned secrets blanked.
func (s *Scrubber) JSON(body []byte) []byte {
	return s.Bytes(scrubMembers(body))
}

// Form returns an application/x-www-form-urlencoded body (or URL query)
// with the value of every credential field (ParamName) blanked, and every
// learned secret blanked. The fields keep their order.
func (s *Scrubber) Form(body string) string {
	return s.String(scrubQuery(body))
}

// Body scrubs a body by its Content-Type: JSON by member name (JSON),
// forms by field name (Form), the data lines of an event stream as JSON,
// and any body for the learned secrets.
func (s *Scrubber) Body(contentType string, body []byte) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return s.JSON(body)
	case mt == "application/x-www-form-urlencoded":
		if out := s.Form(string(body)); out != string(body) {
			return []byte(out)
		}
		return body
	case mt == "text/event-stream":
		return s.Bytes(scrubEventStream(body))
	}
	return s.Bytes(body)
}

// scrubEventStream scrubs the JSON of each "data:" line of an event
// stream by member name.
func scrubEventStream(body []byte) []byte {
	if !mayNameSecret(body) {
		return body
	}
	lines := bytes.SplitAfter(body, []byte("\n"))
	changed := false
	for i, line := range lines {
		content := bytes.TrimRight(line, "\r\n")
		data, ok := bytes.CutPrefix(content, []byte("data:"))
		if !ok {
			continue
		}
		trimmed := bytes.TrimLeft(data, " ")
		clean := scrubMembers(trimmed)
		if same(clean, trimmed) {
			continue
		}
		var b []byte
		b = append(b, "data:"...)
		b = append(b, data[:len(data)-len(trimmed)]...)
		b = append(b, clean...)
		lines[i] = append(b, line[len(content):]...)
		changed = true
	}
	if !changed {
		return body
	}
	return bytes.Join(lines, nil)
}

// same reports whether a and b are the same slice (not merely equal).
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// URL returns raw with the password of its userinfo and the values of its
// credential query parameters (ParamName) blanked, and every learned
// secret blanked. It is what a capture, a log line or an error shows of a
// URL.
func (s *Scrubber) URL(raw string) string {
	out := raw
	if base, query, ok := strings.Cut(raw, "?"); ok {
		frag := ""
		if q, f, ok := strings.Cut(query, "#"); ok {
			query, frag = q, "#"+f
		}
		out = base + "?" + scrubQuery(query) + frag
	}
	return s.String(out)
}

// scrubQuery blanks the values of credential parameters in a query or
// form body, keeping the order of the fields.
func scrubQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	changed := false
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" || v == Placeholder {
			continue
		}
		name := k
		if dk, err := url.QueryUnescape(k); err == nil {
			name = dk
		}
		if ParamName(name) {
			parts[i] = k + "=" + Placeholder
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// Header returns a copy of h with the values of credential headers
// (HeaderName) replaced by Placeholder and every learned secret blanked in
// the others.
func (s *Scrubber) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vals := range h {
		cp := make([]string, len(vals))
		for i, v := range vals {
			if HeaderName(name) {
				cp[i] = Placeholder
			} else {
				cp[i] = s.String(v)
			}
		}
		out[name] = cp
	}
	return out
}

// Error returns err with every secret blanked from its message: err itself
// when its message holds none, else an *Error. A nil err is nil.
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.String(msg)
	if clean == msg {
		return err
	}
	return &Error{Msg: clean, Err: err}
}

// Error is an error whose message had secrets blanked. It matches what
// the original error matches (errors.Is) but does not unwrap to it, since
// the original's message holds the secret (net/http, for one, quotes the
// URL it failed to reach).
type Error struct {
	// Msg is the message with the secrets blanked.
	Msg string
	// Err is the original error. Never print it.
	Err error
}

// Error returns the scrubbed message.
func (e *Error) Error() string { return e.Msg }

// Is reports whether the original error matches target.
func (e *Error) Is(target error) bool { return errors.Is(e.Err, target) }

// rawPassword returns the password of raw's userinfo as written.
func rawPassword(raw string) (string, bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", false
	}
	start, end, ok := userinfoPassword([]byte(raw), i+3)
	if !ok {
		return "", false
	}
	return raw[start:end], true
}

// userinfoPassword finds the password in the authority that starts at
// b[from] (just after "://"): the bytes between the first ':' and the last
// '@' of the authority.
func userinfoPassword(b []byte, from int) (start, end int, ok bool) {
	stop := from
	for stop < len(b) && !bytes.ContainsRune([]byte("/?#\"'` \t\r\n<>\\"), rune(b[stop])) {
		stop++
	}
	at := bytes.LastIndexByte(b[from:stop], '@')
	if at < 0 {
		return 0, 0, false
	}
	colon := bytes.IndexByte(b[from:from+at], ':')
	if colon < 0 {
		return 0, 0, false
	}
	start, end = from+colon+1, from+at
	return start, end, end > start
}

// scrubUserinfo blanks the password of every scheme://user:password@host
// in b. It returns b itself when there is none.
func scrubUserinfo(b []byte) []byte {
	w := blanker{src: b}
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("://"))
		if j < 0 {
			break
		}
		from := i + j + 3
		start, end, ok := userinfoPassword(b, from)
		if ok && string(b[start:end]) != Placeholder {
			w.put(start, end, placeholder)
		}
		i = from
	}
	return w.done()
}
