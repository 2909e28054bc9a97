// Package twiliocarrier is a test double of Twilio's side of phone calls:
// the REST API that places and updates calls and configures phone
// numbers, and the carrier that connects a call between two numbers,
// fetches the TwiML of the numbers' webhooks (signed with
// X-Twilio-Signature) and opens the Media Streams that TwiML asks for.
//
// What it follows (Twilio's documentation):
//
//   - REST API 2010-04-01, form-encoded, HTTP Basic auth with the Account
//     SID (or an API key SID) and the Auth Token (or the key's secret):
//     POST /2010-04-01/Accounts/{AccountSid}/Calls.json (To, From, Url,
//     Method) answers 201 with the Call resource (sid "CA…", status
//     "queued"); POST …/Calls/{CallSid}.json with Twiml (new instructions
//     for a live call) or Status=completed (hang up);
//     GET …/IncomingPhoneNumbers.json?PhoneNumber=… lists the account's
//     numbers (sid "PN…", phone_number, voice_url, voice_method); POST
//     …/IncomingPhoneNumbers/{Sid}.json (VoiceUrl, VoiceMethod) updates
//     one. Errors are {"code", "message", "more_info", "status"} (20003
//     for a failed authentication, 20404 for an unknown resource, 21212
//     for a From that is not one of the account's numbers).
//   - Webhooks (twilio.com/docs/usage/webhooks/webhooks-security): the
//     carrier POSTs CallSid, AccountSid, From, To, CallStatus, Direction
//     and ApiVersion, form-encoded, with X-Twilio-Signature: the Base64 of
//     the HMAC-SHA1, keyed with the Auth Token, of the full URL followed
//     by each POST parameter's name and value, sorted by name.
//   - TwiML: <Connect><Stream url="wss://…"> with <Parameter name value>
//     children (a bidirectional stream); <Play digits="…"> (DTMF tones
//     into the call, "w" a half-second pause); <Reject/>, <Hangup/>.
//   - Media Streams (twilio.com/docs/voice/media-streams/websocket-messages):
//     Twilio's messages "connected", "start" (streamSid, accountSid,
//     callSid, tracks ["inbound"], customParameters, mediaFormat
//     audio/x-mulaw 8000 1), "media" (track, chunk, timestamp, base64
//     payload of 20 ms of µ-law), "dtmf" (track inbound_track, digit),
//     "mark" (echoed when the audio sent before it has played) and "stop";
//     the app's "media", "mark" and "clear". Every message from Twilio
//     carries a string sequenceNumber counting up from 1.
//
// THIS IS NOT TWILIO. The double knows two kinds of numbers: the
// account's own (Config.Numbers, with their voice URLs, which the REST API
// lists and updates) and outside lines where an agent answers
// (Config.Agents: a number and the Media Streams URL of the bot that
// answers it, as that number's own TwiML would <Connect> it). A call
// between an agent's line and the account is two streams bridged by the
// carrier's clock: every 20 ms it plays one frame of each side's queued
// audio to the other side (µ-law silence when nothing is queued, as a
// phone line is never silent), echoes each side's marks as their audio
// plays, and drops a side's queue on its clear. Placing a call
// (Calls.json) connects the agent at To, then fetches Url and runs its
// TwiML; Dial makes an agent call one of the account's numbers, whose
// voice URL is fetched and run. New TwiML for a live call (<Play digits>)
// stops the account side's stream, sends the digits to the agent's
// stream as dtmf events, and runs the rest (a new stream). The agent
// closing its WebSocket hangs up the call: the account side gets "stop".
// Every protocol violation is recorded in Call.Errors.
package twiliocarrier

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
)

// Fault is a way the carrier misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the carrier behaves.
	NoFault Fault = iota
	// NoStream: calls are placed, but the carrier never fetches their
	// TwiML nor opens a stream (a call that rings forever).
	NoStream
	// MuteAgent: the agent's audio never reaches the account's stream.
	MuteAgent
	// BadSignature: webhooks carry a signature made with the wrong key.
	BadSignature
)

