package restaurant_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// pipeListener is a net.Listener of in-memory connections: Dial hands
// one end of a net.Pipe to Accept. Blocking on it is blocking on
// channels, so an HTTP server and its client on it run inside a
// testing/synctest bubble, on virtual time.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Dial connects to the listener (the signature of wire.WSOptions.NetDial).
func (l *pipeListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errors.New("pipe listener closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:80" }

// startMemBot is startBot with the agent served in process over
// in-memory connections: called inside a synctest bubble, the whole phone
// call (the Twilio line's real-time pacing, the agent's VAD and timers)
// runs on the bubble's virtual time, so a 30-second call takes
// milliseconds and its timeline is the same on every run. The agent, its
// engines and the Media Streams messages on the wire are those of
// startBot; only the socket is a net.Pipe instead of TCP on 127.0.0.1.
func startMemBot(t *testing.T) *bot {
	t.Helper()
	tts := speech.TTSForTest(t, "flite/slt")
	stt := speech.STTForTest(t, "pocketsphinx")
	srv, err := restaurant.NewServer(restaurant.ServerConfig{
		TTS: tts, STT: stt, SilenceTimeout: silenceTimeout, Logf: voicetest.TestLogf(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	l := newPipeListener()
	hs := &http.Server{Handler: srv}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close() // ends the calls and waits for them
		_ = hs.Close()
		<-served
	})
	return &bot{srv: srv, url: "ws://127.0.0.1/media", tts: tts, stt: stt, dial: l.Dial}
}
