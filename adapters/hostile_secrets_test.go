package adapters_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Issue #15, items 7 and 8: a hostile or careless agent echoes the
// credentials it was given (in a 401 body, an error event, a log line, a
// close reason), and URLs carry them in userinfo or the query. One canary
// per path: none may reach the capture, the log, an error or an event.

// hostileWS is an agent that answers every WebSocket with what it was
// sent: the Authorization and X-Api-Key headers and the first frame, in a
// log message, a malformed frame and a close reason. With reject set it
// refuses the handshake with HTTP 401 and a body that quotes them.
func hostileWS(t *testing.T, reject bool) string {
	t.Helper()
	echoOf := func(r *http.Request) string {
		echo := r.Header.Get("Authorization") + " " + r.Header.Get("X-Api-Key") + " " + r.Header.Get("X-Custom")
		if user, pass, ok := r.BasicAuth(); ok {
			echo += " " + user + ":" + pass
		}
		return echo
	}
	if reject {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid credentials %s"}`, echoOf(r))
		}))
		t.Cleanup(srv.Close)
		return "ws://" + strings.TrimPrefix(srv.URL, "http://")
	}
	return scriptedWS(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) bool {
		_, first, err := ws.Read(ctx)
		if err != nil {
			return false
		}
		echo := echoOf(r) + " " + string(first)
		if !writeAll(ctx, ws,
			fmt.Sprintf(`{"type":"log","text":%q}`, "you authenticated with "+echo),
			fmt.Sprintf(`{"type":"data","name":"whoami","data":{"headers":%q}}`, echo),
			"not json, but it says "+echo) {
			return false
		}
		reason := strings.ReplaceAll(echo, `"`, "")
		ws.Close(websocket.StatusGoingAway, "bye "+reason[:min(len(reason), 100)])
		return false
	})
}

// helloCodec is JSONBase64 with an opening frame that authenticates with
// a token in a JSON body.
type helloCodec struct{ token string }

func (h helloCodec) Open(s voicetest.Session) (wscodec.CodecSession, []wscodec.Frame, error) {
	cs, _, err := wscodec.JSONBase64(wscodec.JSONOptions{}).Open(s)
	return cs, []wscodec.Frame{{Data: []byte(`{"type":"auth","token":"` + h.token + `"}`)}}, err
}

// recvAll receives from conn until the agent closes it (or 5 s pass),
// closes it, and returns every event and error as text.
func recvAll(t *testing.T, conn voicetest.Conn) string {
	t.Helper()
	defer conn.Close()
	var seen strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			fmt.Fprintf(&seen, "error: %v\n", err)
			if errors.Is(err, voicetest.ErrTransportClosed) || ctx.Err() != nil {
				return seen.String()
			}
			continue
		}
		fmt.Fprintf(&seen, "%s %q %s %v\n", ev.Kind, ev.Text, ev.Data, ev.Tool)
	}
}

// leakedUnder fails t for each canary found in a file under dir, and
// returns how many files it read.
func leakedUnder(t *testing.T, dir string, canaries ...string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		leaked(t, p, b, canaries...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// leaked fails t for each canary found in what.
func leaked(t *testing.T, where string, what []byte, canaries ...string) {
	t.Helper()
	for _, c := range canaries {
		if bytes.Contains(what, []byte(c)) {
			t.Errorf("%s holds %q:\n%s", where, c, what)
		}
		if b64 := base64.StdEncoding.EncodeToString([]byte(c)); bytes.Contains(what, []byte(b64)) {
			t.Errorf("%s holds %q in base64:\n%s", where, c, what)
		}
	}
}

func TestHostileAgentEchoesCredentials(t *testing.T) {
	t.Parallel()
	const (
		password = "userinfo-pw-canary-4471"
		apiKey   = "header-key-canary-9a0b"
		token    = "hello-token-canary-5c2d"
		queryKey = "query-key-canary-e3f1"
	)
	base := hostileWS(t, false)
	url := strings.Replace(base, "ws://", "ws://bot:"+password+"@", 1) + "/ws?api_key=" + queryKey
	capture := &adaptertest.SyncBuffer{}
	var log canaryLog
	a := wscodec.New(url, helloCodec{token: token})
	a.Header = http.Header{"X-Api-Key": {apiKey}}
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf, Capture: capture})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	seen := recvAll(t, conn)
	if !strings.Contains(seen, "you authenticated with") || !strings.Contains(seen, "bad frame") {
		t.Fatalf("the agent's echoes did not all arrive:\n%s", seen)
	}
	canaries := []string{password, apiKey, token, queryKey}
	leaked(t, "the events and errors", []byte(seen), canaries...)
	leaked(t, "the capture", capture.Bytes(), canaries...)
	leaked(t, "the log", []byte(log.String()), canaries...)
	if !bytes.Contains(capture.Bytes(), []byte("REDACTED")) {
		t.Errorf("the capture shows no REDACTED placeholder:\n%s", capture.Bytes())
	}
}