// Config sets the double's account and lines.
type Config struct {
	// AccountSid and AuthToken are the account's credentials (defaults
	// "AC" + 32 zeros… and "test-auth-token").
	AccountSid, AuthToken string
	// Numbers are the account's phone numbers and their voice URLs.
	Numbers map[string]string
	// Agents are outside lines: a number and the Media Streams WebSocket
	// of the bot that answers it.
	Agents map[string]string
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds text frames sent verbatim on the account's stream right
	// after its start message, with "{sid}" replaced by its streamSid.
	Send []string
	// Listener, when set, is where the REST API serves instead of a port
	// of 127.0.0.1, and NetDial, when set, opens the carrier's own
	// connections (webhooks, media streams) instead of TCP dials: an
	// in-memory network (adaptertest.MemNet), to run a call on virtual
	// time. The double closes Listener.
	Listener net.Listener
	NetDial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultAccountSid and DefaultAuthToken are Config's defaults.
const (
	DefaultAccountSid = "AC00000000000000000000000000000001"
	DefaultAuthToken  = "test-auth-token-0123456789"
)

// Call is what the double saw of one call.
type Call struct {
	Sid, From, To, Direction string
	// Status is queued, in-progress or completed.
	Status string
	// Webhooks counts the TwiML fetches; Streams the account-side streams
	// opened.
	Webhooks, Streams int
	// Digits are the DTMF digits played into the call.
	Digits string
	// HungUpBy says who ended the call: "api" (Status=completed), "agent"
	// or "account" (its TwiML hung up or its stream closed).
	HungUpBy string
	// Errors are protocol violations the carrier saw.
	Errors []string
}

func cloneCall(c *Call) Call {
	out := *c
	out.Errors = slices.Clone(c.Errors)
	return out
}

// Server is a running double.
type Server struct {
	// URL is the REST API's base URL (http://127.0.0.1:port), in place
	// of https://api.twilio.com.
	URL string

	cfg    Config
	srv    *peerkit.Server
	client *http.Client // webhooks and media streams
	calls  *peerkit.Log[Call]
	wg     sync.WaitGroup

	mu      sync.Mutex
	numbers map[string]*number // by phone number
	live    map[string]*call   // by CallSid
	nextSid int
}

// number is one of the account's phone numbers.
type number struct {
	sid, phone, voiceURL, voiceMethod string
}

// New starts a double on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a double on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.AccountSid == "" {
		cfg.AccountSid = DefaultAccountSid
	}
	if cfg.AuthToken == "" {
		cfg.AuthToken = DefaultAuthToken
	}
	s := &Server{cfg: cfg, client: http.DefaultClient, calls: peerkit.NewLog(cloneCall), numbers: map[string]*number{}, live: map[string]*call{}}
	if cfg.NetDial != nil {
		s.client = &http.Client{Transport: &http.Transport{DialContext: cfg.NetDial, DisableKeepAlives: true}}
	}
	for phone, voice := range cfg.Numbers {
		s.nextSid++
		s.numbers[phone] = &number{sid: sid("PN", s.nextSid), phone: phone, voiceURL: voice, voiceMethod: "POST"}
	}
	mux := http.NewServeMux()
	base := "/2010-04-01/Accounts/{account}/"
	mux.HandleFunc("POST "+base+"Calls.json", s.auth(s.createCall))
	mux.HandleFunc("POST "+base+"Calls/{sid}", s.auth(s.updateCall))
	mux.HandleFunc("GET "+base+"IncomingPhoneNumbers.json", s.auth(s.listNumbers))
	mux.HandleFunc("POST "+base+"IncomingPhoneNumbers/{sid}", s.auth(s.updateNumber))
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.URL
	s.srv.Serve(mux)
	return s
}

