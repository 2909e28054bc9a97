// Package realtimepeer is a test double of an OpenAI Realtime server: the
// WebSocket endpoint behind wss://api.openai.com/v1/realtime. It lets the
// Realtime adapter be tested on loopback against a peer that behaves as the
// real service does, with the message shapes of prior-art §6.3, the API
// reference (platform.openai.com/docs/api-reference/realtime-server-events)
// and the openai-go v3.95.0 realtime types. OpenAI's Agents SDK for
// Realtime, @openai/agents-realtime 0.20.0, drives it in
// internal/peers/sdkcheck (TestRealtimeDoubleWithAgentsSDK), which checks
// every event it sends against the SDK's own schemas.
//
// Like the real service it checks the handshake ("Authorization: Bearer"
// when Config.APIKey is set, a "model" query parameter), speaks the GA
// protocol or, when the client sends "OpenAI-Beta: realtime=v1", the beta
// one (beta event names, flat session shape); it sends session.created,
// validates session.update strictly (unknown parameters, formats, turn
// detection and tools are rejected with an "error" event naming the
// parameter) and answers session.updated with the whole session, every
// update merged in. It keeps an input audio buffer
// (input_audio_buffer.append/commit/clear; a commit of less than 100 ms is
// the real server's input_audio_buffer_commit_empty error), detects speech
// by energy under server turn detection (speech_started/stopped, commit,
// response, and barge-in that cancels the response in progress), runs
// responses on response.create (one at a time:
// conversation_already_has_active_response), cancels them on
// response.cancel (response_cancel_not_active when none), truncates items
// (conversation.item.truncate beyond the audio sent is an error, and the
// item's transcript is deleted, as the reference says), and takes
// function_call_output items for the calls it made.
//
// It keeps the conversation as the server does: every item, in order, with
// its role and content (user audio items gain their transcript), so that
// conversation.item.retrieve answers conversation.item.retrieved,
// conversation.item.delete answers conversation.item.deleted, created items
// can be placed with previous_item_id ("root" or an item), and every
// conversation.item.added (beta: .created) and, under GA,
// conversation.item.done carries the full item and the id of the item
// before it. Items always carry role and content, also a cancelled
// response's incomplete item in response.output_item.done. The
// response.content_part events name the part's kind "audio", while the
// item's content part is "output_audio" (beta: "audio"), as the reference,
// openai-go (ResponseContentPartAddedEventPart) and the SDK's schema have
// them.
//
// What it says is scripted (Config.Greeting, Config.Turns): each reply is
// streamed as word transcript deltas and audio deltas of
// fixtures.WordTones — one tone per word, 400 ms a word, at 24 kHz — in
// 100 ms deltas. It is a test double, not a model. It can also misbehave
// (Fault, Send) and hang up (HangUpAfter).
package realtimepeer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Rate is the sample rate of the peer's audio (Realtime's audio/pcm).
const Rate = 24000

// chunk is the audio sent per delta.
const chunk = 100 * time.Millisecond

// ToolCall is a function call a scripted turn makes.
type ToolCall struct {
	Name      string
	Arguments string // JSON text, sent as is
}

// Turn scripts one user turn and the agent's answer.
type Turn struct {
	// UserTranscript is what the server "hears": sent as the input
	// transcription when the session asks for one. Empty means the
	// committed audio decoded by fixtures.FakeSTT (user speech made with
	// fixtures.FakeTTS), or "(inaudible)" when it is not fake speech.
	UserTranscript string
	// ToolCall, when set, makes the first response to this turn call the
	// function; the client's function_call_output and response.create
	// then get Reply.
	ToolCall *ToolCall
	// Reply is what the agent says; "{heard}" in it is replaced by what
	// the server heard (see UserTranscript), so that a reply can prove the
	// user's audio arrived intact.
	Reply string
}

// Fault is a way the server misbehaves right after session.updated.
type Fault int

// The faults.
const (
	// NoFault: the server behaves.
	NoFault Fault = iota
	// Stall: stops reading and writing (so answers no ping) until the
	// test ends.
	Stall
	// Abort: drops the connection without a closing handshake.
	Abort
	// OddAudio: every audio delta carries one byte too many.
	OddAudio
	// Mute: takes everything, answers nothing after session.updated.
	Mute
)

// Config sets the server's behaviour.
type Config struct {
	// APIKey, when set, is the bearer token the handshake must carry;
	// anything else gets HTTP 401 as from OpenAI.
	APIKey string
	// Greeting is what the agent says in answer to a response.create that
	// comes before any user input.
	Greeting string
	// Turns are the scripted user turns, in order. Turns past the script
	// are answered "Okay."
	Turns []Turn
	// ReplyDelay is how long a response "thinks" before its first delta.
	ReplyDelay time.Duration
	// ChunkDelay is the pause between 100 ms audio deltas (0: as fast as
	// the socket takes them, as the real service streams).
	ChunkDelay time.Duration
	// HangUpAfter, when positive, closes the WebSocket normally after the
	// HangUpAfter-th completed spoken response.
	HangUpAfter int
	// Threshold is the RMS above which a 20 ms frame is speech under
	// server turn detection (default 500).
	Threshold float64
	// Fault is a misbehaviour to show after session.updated.
	Fault Fault
	// Send holds text frames sent verbatim after session.updated.
	Send []string
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Truncate is a conversation.item.truncate the server took.
type Truncate struct {
	ItemID     string
	AudioEndMs int64
}

// ToolOutput is a function_call_output item the client sent.
type ToolOutput struct {
	CallID, Output string
}

// Session is what the server saw of one connection.
type Session struct {
	// Model is the "model" query parameter, Beta whether the client asked
	// for the beta protocol.
	Model string
	Beta  bool
	// Update is the last session.update's session object, as sent.
	Update json.RawMessage
	// Errors are the error events the server sent (protocol violations
	// and scripted ones are listed alike), as "code: message".
	Errors []string
	// Audio is every input sample appended (24 kHz).
	Audio []int16
	// Commits holds, per committed user turn, its length in samples.
	Commits []int
	// Texts are the user text messages.
	Texts []string
	// ResponseCreates counts response.create events.
	ResponseCreates int
	// Cancels counts the response.cancel events that cancelled a response.
	Cancels int
	// Truncates are the truncations the server accepted.
	Truncates []Truncate
	// ToolOutputs are the function outputs the client sent.
	ToolOutputs []ToolOutput
	// Deleted are the ids of the items the client deleted.
	Deleted []string
	// Completed and Cancelled count responses by outcome.
	Completed, Cancelled int
	// Ended reports that the connection is over.
	Ended bool
}

// Server is a running Realtime double.
type Server struct {
	// URL is the endpoint, ws://127.0.0.1:port/v1/realtime.
	URL string

	cfg      Config
	srv      *peerkit.Server
	sessions *peerkit.Log[Session]
}

// New starts a server on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.Threshold <= 0 {
		cfg.Threshold = 500
	}
	s := &Server{cfg: cfg, sessions: peerkit.NewLog(cloneSession)}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/realtime", s.serve)
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("/v1/realtime")
	s.srv.Serve(mux)
	return s
}

