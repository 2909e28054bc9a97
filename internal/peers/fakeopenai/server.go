package fakeopenai

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// DefaultAPIKey is the bearer key a Server expects unless WithAPIKey says
// otherwise. It is a placeholder, not a credential.
const DefaultAPIKey = "sk-fakeopenai-test-key"

// Model is the model this double names as the producer of every chat
// completion it answers (the "model" member of a completion and of each
// stream chunk), whatever model the request asked for: the API names the
// model that really answered (e.g. "gpt-4o-mini-2024-07-18"), and what
// answers here is the double's script, not a model. A client that keeps
// the answer (voicetest.ChatResponse.Model, the llm cache) so records
// what produced it.
const Model = "fakeopenai-double"

// Provider is the provider name to record the double's answers under
// (llm.WithProvider), with Model as the model (llm.WithModel), so that a
// committed cache entry made with the double names the double, never a
// real model (TestCommittedLLMEntriesNameTheirProducer).
const Provider = "fakeopenai"

// SpeechRate is the sample rate of the PCM16 audio /v1/audio/speech
// returns, as OpenAI's "pcm" format: 24 kHz, mono, little-endian.
const SpeechRate = 24000

// maxBody bounds a request body, like the real API's upload limit (25 MB).
const maxBody = 25 << 20

// Request is one request the Server received, recorded before validation so
// that rejected requests can be inspected too.
type Request struct {
	// Method and Path are the HTTP method and URL path ("/v1/audio/speech").
	Method, Path string
	// Header is the request's header.
	Header http.Header
	// Body is the raw request body (JSON, or the multipart form).
	Body []byte
	// Status is the HTTP status the Server answered (0 while it has not).
	Status int
	// RemoteAddr is the client's address: requests over one kept-alive
	// connection have the same.
	RemoteAddr string
}

// Server is a loopback OpenAI-compatible test double. Build one with New;
// its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server
	key string
	ln  net.Listener

	mu          sync.Mutex
	requests    []Request
	chatQueue   []ChatReply
	chatHandler func(ChatRequest) (ChatReply, error)
	sttHandler  func(TranscriptionRequest) (string, error)
	spoken      []spokenAudio
	chatCount   int
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the Server accept only "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// WithListener makes the Server serve on ln instead of a loopback port:
// an in-memory listener (adaptertest.MemNet) for a test that runs in a
// testing/synctest bubble, whose clients then reach it through the
// network's HTTP client (llm.WithHTTPClient). The Server closes ln.
func WithListener(ln net.Listener) Option { return func(s *Server) { s.ln = ln } }

// New starts a Server on a loopback port and registers its shutdown with
// tb.Cleanup.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := Start(opts...)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a Server on a loopback port outside a test (for examples
// and benchmarks' helpers); the caller must Close it. Tests use New.
func Start(opts ...Option) *Server {
	s := &Server{key: DefaultAPIKey}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/audio/speech", s.serveSpeech)
	mux.HandleFunc("/v1/audio/transcriptions", s.serveTranscription)
	mux.HandleFunc("/v1/chat/completions", s.serveChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid URL (%s %s): the fakeopenai test double serves only /v1/audio/speech, /v1/audio/transcriptions and /v1/chat/completions", r.Method, r.URL.Path)})
	})
	if s.ln != nil {
		s.srv = &httptest.Server{Listener: s.ln, Config: &http.Server{Handler: s.record(mux)}}
		s.srv.Start()
	} else {
		s.srv = httptest.NewServer(s.record(mux))
	}
	return s
}

// Close shuts the Server down, waiting for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// BaseURL returns the API base URL, ending in "/v1/", for
// option.WithBaseURL or OPENAI_BASE_URL.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1/" }

// APIKey returns the bearer key the Server accepts.
func (s *Server) APIKey() string { return s.key }

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// RequestsTo returns the recorded requests whose path is path.
func (s *Server) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// QueueChat appends scripted replies that /v1/chat/completions answers in
// order, one per request, before falling back to the HandleChat handler.
func (s *Server) QueueChat(replies ...ChatReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQueue = append(s.chatQueue, replies...)
}