// sid returns a SID of prefix and n.
func sid(prefix string, n int) string { return fmt.Sprintf("%s%032x", prefix, n) }

// Close hangs up every call and stops the double.
func (s *Server) Close() {
	s.srv.Close()
	s.mu.Lock()
	live := make([]*call, 0, len(s.live))
	for _, c := range s.live {
		live = append(live, c)
	}
	s.mu.Unlock()
	for _, c := range live {
		c.hangUp("api")
	}
	s.wg.Wait()
}

// Calls returns a copy of what the double saw of each call.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

// WaitCall waits until call i satisfies cond.
func (s *Server) WaitCall(ctx context.Context, i int, cond func(Call) bool) (Call, error) {
	return s.calls.Wait(ctx, i, cond)
}

// VoiceURL returns the voice URL of one of the account's numbers.
func (s *Server) VoiceURL(phone string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.numbers[phone]; n != nil {
		return n.voiceURL
	}
	return ""
}

// apiError writes Twilio's error body.
func apiError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg,
		"more_info": "https://www.twilio.com/docs/errors/" + strconv.Itoa(code), "status": status})
}

// auth checks the Basic credentials and the account in the path.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != s.cfg.AccountSid || pass != s.cfg.AuthToken {
			apiError(w, http.StatusUnauthorized, 20003, "Authenticate")
			return
		}
		if r.PathValue("account") != s.cfg.AccountSid {
			apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
			return
		}
		if r.Method == http.MethodPost {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
				apiError(w, http.StatusBadRequest, 20001, "Content-Type must be application/x-www-form-urlencoded, not "+ct)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			if err := r.ParseForm(); err != nil {
				apiError(w, http.StatusBadRequest, 20001, "the body is not a form: "+err.Error())
				return
			}
		}
		h(w, r)
	}
}