// Close stops the server and ends its sessions.
func (s *Server) Close() {
	s.srv.Close()
}

// Sessions returns a copy of what the server saw of each connection.
func (s *Server) Sessions() []Session { return s.sessions.Snapshot() }

// cloneSession copies a session, sharing no slices with it.
func cloneSession(ss *Session) Session {
	out := *ss
	out.Errors = slices.Clone(ss.Errors)
	out.Audio = slices.Clone(ss.Audio)
	out.Commits = slices.Clone(ss.Commits)
	out.Texts = slices.Clone(ss.Texts)
	out.Truncates = slices.Clone(ss.Truncates)
	out.ToolOutputs = slices.Clone(ss.ToolOutputs)
	out.Deleted = slices.Clone(ss.Deleted)
	return out
}

// Wait waits until session i satisfies cond, or ctx ends, and returns it.
func (s *Server) Wait(ctx context.Context, i int, cond func(Session) bool) (Session, error) {
	ss, err := s.sessions.Wait(ctx, i, cond)
	if err != nil {
		return ss, fmt.Errorf("realtimepeer: session %d never reached the expected state (errors so far %q): %w", i, ss.Errors, err)
	}
	return ss, nil
}

func (s *Server) update(ss *Session, f func(*Session)) { s.sessions.Update(ss, f) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		return
	}
	model := r.URL.Query().Get("model")
	if model == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"Missing required parameter: 'model'.","type":"invalid_request_error","param":"model","code":"missing_required_parameter"}}`)
		return
	}
	beta := r.Header.Get("OpenAI-Beta") == "realtime=v1"
	ws, err := peerkit.Accept(w, r, 16<<20)
	if err != nil {
		return
	}
	sess := s.sessions.Add(func(int) *Session { return &Session{Model: model, Beta: beta} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	p := &peer{s: s, ws: ws, sess: sess, ctx: ctx, beta: beta, model: model, calls: map[string]bool{}, audioSent: map[string]int{}, conv: map[string]map[string]any{}}
	p.run()
	s.update(sess, func(ss *Session) { ss.Ended = true })
	ws.CloseNow()
}

// peer is one session in progress. Only its run goroutine writes.
type peer struct {
	s     *Server
	ws    *websocket.Conn
	sess  *Session
	ctx   context.Context
	beta  bool
	model string

	ids        int
	configured bool
	td         *turnDetection
	transcribe bool

	buf       []int16 // input audio buffer
	userTurns int     // committed user turns
	greeted   bool
	script    []planned // responses still to give
	calls     map[string]bool
	spoken    int            // completed spoken responses
	audioSent map[string]int // assistant audio items → samples sent
	// The conversation: every item as the server keeps it (what
	// conversation.item.retrieve returns), and their order.
	conv        map[string]map[string]any
	order       []string
	pendingUser string         // the id of the user item speech in progress will commit
	session     map[string]any // the session's settings, merged from every session.update
	resp        *response
	vadSpeech   bool
	vadVoiced   int
	vadSilent   int
	vadStartMs  int
	vadPos      int // buffer samples the detector has seen
	faulted     bool
	hungUp      bool
}

// planned is one response the script gives next.
type planned struct {
	reply string
	call  *ToolCall
}

type turnDetection struct {
	Type              string   `json:"type"`
	Threshold         *float64 `json:"threshold"`
	PrefixPaddingMs   *int     `json:"prefix_padding_ms"`
	SilenceDurationMs *int     `json:"silence_duration_ms"`
	Eagerness         string   `json:"eagerness"`
	CreateResponse    *bool    `json:"create_response"`
	InterruptResponse *bool    `json:"interrupt_response"`
	IdleTimeoutMs     *int     `json:"idle_timeout_ms"`
}

// response is a response being streamed.
type response struct {
	id, item string
	call     *ToolCall
	callID   string
	words    []string
	audio    []int16
	sent     int // samples sent
	word     int // words whose transcript delta was sent
	due      time.Time
	started  bool
}

func (p *peer) id(prefix string) string {
	p.ids++
	return fmt.Sprintf("%s_%06d", prefix, p.ids)
}

func (p *peer) name(ga, beta string) string {
	if p.beta {
		return beta
	}
	return ga
}

func (p *peer) write(v any) error { return peerkit.WriteJSON(p.ctx, p.ws, v) }

// emit sends a server event of type typ with fields.
func (p *peer) emit(typ string, fields map[string]any) error {
	m := map[string]any{"type": typ, "event_id": p.id("event")}
	for k, v := range fields {
		m[k] = v
	}
	return p.write(m)
}

// fail sends an error event, as the real server does for a bad client
// event, and records it.
func (p *peer) fail(code, msg, param, eventID string) error {
	p.s.update(p.sess, func(ss *Session) { ss.Errors = append(ss.Errors, code+": "+msg) })
	e := map[string]any{"type": "invalid_request_error", "code": code, "message": msg, "param": nil, "event_id": nil}
	if param != "" {
		e["param"] = param
	}
	if eventID != "" {
		e["event_id"] = eventID
	}
	return p.emit("error", map[string]any{"error": e})
}

func (p *peer) run() {
	sessionObj := map[string]any{"id": p.id("sess"), "object": "realtime.session", "model": p.model}
	if !p.beta {
		sessionObj["type"] = "realtime"
	}
	if err := p.emit("session.created", map[string]any{"session": sessionObj}); err != nil {
		return
	}
	type msg struct {
		data []byte
		err  error
	}
	msgs := make(chan msg, 4096)
	readCtx, stopRead := context.WithCancel(p.ctx)
	defer stopRead()
	go func() {
		for {
			_, data, err := p.ws.Read(readCtx)
			select {
			case msgs <- msg{data, err}:
			case <-readCtx.Done():
				return
			}
			if err != nil {
				return
			}
			if p.s.cfg.Fault == Stall && strings.Contains(string(data), `"session.update"`) {
				// Stop reading, so that pings go unanswered too.
				<-readCtx.Done()
				return
			}
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var tick <-chan time.Time
		if p.resp != nil {
			wait := time.Until(p.resp.due)
			if wait <= 0 {
				if err := p.step(); err != nil {
					return
				}
				if p.closed() {
					return
				}
				// Let the client's events in between deltas.
				select {
				case m := <-msgs:
					if m.err != nil || p.handle(m.data) != nil || p.closed() {
						return
					}
				default:
				}
				continue
			}
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-p.ctx.Done():
			return
		case <-tick:
		case m := <-msgs:
			if m.err != nil {
				return
			}
			if p.handle(m.data) != nil || p.closed() {
				return
			}
		}
	}
}

// closed reports that the peer hung up or faulted its connection away.
func (p *peer) closed() bool { return p.ctx.Err() != nil || p.hungUp }

// clientEvent is any client event.
type clientEvent struct {
	Type       string          `json:"type"`
	EventID    string          `json:"event_id"`
	Session    json.RawMessage `json:"session"`
	Audio      *string         `json:"audio"`
	Item       json.RawMessage `json:"item"`
	ResponseID string          `json:"response_id"`
	ItemID     string          `json:"item_id"`
	AudioEndMs *int64          `json:"audio_end_ms"`
	Response   json.RawMessage `json:"response"`
	// PreviousItemID places a created item: "root" first, an id after
	// that item; absent appends.
	PreviousItemID *string `json:"previous_item_id"`
}

// handle reacts to one client event; an error ends the session.
func (p *peer) handle(data []byte) error {
	var ev clientEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return p.fail("invalid_json", "We could not parse the JSON body of your request. ("+err.Error()+")", "", "")
	}
	if !p.configured && ev.Type != "session.update" {
		// The real server accepts events before session.update, but a
		// voicetest client always configures first.
		p.s.update(p.sess, func(ss *Session) { ss.Errors = append(ss.Errors, "order: "+ev.Type+" before session.update") })
	}
	switch ev.Type {
	case "session.update":
		return p.sessionUpdate(ev)
	case "input_audio_buffer.append":
		return p.appendAudio(ev)
	case "input_audio_buffer.commit":
		if p.td != nil {
			// Allowed by the real server, but voicetest must not commit
			// under server VAD.
			p.s.update(p.sess, func(ss *Session) { ss.Errors = append(ss.Errors, "client: commit under server turn detection") })
		}
		return p.commit(ev.EventID)
	case "input_audio_buffer.clear":
		p.buf = p.buf[:0]
		return p.emit("input_audio_buffer.cleared", nil)
	case "conversation.item.create":
		return p.itemCreate(ev)
	case "conversation.item.truncate":
		return p.truncate(ev)
	case "conversation.item.retrieve":
		return p.retrieve(ev)
	case "conversation.item.delete":
		return p.deleteItem(ev)
	case "response.create":
		p.s.update(p.sess, func(ss *Session) { ss.ResponseCreates++ })
		if p.resp != nil {
			return p.fail("conversation_already_has_active_response", "Conversation already has an active response in progress: "+p.resp.id+". Wait until the response is finished before creating a new one.", "", ev.EventID)
		}
		return p.startResponse()
	case "response.cancel":
		if p.resp == nil || (ev.ResponseID != "" && ev.ResponseID != p.resp.id) {
			return p.fail("response_cancel_not_active", "Cancellation failed: no active response found", "", ev.EventID)
		}
		p.s.update(p.sess, func(ss *Session) { ss.Cancels++ })
		return p.cancel("client_cancelled")
	case "":
		return p.fail("missing_required_parameter", "Missing required parameter: 'type'.", "type", ev.EventID)
	}
	return p.fail("invalid_value", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear', 'conversation.item.create', 'conversation.item.truncate', 'conversation.item.delete', 'conversation.item.retrieve', 'response.create', and 'response.cancel'.", ev.Type), "type", ev.EventID)
}

// allowedKeys returns the parameters a session object (or one of its
// parts) may have, per protocol.
func allowedKeys(part string) []string {
	switch part {
	case "ga":
		return []string{"type", "model", "instructions", "output_modalities", "audio", "tools", "tool_choice", "temperature", "max_output_tokens", "tracing", "truncation", "prompt", "include"}
	case "ga.audio":
		return []string{"input", "output"}
	case "ga.input":
		return []string{"format", "turn_detection", "transcription", "noise_reduction"}
	case "ga.output":
		return []string{"format", "voice", "speed"}
	case "beta":
		return []string{"modalities", "instructions", "voice", "input_audio_format", "output_audio_format", "input_audio_transcription", "turn_detection", "tools", "tool_choice", "temperature", "max_response_output_tokens", "input_audio_noise_reduction", "speed", "tracing"}
	}
	return nil
}

// unknownKey returns the first key of obj not in allowed, prefixed.
func unknownKey(obj map[string]json.RawMessage, allowed []string, prefix string) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return prefix + k
		}
	}
	return ""
}

func (p *peer) sessionUpdate(ev clientEvent) error {
	bad := func(code, msg, param string) error { return p.fail(code, msg, param, ev.EventID) }
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(ev.Session, &obj); err != nil || obj == nil {
		return bad("invalid_type", "Invalid type for 'session': expected an object.", "session")
	}
	var td json.RawMessage
	var tr json.RawMessage
	if p.beta {
		if k := unknownKey(obj, allowedKeys("beta"), "session."); k != "" {
			return bad("unknown_parameter", "Unknown parameter: '"+k+"'.", k)
		}
		for _, f := range []string{"input_audio_format", "output_audio_format"} {
			if v, ok := obj[f]; ok && string(v) != `"pcm16"` {
				return bad("invalid_value", fmt.Sprintf("Invalid value for 'session.%s': this test double takes only 'pcm16', got %s.", f, v), "session."+f)
			}
		}
		td, tr = obj["turn_detection"], obj["input_audio_transcription"]
	} else {
		if k := unknownKey(obj, allowedKeys("ga"), "session."); k != "" {
			return bad("unknown_parameter", "Unknown parameter: '"+k+"'.", k)
		}
		if string(obj["type"]) != `"realtime"` {
			return bad("missing_required_parameter", "Missing required parameter: 'session.type'.", "session.type")
		}
		var audio map[string]json.RawMessage
		if a, ok := obj["audio"]; ok {
			if err := json.Unmarshal(a, &audio); err != nil {
				return bad("invalid_type", "Invalid type for 'session.audio': expected an object.", "session.audio")
			}
		}
		if k := unknownKey(audio, allowedKeys("ga.audio"), "session.audio."); k != "" {
			return bad("unknown_parameter", "Unknown parameter: '"+k+"'.", k)
		}
		var in, out map[string]json.RawMessage
		json.Unmarshal(audio["input"], &in)
		json.Unmarshal(audio["output"], &out)
		if k := unknownKey(in, allowedKeys("ga.input"), "session.audio.input."); k != "" {
			return bad("unknown_parameter", "Unknown parameter: '"+k+"'.", k)
		}
		if k := unknownKey(out, allowedKeys("ga.output"), "session.audio.output."); k != "" {
			return bad("unknown_parameter", "Unknown parameter: '"+k+"'.", k)
		}
		for name, m := range map[string]map[string]json.RawMessage{"input": in, "output": out} {
			var f struct {
				Type string `json:"type"`
				Rate int    `json:"rate"`
			}
			if v, ok := m["format"]; ok {
				if json.Unmarshal(v, &f) != nil || f.Type != "audio/pcm" || f.Rate != Rate {
					return bad("invalid_value", fmt.Sprintf("Invalid value for 'session.audio.%s.format': this test double takes only {\"type\":\"audio/pcm\",\"rate\":24000}, got %s.", name, v), "session.audio."+name+".format")
				}
			}
		}
		td, tr = in["turn_detection"], in["transcription"]
	}
	if len(td) > 0 {
		if string(td) == "null" {
			p.td = nil
		} else {
			var d turnDetection
			if err := json.Unmarshal(td, &d); err != nil || (d.Type != "server_vad" && d.Type != "semantic_vad") {
				return bad("invalid_value", fmt.Sprintf("Invalid value for turn_detection: %s; expected null or an object of type 'server_vad' or 'semantic_vad'.", td), "turn_detection")
			}
			p.td = &d
		}
	}
	if len(tr) > 0 {
		var t struct {
			Model string `json:"model"`
		}
		if string(tr) != "null" && (json.Unmarshal(tr, &t) != nil || t.Model == "") {
			return bad("missing_required_parameter", "Missing required parameter: transcription 'model'.", "transcription.model")
		}
		p.transcribe = string(tr) != "null"
	}
	if tools, ok := obj["tools"]; ok {
		var ts []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(tools, &ts); err != nil {
			return bad("invalid_type", "Invalid type for 'session.tools': expected an array of tools.", "session.tools")
		}
		for i, t := range ts {
			if t.Type != "function" || t.Name == "" {
				return bad("invalid_value", fmt.Sprintf("Invalid tool at session.tools[%d]: type must be 'function' and name is required.", i), fmt.Sprintf("session.tools[%d]", i))
			}
		}
	}
	p.configured = true
	p.s.update(p.sess, func(ss *Session) { ss.Update = append(json.RawMessage(nil), ev.Session...) })
	// session.update changes only the fields it names, and
	// session.updated carries the whole session as it now is: a client
	// (the Agents SDK does) reads its settings, e.g. whether the server
	// cancels a response on barge-in, from there.
	var upd map[string]any
	json.Unmarshal(ev.Session, &upd)
	p.session = mergeJSON(p.session, upd)
	p.session["id"], p.session["object"] = "sess_1", "realtime.session"
	if err := p.emit("session.updated", map[string]any{"session": p.session}); err != nil {
		return err
	}
	return p.fault()
}

// mergeJSON merges the JSON object upd into base, recursively: objects
// merge, other values replace. It returns base (a new map when base is
// nil).
func mergeJSON(base, upd map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range upd {
		if sub, ok := v.(map[string]any); ok {
			if old, ok := base[k].(map[string]any); ok {
				base[k] = mergeJSON(old, sub)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// fault shows the configured misbehaviour, once.
func (p *peer) fault() error {
	if p.faulted {
		return nil
	}
	p.faulted = true
	for _, f := range p.s.cfg.Send {
		if err := p.ws.Write(p.ctx, websocket.MessageText, []byte(f)); err != nil {
			return err
		}
	}
	switch p.s.cfg.Fault {
	case Stall:
		<-p.ctx.Done()
		return p.ctx.Err()
	case Abort:
		p.ws.CloseNow()
		return fmt.Errorf("aborted")
	}
	return nil
}

func (p *peer) appendAudio(ev clientEvent) error {
	if ev.Audio == nil {
		return p.fail("missing_required_parameter", "Missing required parameter: 'audio'.", "audio", ev.EventID)
	}
	b, err := base64.StdEncoding.DecodeString(*ev.Audio)
	if err != nil {
		return p.fail("invalid_value", "Invalid 'audio'. Expected base64-encoded audio bytes.", "audio", ev.EventID)
	}
	samples, err := pcm.DecodePCM16(nil, b)
	if err != nil {
		return p.fail("invalid_value", "Invalid 'audio': "+err.Error(), "audio", ev.EventID)
	}
	p.buf = append(p.buf, samples...)
	p.s.update(p.sess, func(ss *Session) { ss.Audio = append(ss.Audio, samples...) })
	if p.td != nil {
		return p.vad(samples)
	}
	return nil
}

// vad runs energy turn detection over newly appended audio, in 20 ms
// frames of the buffer.
func (p *peer) vad(samples []int16) error {
	const frame = Rate / 50
	silenceMs := 500
	if p.td.SilenceDurationMs != nil {
		silenceMs = *p.td.SilenceDurationMs
	}
	if p.td.Type == "semantic_vad" {
		silenceMs = 800
	}
	start := len(p.buf) - len(samples)
	start -= start % frame
	for off := start; off+frame <= len(p.buf); off += frame {
		if off < p.vadPos {
			continue
		}
		p.vadPos = off + frame
		var sum float64
		for _, v := range p.buf[off : off+frame] {
			sum += float64(v) * float64(v)
		}
		voiced := math.Sqrt(sum/frame) > p.s.cfg.Threshold
		switch {
		case voiced:
			p.vadVoiced++
			p.vadSilent = 0
			if !p.vadSpeech && p.vadVoiced >= 3 {
				p.vadSpeech = true
				p.vadStartMs = (off - 2*frame) * 1000 / Rate
				if err := p.emit("input_audio_buffer.speech_started", map[string]any{"audio_start_ms": p.vadStartMs, "item_id": p.userItemID()}); err != nil {
					return err
				}
				if p.resp != nil && (p.td.InterruptResponse == nil || *p.td.InterruptResponse) {
					if err := p.cancel("turn_detected"); err != nil {
						return err
					}
				}
			}
		default:
			if !p.vadSpeech {
				p.vadVoiced = 0
				continue
			}
			p.vadSilent++
			if p.vadSilent*20 >= silenceMs {
				p.vadSpeech, p.vadVoiced, p.vadSilent = false, 0, 0
				if err := p.emit("input_audio_buffer.speech_stopped", map[string]any{"audio_end_ms": (off + frame) * 1000 / Rate, "item_id": p.userItemID()}); err != nil {
					return err
				}
				if err := p.commit(""); err != nil {
					return err
				}
				if p.td.CreateResponse == nil || *p.td.CreateResponse {
					if p.resp == nil {
						if err := p.startResponse(); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// commit turns the input buffer into a user item.
func (p *peer) commit(eventID string) error {
	if len(p.buf) < Rate/10 {
		return p.fail("input_audio_buffer_commit_empty", fmt.Sprintf("Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has %.2fms of audio.", float64(len(p.buf))*1000/Rate), "", eventID)
	}
	n := len(p.buf)
	heard := hear(p.buf, Rate)
	p.buf = p.buf[:0]
	p.vadPos = 0
	item := p.userItemID()
	p.pendingUser = ""
	turn := p.userTurns
	p.userTurns++
	p.s.update(p.sess, func(ss *Session) { ss.Commits = append(ss.Commits, n) })
	part := map[string]any{"type": "input_audio", "transcript": nil}
	userItem := map[string]any{"id": item, "object": "realtime.item", "type": "message", "role": "user", "status": "completed",
		"content": []any{part}}
	prev := p.store(userItem, "")
	if err := p.emit("input_audio_buffer.committed", map[string]any{"item_id": item, "previous_item_id": prev}); err != nil {
		return err
	}
	if err := p.announce(userItem, prev); err != nil {
		return err
	}
	p.plan(turn, heard)
	if p.transcribe {
		text := p.turn(turn).UserTranscript
		if text == "" {
			text = heard
		}
		for _, w := range strings.Fields(text) {
			if err := p.emit("conversation.item.input_audio_transcription.delta", map[string]any{"item_id": item, "content_index": 0, "delta": w + " "}); err != nil {
				return err
			}
		}
		part["transcript"] = text
		return p.emit("conversation.item.input_audio_transcription.completed", map[string]any{"item_id": item, "content_index": 0, "transcript": text,
			"usage": map[string]any{"type": "duration", "seconds": float64(n) / Rate}})
	}
	return nil
}

// userItemID returns the id of the user item that the speech in progress
// (or the next commit) creates: speech_started and speech_stopped already
// name it, as the real server's do.
func (p *peer) userItemID() string {
	if p.pendingUser == "" {
		p.pendingUser = p.id("item")
	}
	return p.pendingUser
}

// store adds item to the conversation after the item with id after (""
// appends, "root" puts it first) and returns the id of the item now
// before it, or nil when it is first: the previous_item_id the server
// events carry.
func (p *peer) store(item map[string]any, after string) any {
	id := item["id"].(string)
	p.conv[id] = item
	i := len(p.order)
	switch after {
	case "":
	case "root":
		i = 0
	default:
		i = slices.Index(p.order, after) + 1
	}
	p.order = slices.Insert(p.order, i, id)
	if i == 0 {
		return nil
	}
	return p.order[i-1]
}

// announce tells the client that item joined the conversation after prev:
// conversation.item.added (beta: conversation.item.created) and, for a
// complete item under GA, conversation.item.done.
func (p *peer) announce(item map[string]any, prev any) error {
	if err := p.emit(p.name("conversation.item.added", "conversation.item.created"), map[string]any{"item": item, "previous_item_id": prev}); err != nil {
		return err
	}
	if p.beta || item["status"] != "completed" {
		return nil
	}
	return p.itemDone(item)
}

// itemDone sends conversation.item.done (GA only) for a finished item.
func (p *peer) itemDone(item map[string]any) error {
	if p.beta {
		return nil
	}
	i := slices.Index(p.order, item["id"].(string))
	var prev any
	if i > 0 {
		prev = p.order[i-1]
	}
	return p.emit("conversation.item.done", map[string]any{"item": item, "previous_item_id": prev})
}

// turn returns scripted turn i.
func (p *peer) turn(i int) Turn {
	if i < len(p.s.cfg.Turns) {
		return p.s.cfg.Turns[i]
	}
	return Turn{Reply: "Okay."}
}

// plan queues the responses to user turn i, in which the server heard
// heard.
func (p *peer) plan(i int, heard string) {
	t := p.turn(i)
	if t.UserTranscript != "" {
		heard = t.UserTranscript
	}
	p.script = p.script[:0]
	if t.ToolCall != nil {
		p.script = append(p.script, planned{call: t.ToolCall})
	}
	p.script = append(p.script, planned{reply: strings.ReplaceAll(t.Reply, "{heard}", heard)})
}

// hear decodes user audio made by fixtures.FakeTTS, the double's stand-in
// for speech recognition.
func hear(samples []int16, rate int) string {
	tr, err := fixtures.FakeSTT().Transcribe(context.Background(), voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: rate, Samples: samples}})
	if err != nil || tr.Text == "" {
		return "(inaudible)"
	}
	return tr.Text
}

func (p *peer) itemCreate(ev clientEvent) error {
	var it struct {
		ID        string  `json:"id"`
		Type      string  `json:"type"`
		Role      string  `json:"role"`
		CallID    string  `json:"call_id"`
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
		Output    *string `json:"output"`
		Content   []struct {
			Type       string  `json:"type"`
			Text       *string `json:"text"`
			Audio      *string `json:"audio"`
			Transcript *string `json:"transcript"`
		} `json:"content"`
	}
	if err := json.Unmarshal(ev.Item, &it); err != nil {
		return p.fail("invalid_type", "Invalid type for 'item': expected an object.", "item", ev.EventID)
	}
	after := ""
	if ev.PreviousItemID != nil {
		after = *ev.PreviousItemID
		if _, ok := p.conv[after]; !ok && after != "root" {
			return p.fail("invalid_value", fmt.Sprintf("Invalid 'previous_item_id': no item with id '%s' in the conversation.", after), "previous_item_id", ev.EventID)
		}
	}
	id := it.ID
	if id == "" {
		id = p.id("item")
	} else if _, dup := p.conv[id]; dup {
		return p.fail("invalid_value", fmt.Sprintf("Invalid 'item.id': an item with id '%s' already exists.", id), "item.id", ev.EventID)
	}
	item := map[string]any{"id": id, "object": "realtime.item", "type": it.Type, "status": "completed"}
	userText := ""
	switch it.Type {
	case "function_call_output":
		if !p.calls[it.CallID] {
			return p.fail("invalid_value", fmt.Sprintf("Invalid 'item.call_id': no function call with id '%s' in the conversation.", it.CallID), "item.call_id", ev.EventID)
		}
		if it.Output == nil {
			return p.fail("missing_required_parameter", "Missing required parameter: 'item.output'.", "item.output", ev.EventID)
		}
		out := *it.Output
		item["call_id"], item["output"] = it.CallID, out
		p.s.update(p.sess, func(ss *Session) { ss.ToolOutputs = append(ss.ToolOutputs, ToolOutput{CallID: it.CallID, Output: out}) })
	case "function_call":
		if it.Name == "" || it.CallID == "" || it.Arguments == nil {
			return p.fail("missing_required_parameter", "Missing required parameter: a function_call item needs 'name', 'call_id' and 'arguments'.", "item", ev.EventID)
		}
		p.calls[it.CallID] = true
		item["name"], item["call_id"], item["arguments"] = it.Name, it.CallID, *it.Arguments
	case "message":
		// The part types each role may hold (GA names; the beta's
		// assistant parts are "text" and "audio").
		allowed := map[string][]string{
			"user":      {"input_text", "input_audio"},
			"system":    {"input_text"},
			"assistant": {p.name("output_text", "text"), p.name("output_audio", "audio")},
		}[it.Role]
		if allowed == nil {
			return p.fail("invalid_value", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'user', 'assistant', and 'system'.", it.Role), "item.role", ev.EventID)
		}
		if len(it.Content) == 0 {
			return p.fail("missing_required_parameter", "Missing required parameter: 'item.content'.", "item.content", ev.EventID)
		}
		var content []any
		var texts []string
		for i, c := range it.Content {
			if !slices.Contains(allowed, c.Type) {
				return p.fail("invalid_value", fmt.Sprintf("Invalid value: '%s' for a %s message's content part; supported: %s.", c.Type, it.Role, strings.Join(allowed, ", ")),
					fmt.Sprintf("item.content[%d].type", i), ev.EventID)
			}
			part := map[string]any{"type": c.Type}
			switch {
			case c.Text != nil:
				part["text"] = *c.Text
				texts = append(texts, *c.Text)
			case c.Audio != nil || c.Transcript != nil:
				if c.Audio != nil {
					part["audio"] = *c.Audio
				}
				part["transcript"] = c.Transcript
			default:
				return p.fail("missing_required_parameter", fmt.Sprintf("Missing required parameter: 'item.content[%d].text'.", i), fmt.Sprintf("item.content[%d].text", i), ev.EventID)
			}
			content = append(content, part)
		}
		item["role"], item["content"] = it.Role, content
		if it.Role == "user" && len(texts) > 0 {
			userText = strings.Join(texts, " ")
		}
	default:
		return p.fail("invalid_value", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'function_call', and 'function_call_output'.", it.Type), "item.type", ev.EventID)
	}
	if userText != "" {
		p.s.update(p.sess, func(ss *Session) { ss.Texts = append(ss.Texts, userText) })
		p.plan(p.userTurns, userText)
		p.userTurns++
	}
	return p.announce(item, p.store(item, after))
}

// retrieve answers conversation.item.retrieve with the item as the server
// keeps it.
func (p *peer) retrieve(ev clientEvent) error {
	item, ok := p.conv[ev.ItemID]
	if !ok {
		return p.fail("item_retrieve_invalid_item_id", "Item with item_id not found: "+ev.ItemID, "item_id", ev.EventID)
	}
	return p.emit("conversation.item.retrieved", map[string]any{"item": item})
}

// deleteItem removes an item from the conversation.
func (p *peer) deleteItem(ev clientEvent) error {
	if _, ok := p.conv[ev.ItemID]; !ok {
		return p.fail("item_delete_invalid_item_id", "Item with item_id not found: "+ev.ItemID, "item_id", ev.EventID)
	}
	delete(p.conv, ev.ItemID)
	p.order = slices.DeleteFunc(p.order, func(id string) bool { return id == ev.ItemID })
	p.s.update(p.sess, func(ss *Session) { ss.Deleted = append(ss.Deleted, ev.ItemID) })
	return p.emit("conversation.item.deleted", map[string]any{"item_id": ev.ItemID})
}

func (p *peer) truncate(ev clientEvent) error {
	sent, ok := p.audioSent[ev.ItemID]
	if !ok {
		return p.fail("item_truncate_invalid_item_id", "Item with item_id not found: "+ev.ItemID, "item_id", ev.EventID)
	}
	if ev.AudioEndMs == nil || *ev.AudioEndMs < 0 {
		return p.fail("missing_required_parameter", "Missing required parameter: 'audio_end_ms'.", "audio_end_ms", ev.EventID)
	}
	if have := int64(sent) * 1000 / Rate; *ev.AudioEndMs > have {
		return p.fail("invalid_value", fmt.Sprintf("Audio content of %dms is already shorter than %dms", have, *ev.AudioEndMs), "audio_end_ms", ev.EventID)
	}
	tr := Truncate{ItemID: ev.ItemID, AudioEndMs: *ev.AudioEndMs}
	p.s.update(p.sess, func(ss *Session) { ss.Truncates = append(ss.Truncates, tr) })
	// "Truncating audio will delete the server-side text transcript"
	// (conversation.item.truncate, API reference).
	if item := p.conv[ev.ItemID]; item != nil {
		if content, _ := item["content"].([]any); len(content) > 0 {
			content[0].(map[string]any)["transcript"] = ""
		}
	}
	return p.emit("conversation.item.truncated", map[string]any{"item_id": ev.ItemID, "content_index": 0, "audio_end_ms": *ev.AudioEndMs})
}

// startResponse begins the next scripted response.
func (p *peer) startResponse() error {
	var next planned
	switch {
	case !p.greeted && p.userTurns == 0 && len(p.script) == 0 && p.s.cfg.Greeting != "":
		p.greeted = true
		next = planned{reply: p.s.cfg.Greeting}
	case len(p.script) > 0:
		next = p.script[0]
		p.script = p.script[1:]
	default:
		next = planned{reply: "Okay."}
	}
	r := &response{id: p.id("resp"), call: next.call, due: time.Now().Add(p.s.cfg.ReplyDelay)}
	if next.call == nil {
		r.words = strings.Fields(next.reply)
		r.audio = fixtures.WordTones(next.reply, Rate).Samples
	}
	p.resp = r
	if p.s.cfg.Fault == Mute {
		p.resp = nil
		return nil
	}
	return p.emit("response.created", map[string]any{"response": map[string]any{"id": r.id, "object": "realtime.response", "status": "in_progress", "output": []any{}}})
}

// step sends the next part of the response in progress.
func (p *peer) step() error {
	r := p.resp
	if !r.started {
		r.started = true
		if r.call != nil {
			return p.sendCall(r)
		}
		r.item = p.id("item")
		p.audioSent[r.item] = 0
		item := map[string]any{"id": r.item, "object": "realtime.item", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}
		prev := p.store(item, "")
		if err := p.emit("response.output_item.added", map[string]any{"response_id": r.id, "output_index": 0, "item": item}); err != nil {
			return err
		}
		if err := p.announce(item, prev); err != nil {
			return err
		}
		// The item's content part is output_audio (beta: audio); the
		// content_part events name its kind "audio" in both protocols
		// (API reference, response.content_part.added; openai-go
		// ResponseContentPartAddedEventPart; the Agents SDK's schema).
		item["content"] = []any{map[string]any{"type": p.name("output_audio", "audio"), "transcript": ""}}
		return p.emit("response.content_part.added", map[string]any{"response_id": r.id, "item_id": r.item, "output_index": 0, "content_index": 0, "part": map[string]any{"type": "audio", "transcript": ""}})
	}
	ref := map[string]any{"response_id": r.id, "item_id": r.item, "output_index": 0, "content_index": 0}
	with := func(k string, v any) map[string]any {
		m := map[string]any{k: v}
		for a, b := range ref {
			m[a] = b
		}
		return m
	}
	wordLen := pcm.SamplesFor(Rate, fixtures.WordDuration)
	if r.sent < len(r.audio) {
		if r.sent >= r.word*wordLen && r.word < len(r.words) {
			delta := r.words[r.word]
			if r.word < len(r.words)-1 {
				delta += " "
			}
			r.word++
			if err := p.emit(p.name("response.output_audio_transcript.delta", "response.audio_transcript.delta"), with("delta", delta)); err != nil {
				return err
			}
		}
		n := min(pcm.SamplesFor(Rate, chunk), len(r.audio)-r.sent)
		b := pcm.EncodePCM16(nil, r.audio[r.sent:r.sent+n])
		if p.s.cfg.Fault == OddAudio {
			b = append(b, 0)
		}
		r.sent += n
		p.audioSent[r.item] = r.sent
		if err := p.emit(p.name("response.output_audio.delta", "response.audio.delta"), with("delta", base64.StdEncoding.EncodeToString(b))); err != nil {
			return err
		}
		r.due = time.Now().Add(p.s.cfg.ChunkDelay)
		return nil
	}
	text := strings.Join(r.words, " ")
	if err := p.emit(p.name("response.output_audio.done", "response.audio.done"), ref); err != nil {
		return err
	}
	if err := p.emit(p.name("response.output_audio_transcript.done", "response.audio_transcript.done"), with("transcript", text)); err != nil {
		return err
	}
	if err := p.emit("response.content_part.done", with("part", map[string]any{"type": "audio", "transcript": text})); err != nil {
		return err
	}
	item := p.finishItem(r, "completed", text)
	if err := p.emit("response.output_item.done", map[string]any{"response_id": r.id, "output_index": 0, "item": item}); err != nil {
		return err
	}
	if err := p.itemDone(item); err != nil {
		return err
	}
	return p.done(r, "completed", nil, []any{item})
}

// sendCall streams a function call response.
func (p *peer) sendCall(r *response) error {
	r.item, r.callID = p.id("item"), p.id("call")
	p.calls[r.callID] = true
	item := map[string]any{"id": r.item, "object": "realtime.item", "type": "function_call", "status": "in_progress", "name": r.call.Name, "call_id": r.callID, "arguments": ""}
	prev := p.store(item, "")
	if err := p.emit("response.output_item.added", map[string]any{"response_id": r.id, "output_index": 0, "item": item}); err != nil {
		return err
	}
	if err := p.announce(item, prev); err != nil {
		return err
	}
	ref := map[string]any{"response_id": r.id, "item_id": r.item, "output_index": 0, "call_id": r.callID}
	args := r.call.Arguments
	for i := 0; i < len(args); i += 8 {
		m := map[string]any{"delta": args[i:min(i+8, len(args))]}
		for k, v := range ref {
			m[k] = v
		}
		if err := p.emit("response.function_call_arguments.delta", m); err != nil {
			return err
		}
	}
	m := map[string]any{"name": r.call.Name, "arguments": args}
	for k, v := range ref {
		m[k] = v
	}
	if err := p.emit("response.function_call_arguments.done", m); err != nil {
		return err
	}
	item["status"], item["arguments"] = "completed", args
	if err := p.emit("response.output_item.done", map[string]any{"response_id": r.id, "output_index": 0, "item": item}); err != nil {
		return err
	}
	if err := p.itemDone(item); err != nil {
		return err
	}
	return p.done(r, "completed", nil, []any{item})
}

// cancel stops the response in progress.
func (p *peer) cancel(reason string) error {
	r := p.resp
	var output []any
	if r.started && r.call == nil {
		// The item ends incomplete, with the transcript generated so far
		// and its content as always (response.output_item.done: "also
		// emitted when a Response is interrupted, incomplete, or
		// cancelled"; a message item's content is required).
		item := p.finishItem(r, "incomplete", strings.Join(r.words[:r.word], " "))
		if err := p.emit("response.output_item.done", map[string]any{"response_id": r.id, "output_index": 0, "item": item}); err != nil {
			return err
		}
		if err := p.itemDone(item); err != nil {
			return err
		}
		output = []any{item}
	}
	return p.done(r, "cancelled", map[string]any{"type": "cancelled", "reason": reason}, output)
}

// finishItem ends r's assistant item with status and transcript and
// returns it.
func (p *peer) finishItem(r *response, status, transcript string) map[string]any {
	item := p.conv[r.item]
	if item == nil { // deleted by the client meanwhile
		item = map[string]any{"id": r.item, "object": "realtime.item", "type": "message", "role": "assistant"}
	}
	item["status"] = status
	item["content"] = []any{map[string]any{"type": p.name("output_audio", "audio"), "transcript": transcript}}
	return item
}

// done ends response r with status.
func (p *peer) done(r *response, status string, details map[string]any, output []any) error {
	p.resp = nil
	if output == nil {
		output = []any{}
	}
	resp := map[string]any{"id": r.id, "object": "realtime.response", "status": status, "status_details": details, "output": output,
		"usage": map[string]any{"total_tokens": 0, "input_tokens": 0, "output_tokens": 0}}
	// Record first, so that a client that saw response.done sees it
	// counted.
	p.s.update(p.sess, func(ss *Session) {
		if status == "cancelled" {
			ss.Cancelled++
		} else {
			ss.Completed++
		}
	})
	if err := p.emit("response.done", map[string]any{"response": resp}); err != nil {
		return err
	}
	spoken := false
	if status == "completed" && r.call == nil {
		p.spoken++
		spoken = true
	}
	if spoken && p.s.cfg.HangUpAfter > 0 && p.spoken >= p.s.cfg.HangUpAfter {
		p.hungUp = true
		return p.ws.Close(websocket.StatusNormalClosure, "session ended")
	}
	return nil
}