// HandleChat sets the function that answers chat completions once the
// queue is empty. An *APIError it returns is served as such; any other
// error is a 500 server_error.
func (s *Server) HandleChat(h func(ChatRequest) (ChatReply, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatHandler = h
}

// HandleTranscription sets the function that answers transcriptions. Without
// one, the Server answers the text of audio it synthesized itself and
// rejects other audio.
func (s *Server) HandleTranscription(h func(TranscriptionRequest) (string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sttHandler = h
}

// spokenAudio is audio the Server synthesized, kept so that a transcription
// of the same audio answers its text: the samples (found inside a WAV or
// raw upload) and the file as it was served (mp3, opus, …).
type spokenAudio struct {
	pcm, encoded []byte
	text         string
}

// maxSpoken bounds the syntheses a Server remembers; the oldest go first.
const maxSpoken = 256

// remember keeps a synthesis for later transcription.
func (s *Server) remember(sp spokenAudio) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.spoken) == maxSpoken {
		s.spoken = slices.Delete(s.spoken, 0, 1)
	}
	s.spoken = append(s.spoken, sp)
}

// sse writes server-sent events: "data: <json>" blocks, each flushed as
// it is written.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// event writes v as one data block.
func (e *sse) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.raw(b)
}

// raw writes data as one data block.
func (e *sse) raw(data []byte) error {
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", data); err != nil {
		return err
	}
	return e.rc.Flush()
}

// APIError is an error answer in OpenAI's shape. Handlers return it to make
// the Server answer with that status and body.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Message, Type, Param and Code fill the error object.
	Message, Type, Param, Code string
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("fakeopenai: %d %s: %s", e.Status, e.Type, e.Message)
}

// badRequest returns a 400 invalid_request_error about param.
func badRequest(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// serverError returns a 500 for a fault of the test's own script.
func serverError(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusInternalServerError, Type: "server_error",
		Message: "fakeopenai: " + fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, e *APIError) {
	body := map[string]any{"error": map[string]any{
		"message": e.Message,
		"type":    e.Type,
		"param":   nullable(e.Param),
		"code":    nullable(e.Code),
	}}
	writeJSON(w, e.Status, body)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakeopenai: encode answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status   int
	onStatus func(int)
}

// WriteHeader records the first status written.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.onStatus(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Write records an implicit 200 before the first body bytes.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// record reads the body (bounded), checks method and key, records the
// request and passes it on.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		// The request is recorded before it is answered, so a client that
		// has its answer always finds its request recorded; the status is
		// filled in as soon as the handler writes it.
		s.mu.Lock()
		i := len(s.requests)
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, RemoteAddr: r.RemoteAddr})
		s.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, onStatus: func(code int) {
			s.mu.Lock()
			s.requests[i].Status = code
			s.mu.Unlock()
		}}
		switch {
		case err != nil:
			writeError(sw, badRequest("", "could not read the request body: %v", err))
			return
		case len(body) > maxBody:
			writeError(sw, &APIError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
				Message: fmt.Sprintf("request body is larger than %d bytes", maxBody)})
			return
		}
		if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || got != s.key {
			writeError(sw, &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
				Message: "Incorrect API key provided. The fakeopenai test double expects \"Authorization: Bearer " + s.key + "\"."})
			return
		}
		if r.Method != http.MethodPost {
			writeError(sw, &APIError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: fmt.Sprintf("Method %s is not allowed on %s; use POST", r.Method, r.URL.Path)})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(sw, r)
	})
}

// decodeJSONObject parses body as a JSON object and rejects fields not in
// allowed, as the real API does.
func decodeJSONObject(r *http.Request, allowed ...string) (map[string]json.RawMessage, *APIError) {
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") {
		return nil, badRequest("", "Content-Type must be application/json, got %q", ct)
	}
	var fields map[string]json.RawMessage
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, badRequest("", "We could not parse the JSON body of your request: expected a JSON object (%v)", err)
	}
	for name := range fields {
		if !slices.Contains(allowed, name) {
			return nil, badRequest(name, "Unrecognized request argument supplied: %s", name)
		}
	}
	return fields, nil
}

// field decodes fields[name] into v, reporting a type error as the API does.
// It returns false when the field is absent or null.
func field(fields map[string]json.RawMessage, name string, v any, want string) (bool, *APIError) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, badRequest(name, "Invalid type for '%s': expected %s, but got %s.", name, want, jsonKind(raw))
	}
	return true, nil
}

func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// digest returns a hex SHA-256 of b.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// errorFrom turns a handler error into an APIError.
func errorFrom(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return serverError("handler failed: %v", err)
}
