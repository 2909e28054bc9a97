package adapters_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
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
)

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
	defer conn.Close()
	var seen strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			fmt.Fprintf(&seen, "error: %v\n", err)
			if errors.Is(err, voicetest.ErrTransportClosed) || ctx.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(&seen, "%s %q %s %v\n", ev.Kind, ev.Text, ev.Data, ev.Tool)
	}
	conn.Close()
	for _, arrived := range []string{"My key is", "loaded ACME", "bye "} {
		if !strings.Contains(seen.String(), arrived) {
			t.Fatalf("the agent's echo %q did not arrive: the test proves nothing\n%s", arrived, seen.String())
		}
	}
	if !strings.Contains(string(capture.Bytes()), `"binary"`) {
		t.Fatalf("the binary frame was not captured: the test proves nothing\n%s", capture.Bytes())
	}
	leaked(t, "the events and errors", []byte(seen.String()), envCanary)
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
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		leaked(t, p, b, envCanary)
		return nil
	})
	if files < 3 {
		t.Errorf("only %d files written", files)
	}
}

// rejectingServer is an HTTP server that refuses every request with 401,
// quoting envCanary in its reason phrase (which a WebSocket dial error
// shows) and its body (which an authorize error shows). It speaks
// HTTP/1.1 by hand, since net/http writes only the standard reason
// phrases.
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
		capture := &adaptertest.SyncBuffer{}
		var log canaryLog
		a := wscodec.New("ws"+strings.TrimPrefix(rejecting, "http")+"/ws", wscodec.RawPCM(16000))
		_, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf, Capture: capture})
		if err == nil {
			t.Fatal("Connect succeeded against a server that answers 401")
		}
		leaked(t, "the dial error", []byte(err.Error()), envCanary)
		leaked(t, "the capture", capture.Bytes(), envCanary)
		leaked(t, "the log", []byte(log.String()), envCanary)
	})
	t.Run("layercode authorize", func(t *testing.T) {
		capture := &adaptertest.SyncBuffer{}
		var log canaryLog
		a := layercode.New(rejecting+"/api/authorize", "agent-test")
		_, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: log.logf, Capture: capture})
		if err == nil {
			t.Fatal("Connect succeeded against a backend that answers 401")
		}
		if !strings.Contains(err.Error(), "401") {
			t.Errorf("the error does not say the backend refused: %v", err)
		}
		leaked(t, "the Connect error", []byte(err.Error()), envCanary)
		leaked(t, "the capture", capture.Bytes(), envCanary)
		leaked(t, "the log", []byte(log.String()), envCanary)
		if len(capture.Bytes()) == 0 {
			t.Error("nothing captured: nothing checked")
		}
	})
}