func TestUserinfoPasswordInDialErrors(t *testing.T) {
	t.Parallel()
	const password = "dial-pw-canary-0c7e19"
	rejecting := hostileWS(t, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "ws://" + ln.Addr().String()
	ln.Close()
	for name, base := range map[string]string{"401 echoing it": rejecting, "closed port": closed, "silent server": adaptertest.BlackHole(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := strings.Replace(base, "ws://", "ws://bot:"+password+"@", 1) + "/ws?token=" + password + "-q"
			a := wscodec.New(url, wscodec.RawPCM(16000))
			a.DialTimeout = 300 * time.Millisecond
			err := refusedConnect(t, a, password)
			if !strings.Contains(err.Error(), "bot:REDACTED@") {
				t.Errorf("the error does not show where it dialled: %v", err)
			}
		})
	}
}

// lcAuthServer is a LayerCode customer backend that rejects every
// authorize request with 401 and a body echoing the request: its query key,
// its bearer token and its body.
func lcAuthServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad token %s for %s (key %s)","request":%s}`, r.Header.Get("Authorization"), r.URL.String(), r.URL.Query().Get("key"), body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLayerCodeAuthorizeSecrets(t *testing.T) {
	const (
		queryKey = "lc-query-key-canary-61b0"
		bearer   = "lc-bearer-canary-2f8e77"
		extra    = "lc-body-secret-canary-a91d"
	)
	a := layercode.New(lcAuthServer(t)+"/api/authorize?key="+queryKey, "agent-test")
	a.AuthorizeHeader = http.Header{"Authorization": {"Bearer " + bearer}}
	a.AuthorizeExtra = map[string]any{"custom_headers": map[string]any{"x-upstream-secret": extra}}
	if err := refusedConnect(t, a, queryKey, bearer, extra); !strings.Contains(err.Error(), "401") {
		t.Errorf("the error does not say the backend refused: %v", err)
	}
}

// refusedConnect connects a to a peer that refuses it, checks that no
// canary reaches the error, the capture or the log, and returns the
// error.
func refusedConnect(t *testing.T, a voicetest.Agent, canaries ...string) error {
	t.Helper()
	capture := &adaptertest.SyncBuffer{}
	var log canaryLog
	_, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf, Capture: capture})
	if err == nil {
		t.Fatal("Connect succeeded against a peer that refuses it")
	}
	leaked(t, "the Connect error", []byte(err.Error()), canaries...)
	leaked(t, "the capture", capture.Bytes(), canaries...)
	leaked(t, "the log", []byte(log.String()), canaries...)
	if len(capture.Bytes()) == 0 {
		t.Error("nothing captured: nothing checked")
	}
	return err
}

// The WSOptions.Scrub a user shares learns secrets the adapter cannot
// know (here in a header not named like a credential), and they are
// blanked too.
func TestSharedScrubberBlanksUserSecrets(t *testing.T) {
	const other = "user-known-canary-77e0a1"
	for _, share := range []bool{false, true} {
		capture := &adaptertest.SyncBuffer{}
		a := wscodec.New(hostileWS(t, false)+"/ws", helloCodec{token: "not-a-secret"})
		a.Header = http.Header{"X-Custom": {other}}
		if share {
			a.Scrub = scrub.New(other)
		}
		conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: func(string, ...any) {}, Capture: capture})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		for ctx.Err() == nil {
			if _, err := conn.Recv(ctx); errors.Is(err, voicetest.ErrTransportClosed) {
				break
			}
		}
		cancel()
		conn.Close()
		switch held := bytes.Contains(capture.Bytes(), []byte(other)); {
		case share && held:
			t.Errorf("with the secret in WSOptions.Scrub, the capture holds it:\n%s", capture.Bytes())
		case !share && !held:
			t.Errorf("without WSOptions.Scrub the capture does not hold the echoed value, so the test shows nothing:\n%s", capture.Bytes())
		}
	}
}