// callResource is the JSON of a Call.
func (s *Server) callResource(c *call) map[string]any {
	return map[string]any{"sid": c.sid, "account_sid": s.cfg.AccountSid, "to": c.to, "from": c.from,
		"status": c.status(), "direction": c.direction, "api_version": "2010-04-01",
		"uri": "/2010-04-01/Accounts/" + s.cfg.AccountSid + "/Calls/" + c.sid + ".json"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) createCall(w http.ResponseWriter, r *http.Request) {
	to, from, twimlURL := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Url")
	if to == "" || from == "" {
		apiError(w, http.StatusBadRequest, 21201, "To and From are required")
		return
	}
	if twimlURL == "" && r.PostForm.Get("Twiml") == "" {
		apiError(w, http.StatusBadRequest, 21205, "Url or Twiml is required")
		return
	}
	s.mu.Lock()
	_, owned := s.numbers[from]
	s.mu.Unlock()
	if !owned {
		apiError(w, http.StatusBadRequest, 21212, "The 'From' number "+from+" is not a valid phone number, shortcode, or alphanumeric sender ID")
		return
	}
	agent, ok := s.cfg.Agents[to]
	if !ok {
		apiError(w, http.StatusBadRequest, 21217, "Phone number "+to+" does not appear to be valid")
		return
	}
	if m := r.PostForm.Get("Method"); m != "" && m != "POST" {
		apiError(w, http.StatusBadRequest, 21209, "this double fetches TwiML with POST only")
		return
	}
	c := s.newCall(from, to, "outbound-api", agent)
	writeJSON(w, http.StatusCreated, s.callResource(c))
	s.goCall(func() { c.run(twimlURL, r.PostForm.Get("Twiml")) })
}

// Dial makes the agent at from call the account's number to, as an
// agent that places calls does: the number's voice URL is fetched and
// its TwiML run. It returns the CallSid.
func (s *Server) Dial(from, to string) (string, error) {
	agent, ok := s.cfg.Agents[from]
	if !ok {
		return "", fmt.Errorf("twiliocarrier: no agent answers %s (Config.Agents)", from)
	}
	s.mu.Lock()
	n := s.numbers[to]
	s.mu.Unlock()
	if n == nil {
		return "", fmt.Errorf("twiliocarrier: %s is not one of the account's numbers (Config.Numbers)", to)
	}
	c := s.newCall(from, to, "inbound", agent)
	s.mu.Lock()
	voice := n.voiceURL
	s.mu.Unlock()
	s.goCall(func() { c.run(voice, "") })
	return c.sid, nil
}

func (s *Server) newCall(from, to, direction, agent string) *call {
	s.mu.Lock()
	s.nextSid++
	id := sid("CA", s.nextSid)
	s.mu.Unlock()
	rec := s.calls.Add(func(int) *Call { return &Call{Sid: id, From: from, To: to, Direction: direction, Status: "queued"} })
	ctx, cancel := s.srv.CallContext()
	c := &call{s: s, sid: id, from: from, to: to, direction: direction, agentURL: agent, rec: rec,
		ctx: ctx, cancel: cancel, redirect: make(chan string, 1)}
	s.mu.Lock()
	s.live[id] = c
	s.mu.Unlock()
	return c
}

func (s *Server) goCall(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

func (s *Server) updateCall(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSuffix(r.PathValue("sid"), ".json")
	s.mu.Lock()
	c := s.live[id]
	s.mu.Unlock()
	if c == nil {
		apiError(w, http.StatusNotFound, 20404, "The requested resource /Calls/"+id+".json was not found")
		return
	}
	switch {
	case r.PostForm.Get("Status") == "completed":
		c.hangUp("api")
	case r.PostForm.Get("Twiml") != "":
		select {
		case c.redirect <- r.PostForm.Get("Twiml"):
		default:
			apiError(w, http.StatusConflict, 21220, "the call is already being redirected")
			return
		}
	default:
		apiError(w, http.StatusBadRequest, 21220, "give Status=completed or Twiml")
		return
	}
	writeJSON(w, http.StatusOK, s.callResource(c))
}

func (s *Server) numberResource(n *number) map[string]any {
	return map[string]any{"sid": n.sid, "account_sid": s.cfg.AccountSid, "phone_number": n.phone,
		"voice_url": n.voiceURL, "voice_method": n.voiceMethod}
}

func (s *Server) listNumbers(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("PhoneNumber")
	s.mu.Lock()
	list := []map[string]any{}
	for _, n := range s.numbers {
		if want == "" || n.phone == want {
			list = append(list, s.numberResource(n))
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"incoming_phone_numbers": list, "page": 0, "page_size": 50})
}

func (s *Server) updateNumber(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSuffix(r.PathValue("sid"), ".json")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.numbers {
		if n.sid != id {
			continue
		}
		if v, ok := r.PostForm["VoiceUrl"]; ok {
			n.voiceURL = v[0]
		}
		if v := r.PostForm.Get("VoiceMethod"); v != "" {
			n.voiceMethod = v
		}
		writeJSON(w, http.StatusOK, s.numberResource(n))
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource /IncomingPhoneNumbers/"+id+".json was not found")
}

// Signature returns X-Twilio-Signature for a POST of params to fullURL.
func Signature(authToken, fullURL string, params url.Values) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		for _, v := range params[k] {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	m := hmac.New(sha1.New, []byte(authToken))
	m.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// call is one live call.
type call struct {
	s                        *Server
	sid, from, to, direction string
	agentURL                 string
	rec                      *Call
	ctx                      context.Context
	cancel                   context.CancelFunc
	redirect                 chan string
	endOnce                  sync.Once
	mu                       sync.Mutex
	agent, account           *leg // account is nil between streams
	done                     bool
}

func (c *call) status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.done:
		return "completed"
	case c.agent != nil:
		return "in-progress"
	}
	return "queued"
}

func (c *call) errorf(format string, args ...any) {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Errors = append(cl.Errors, fmt.Sprintf(format, args...)) })
}