// echoAgent is a JSON-codec agent that greets by repeating the credentials
// it was given (the X-Api-Key header, its URL's userinfo, the token of the
// opening message) in everything the codec carries: a transcript, a log
// line, a data payload and a tool call's arguments.
func echoAgent(t *testing.T) string {
	t.Helper()
	return scriptedWS(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) bool {
		echo := r.Header.Get("X-Api-Key")
		if user, pass, ok := r.BasicAuth(); ok {
			echo += " " + user + ":" + pass
		}
		_, first, err := ws.Read(ctx)
		if err != nil {
			return false
		}
		echo += " " + strings.ReplaceAll(string(first), `"`, "'")
		return writeAll(ctx, ws,
			`{"type":"audio","audio":"`+base64.StdEncoding.EncodeToString(make([]byte, 9600))+`","sample_rate":24000}`,
			fmt.Sprintf(`{"type":"transcript","text":%q,"final":true}`, "Your credentials are "+echo),
			fmt.Sprintf(`{"type":"log","text":%q}`, "auth with "+echo),
			fmt.Sprintf(`{"type":"data","name":"whoami","data":{"seen":%q}}`, echo),
			fmt.Sprintf(`{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":%q}}`, echo),
			`{"type":"turn_end"}`)
	})
}

// The canary of the artifacts path: what the agent echoes reaches the
// result through events, and from there the transcript, the timeline, the
// saved artifacts, the golden files and the HTML report. None may hold a
// credential.
func TestEchoedCredentialsNotInArtifacts(t *testing.T) {
	t.Parallel()
	const (
		password = "artifact-pw-canary-3e1f"
		apiKey   = "artifact-key-canary-6b2a"
		token    = "artifact-token-canary-90cd"
	)
	url := strings.Replace(echoAgent(t), "ws://", "ws://bot:"+password+"@", 1) + "/ws"
	a := wscodec.New(url, tokenCodec{helloCodec{token: token}})
	a.Header = http.Header{"X-Api-Key": {apiKey}}
	capture := &adaptertest.SyncBuffer{}
	var log canaryLog
	res, err := voicetest.Run(t.Context(), voicetest.Config{Name: "echo", Agent: a, Capture: capture, Logf: log.logf,
		Script: []voicetest.Step{voicetest.AgentTurn()}, Pacing: voicetest.PaceFast})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.TranscriptText(), "Your credentials are") || len(res.Timeline) < 4 {
		t.Fatalf("the agent's echo did not reach the result:\n%s\n%s", res.TranscriptText(), res.TimelineText())
	}
	dir := t.TempDir()
	if err := res.Save(filepath.Join(dir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteGolden(filepath.Join(dir, "golden"), voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	html, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	canaries := []string{password, apiKey, token}
	leaked(t, "the HTML report", html, canaries...)
	leaked(t, "the transcript and timeline", []byte(res.TranscriptText()+res.TimelineText()), canaries...)
	leaked(t, "the capture", capture.Bytes(), canaries...)
	leaked(t, "the log", []byte(log.String()), canaries...)
	if files := leakedUnder(t, dir, canaries...); files < 5 {
		t.Errorf("only %d files written", files)
	}
}

// tokenCodec is helloCodec declaring turn ends and tool events, so that
// the agent's turn ends at its turn_end.
type tokenCodec struct{ helloCodec }

func (c tokenCodec) Open(s voicetest.Session) (wscodec.CodecSession, []wscodec.Frame, error) {
	cs, _, err := wscodec.JSONBase64(wscodec.JSONOptions{TurnEnd: true, ToolEvents: true, Transcripts: true}).Open(s)
	return cs, []wscodec.Frame{{Data: []byte(`{"type":"auth","token":"` + c.token + `"}`)}}, err
}

// envCanary is a key in the environment that no adapter sends: an agent
// running beside the tests shares their environment, and may quote its
// own key (a log line, an error event, a 401 body). Every wire path must
// blank it: the events and through them the artifacts, the capture, the
// log, and the errors of Connect.
const envCanary = "env-key-canary-0b7d31e9c4"

func setEnvCanary(t *testing.T) {
	t.Setenv("ACME_AGENT_API_KEY", envCanary)
}

// envEchoAgent is a JSON-codec agent that quotes envCanary in everything
// the codec carries: a transcript, a log line, a data payload and a tool
// call. With hostile set it goes on with a frame that is not JSON, a
// binary frame and a close reason that quote it too.
func envEchoAgent(t *testing.T, hostile bool) string {
	t.Helper()
	return scriptedWS(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) bool {
		if !writeAll(ctx, ws,
			`{"type":"audio","audio":"`+base64.StdEncoding.EncodeToString(make([]byte, 4800))+`","sample_rate":24000}`,
			fmt.Sprintf(`{"type":"transcript","text":%q,"final":true}`, "My key is "+envCanary),
			fmt.Sprintf(`{"type":"log","text":%q}`, "loaded ACME_AGENT_API_KEY "+envCanary),
			fmt.Sprintf(`{"type":"data","name":"env","data":{"seen":%q}}`, envCanary),
			fmt.Sprintf(`{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":%q}}`, envCanary),
			`{"type":"turn_end"}`) {
			return false
		}
		if !hostile {
			return true
		}
		if !writeAll(ctx, ws, "not json: "+envCanary) || ws.Write(ctx, websocket.MessageBinary, []byte("raw "+envCanary)) != nil {
			return false
		}
		ws.Close(websocket.StatusGoingAway, "bye "+envCanary)
		return false
	})
}

func envCodec() wscodec.Codec {
	return wscodec.JSONBase64(wscodec.JSONOptions{TurnEnd: true, ToolEvents: true, Transcripts: true})
}

// The events, errors, capture and log of a connection.
func TestEnvironmentCredentialsEchoedOnTheWire(t *testing.T) {
	setEnvCanary(t)
	capture := &adaptertest.SyncBuffer{}
	var log canaryLog
	conn, err := wscodec.New(envEchoAgent(t, true)+"/ws", envCodec()).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf, Capture: capture})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	seen := recvAll(t, conn)
	for _, arrived := range []string{"My key is", "loaded ACME", "bye "} {
		if !strings.Contains(seen, arrived) {
			t.Fatalf("the agent's echo %q did not arrive: the test proves nothing\n%s", arrived, seen)
		}
	}
	if !strings.Contains(string(capture.Bytes()), `"binary"`) {
		t.Fatalf("the binary frame was not captured: the test proves nothing\n%s", capture.Bytes())
	}
	leaked(t, "the events and errors", []byte(seen), envCanary)
	leaked(t, "the capture", capture.Bytes(), envCanary)
	leaked(t, "the log", []byte(log.String()), envCanary)
}