// hangUp ends the call once.
func (c *call) hangUp(by string) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.done = true
		agent, account := c.agent, c.account
		c.mu.Unlock()
		for _, l := range []*leg{account, agent} {
			if l != nil {
				l.stop()
			}
		}
		c.cancel()
		c.s.mu.Lock()
		delete(c.s.live, c.sid)
		c.s.mu.Unlock()
		c.s.calls.Update(c.rec, func(cl *Call) { cl.Status, cl.HungUpBy = "completed", by })
	})
}

// run connects the agent, then runs the account side's TwiML (fetched
// from twimlURL, or inline) and the redirects, until the call ends.
func (c *call) run(twimlURL, inline string) {
	defer c.hangUp("account")
	if c.s.cfg.Fault == NoStream {
		<-c.ctx.Done()
		return
	}
	agent, err := dialLeg(c.ctx, c, c.agentURL, nil)
	if err != nil {
		c.errorf("connecting the agent's stream %s: %v", c.agentURL, err)
		return
	}
	c.mu.Lock()
	c.agent = agent
	c.mu.Unlock()
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Status = "in-progress" })
	c.s.goCall(func() { // the agent hanging up ends the call
		select {
		case <-agent.closed:
			c.hangUp("agent")
		case <-c.ctx.Done():
		}
	})
	c.s.goCall(c.clock)
	doc := inline
	if doc == "" {
		if doc, err = c.fetch(twimlURL); err != nil {
			c.errorf("fetching TwiML: %v", err)
			return
		}
	}
	for {
		if !c.runTwiML(doc) {
			return
		}
		select {
		case doc = <-c.redirect:
		case <-c.ctx.Done():
			return
		}
	}
}

// fetch posts the webhook's parameters to u, signed, and returns its
// TwiML.
func (c *call) fetch(u string) (string, error) {
	form := url.Values{"CallSid": {c.sid}, "AccountSid": {c.s.cfg.AccountSid}, "From": {c.from}, "To": {c.to},
		"CallStatus": {"ringing"}, "Direction": {c.direction}, "ApiVersion": {"2010-04-01"}}
	if c.direction == "outbound-api" {
		form.Set("CallStatus", "in-progress")
	}
	key := c.s.cfg.AuthToken
	if c.s.cfg.Fault == BadSignature {
		key = "not-the-auth-token"
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", Signature(key, u, form))
	req.Header.Set("User-Agent", "TwilioProxy/1.1")
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Webhooks++ })
	resp, err := c.s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %s: %.200s", resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") && !strings.HasPrefix(ct, "application/xml") {
		return "", fmt.Errorf("Content-Type %q: TwiML is text/xml", ct)
	}
	return string(b), nil
}