// The result and its artifacts, which the events feed.
func TestEnvironmentCredentialsEchoedNotInArtifacts(t *testing.T) {
	setEnvCanary(t)
	res, err := voicetest.Run(t.Context(), voicetest.Config{Name: "env-echo", Agent: wscodec.New(envEchoAgent(t, false)+"/ws", envCodec()),
		Logf: func(string, ...any) {}, Script: []voicetest.Step{voicetest.AgentTurn()}, Pacing: voicetest.PaceFast})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.TranscriptText(), "My key is") {
		t.Fatalf("the agent's echo did not reach the result: the test proves nothing\n%s", res.TranscriptText())
	}
	dir := t.TempDir()
	if err := res.Save(dir); err != nil {
		t.Fatal(err)
	}
	leaked(t, "the transcript and timeline", []byte(res.TranscriptText()+res.TimelineText()), envCanary)
	if files := leakedUnder(t, dir, envCanary); files < 3 {
		t.Errorf("only %d files written", files)
	}
}

func rejectingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				body := fmt.Sprintf(`{"error":"this server's key %s does not match"}`, envCanary)
				fmt.Fprintf(c, "HTTP/1.1 401 Key %s refused\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", envCanary, len(body), body)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestEnvironmentCredentialsInConnectErrors(t *testing.T) {
	setEnvCanary(t)
	rejecting := rejectingServer(t)
	t.Run("websocket dial", func(t *testing.T) {
		refusedConnect(t, wscodec.New("ws"+strings.TrimPrefix(rejecting, "http")+"/ws", wscodec.RawPCM(16000)), envCanary)
	})
	t.Run("layercode authorize", func(t *testing.T) {
		if err := refusedConnect(t, layercode.New(rejecting+"/api/authorize", "agent-test"), envCanary); !strings.Contains(err.Error(), "401") {
			t.Errorf("the error does not say the backend refused: %v", err)
		}
	})
}