// twiml is the TwiML the double runs.
type twiml struct {
	XMLName xml.Name `xml:"Response"`
	Verbs   []struct {
		XMLName xml.Name
		Digits  string `xml:"digits,attr"`
		Stream  *struct {
			URL    string `xml:"url,attr"`
			Params []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"Parameter"`
		} `xml:"Stream"`
	} `xml:",any"`
}

// runTwiML runs one TwiML document; it reports false once the call has
// ended.
func (c *call) runTwiML(doc string) bool {
	var t twiml
	if err := xml.Unmarshal([]byte(doc), &t); err != nil {
		c.errorf("TwiML that does not parse: %v: %.200s", err, doc)
		return false
	}
	for _, v := range t.Verbs {
		switch v.XMLName.Local {
		case "Play":
			if v.Digits == "" {
				c.errorf("<Play> without digits: this double plays only DTMF")
				continue
			}
			for _, d := range v.Digits {
				if d == 'w' || d == 'W' {
					continue
				}
				if !strings.ContainsRune("0123456789*#", d) {
					c.errorf("<Play digits> with %q", d)
					continue
				}
				c.agent.send(map[string]any{"event": "dtmf", "dtmf": map[string]any{"track": "inbound_track", "digit": string(d)}})
				c.s.calls.Update(c.rec, func(cl *Call) { cl.Digits += string(d) })
			}
		case "Connect":
			if v.Stream == nil || v.Stream.URL == "" {
				c.errorf("<Connect> without <Stream url>")
				return false
			}
			params := map[string]string{}
			for _, p := range v.Stream.Params {
				params[p.Name] = p.Value
			}
			if !c.stream(v.Stream.URL, params) {
				return false
			}
		case "Reject", "Hangup":
			return false
		default:
			c.errorf("TwiML verb <%s> this double does not run", v.XMLName.Local)
		}
	}
	return true
}

// stream runs the account side's stream until it ends: it reports true
// when new TwiML stopped it (the call goes on), false when the call is
// over.
func (c *call) stream(u string, params map[string]string) bool {
	l, err := dialLeg(c.ctx, c, u, params)
	if err != nil {
		c.errorf("connecting the stream %s: %v", u, err)
		return false
	}
	c.mu.Lock()
	c.account = l
	c.mu.Unlock()
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Streams++ })
	for _, m := range c.s.cfg.Send {
		if l.write([]byte(strings.ReplaceAll(m, "{sid}", l.streamSid))) != nil {
			break // the app is gone: the rest would go nowhere
		}
	}
	defer func() {
		c.mu.Lock()
		c.account = nil
		c.mu.Unlock()
	}()
	select {
	case doc := <-c.redirect:
		l.stop()
		c.redirect <- doc // run after this stream
		return true
	case <-l.closed:
		return false // the account's app closed its stream: it hung up
	case <-c.ctx.Done():
		return false
	}
}

// clock plays, every 20 ms, one frame of each side's queue to the other.
func (c *call) clock() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		agent, account := c.agent, c.account
		c.mu.Unlock()
		fromAgent := agent.play()
		if c.s.cfg.Fault == MuteAgent {
			fromAgent = nil
		}
		var fromAccount []byte
		if account != nil {
			fromAccount = account.play()
			account.media(fromAgent)
		}
		agent.media(fromAccount)
	}
}

// leg is one Media Stream the carrier opened, as Twilio: it sends the
// call's audio to the app at its URL, and plays what the app sends.
type leg struct {
	c         *call
	ws        *websocket.Conn
	streamSid string
	closed    chan struct{} // the app closed the stream, or stop()

	mu     sync.Mutex
	seq    int
	chunk  int
	queue  []item // the app's audio and marks, to play in order
	silent []byte
	once   sync.Once
}

// item is a frame of audio or a mark in a leg's queue.
type item struct {
	audio []byte
	mark  string
}

// dialLeg opens a stream to u and sends connected and start.
func dialLeg(ctx context.Context, c *call, u string, params map[string]string) (*leg, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: c.s.client})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 20)
	c.s.mu.Lock()
	c.s.nextSid++
	streamSid := sid("MZ", c.s.nextSid)
	c.s.mu.Unlock()
	l := &leg{c: c, ws: ws, streamSid: streamSid, closed: make(chan struct{}), silent: make([]byte, 160)}
	for i := range l.silent {
		l.silent[i] = 0xFF // µ-law silence
	}
	if params == nil {
		params = map[string]string{}
	}
	l.send(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	l.send(map[string]any{"event": "start", "streamSid": streamSid, "start": map[string]any{
		"streamSid": streamSid, "accountSid": c.s.cfg.AccountSid, "callSid": c.sid, "tracks": []string{"inbound"},
		"customParameters": params, "mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})
	c.s.goCall(l.read)
	return l, nil
}

// send writes one message from Twilio with the next sequenceNumber.
func (l *leg) send(m map[string]any) {
	l.mu.Lock()
	l.seq++
	m["sequenceNumber"] = strconv.Itoa(l.seq)
	if m["event"] != "connected" {
		m["streamSid"] = l.streamSid
	}
	b, _ := json.Marshal(m)
	l.mu.Unlock()
	l.write(b)
}

func (l *leg) write(b []byte) error {
	ctx, cancel := context.WithTimeout(l.c.ctx, 5*time.Second)
	defer cancel()
	return l.ws.Write(ctx, websocket.MessageText, b)
}

// media sends one 20 ms frame of the call's audio (silence for nil).
func (l *leg) media(frame []byte) {
	if frame == nil {
		frame = l.silent
	}
	l.mu.Lock()
	l.chunk++
	chunk := l.chunk
	l.mu.Unlock()
	l.send(map[string]any{"event": "media", "media": map[string]any{"track": "inbound", "chunk": strconv.Itoa(chunk),
		"timestamp": strconv.Itoa((chunk - 1) * 20), "payload": base64.StdEncoding.EncodeToString(frame)}})
}

// play takes the next 20 ms of the app's audio (nil when none is
// queued), echoing the marks that come before it.
func (l *leg) play() []byte {
	var marks []string
	var frame []byte
	l.mu.Lock()
	for len(l.queue) > 0 && frame == nil {
		it := &l.queue[0]
		if it.audio == nil {
			marks = append(marks, it.mark)
			l.queue = l.queue[1:]
			continue
		}
		n := min(160, len(it.audio))
		frame = it.audio[:n]
		if it.audio = it.audio[n:]; len(it.audio) == 0 {
			l.queue = l.queue[1:]
		}
	}
	if frame != nil && len(frame) < 160 {
		frame = append(slices.Clone(frame), l.silent[len(frame):]...)
	}
	l.mu.Unlock()
	for _, m := range marks {
		l.send(map[string]any{"event": "mark", "mark": map[string]any{"name": m}})
	}
	return frame
}

// read takes the app's messages until the stream closes.
func (l *leg) read() {
	defer l.once.Do(func() { close(l.closed) })
	defer l.ws.CloseNow() // a reset connection is not closed by the library
	for {
		typ, data, err := l.ws.Read(l.c.ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			l.c.errorf("a binary frame on stream %s", l.streamSid)
			continue
		}
		var m struct {
			Event     string `json:"event"`
			StreamSid string `json:"streamSid"`
			Media     *struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark *struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			l.c.errorf("a message that is not JSON on stream %s", l.streamSid)
			continue
		}
		if m.StreamSid != l.streamSid {
			l.c.errorf("a %s message for stream %q on stream %s", m.Event, m.StreamSid, l.streamSid)
			continue
		}
		switch {
		case m.Event == "media" && m.Media != nil:
			b, err := base64.StdEncoding.DecodeString(m.Media.Payload)
			if err != nil {
				l.c.errorf("media whose payload is not base64")
				continue
			}
			l.mu.Lock()
			l.queue = append(l.queue, item{audio: b})
			l.mu.Unlock()
		case m.Event == "mark" && m.Mark != nil && m.Mark.Name != "":
			l.mu.Lock()
			l.queue = append(l.queue, item{mark: m.Mark.Name})
			l.mu.Unlock()
		case m.Event == "clear":
			var marks []string
			l.mu.Lock()
			for _, it := range l.queue {
				if it.audio == nil {
					marks = append(marks, it.mark)
				}
			}
			l.queue = nil
			l.mu.Unlock()
			for _, name := range marks {
				l.send(map[string]any{"event": "mark", "mark": map[string]any{"name": name}})
			}
		default:
			l.c.errorf("a message Twilio does not take from an app: %.200s", data)
		}
	}
}

// stop sends "stop" and closes the stream.
func (l *leg) stop() {
	l.send(map[string]any{"event": "stop", "stop": map[string]any{"accountSid": l.c.s.cfg.AccountSid, "callSid": l.c.sid}})
	l.ws.Close(websocket.StatusNormalClosure, "")
	l.once.Do(func() { close(l.closed) })
}
