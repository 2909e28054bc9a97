// Package lkserver runs a real LiveKit server (livekit-server, the SFU
// built from github.com/livekit/livekit-server at Version) on loopback for
// voicetest's own tests. It is not a test double: it starts the vendor's
// own server binary as a child process, with a configuration that keeps
// every packet on 127.0.0.1 (no public STUN servers, no external IP
// discovery, ICE candidates on the loopback interface only), and stops it
// when the test ends.
//
// The binary is found through the VOICETEST_LIVEKIT_SERVER environment
// variable (a path), then livekit-server on PATH, then
// $GOBIN/livekit-server or $GOPATH/bin/livekit-server. When it is missing
// the test is skipped with the command that installs it (InstallCommand),
// unless VOICETEST_LIVEKIT_REQUIRED is set (as .ci/run sets it), in which
// case the test fails: CI must never skip these tests.
package lkserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the livekit-server release the tests run against. Later
// releases replace pion modules with forks that the Go module proxy does
// not serve, so they cannot be built with go install here.
const Version = "v1.13.5"

// InstallCommand builds and installs the server binary as
// $(go env GOPATH)/bin/livekit-server.
const InstallCommand = `GOBIN="$(mktemp -d)" sh -c 'go install github.com/livekit/livekit-server/cmd/server@` + Version + ` && mv "$GOBIN/server" "$(go env GOPATH)/bin/livekit-server"'`

// RequiredEnv, when set to anything but "" or "0", turns a missing server
// binary (or a missing Node.js agent) into a test failure instead of a
// skip.
const RequiredEnv = "VOICETEST_LIVEKIT_REQUIRED"

// DefaultKey and DefaultSecret are the API key pair every Server knows.
const (
	DefaultKey    = "voicetest-dev"
	DefaultSecret = "voicetest-dev-secret-not-for-production-use"
)

// Required reports whether RequiredEnv is set.
func Required() bool {
	v := os.Getenv(RequiredEnv)
	return v != "" && v != "0"
}

// Binary returns the path of the livekit-server binary, or an error that
// says how to install it.
func Binary() (string, error) {
	if p := os.Getenv("VOICETEST_LIVEKIT_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("VOICETEST_LIVEKIT_SERVER=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("livekit-server"); err == nil {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, d := range filepath.SplitList(gp) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "livekit-server")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("livekit-server %s is not installed (looked at $VOICETEST_LIVEKIT_SERVER, PATH and %s); install it with:\n\t%s", Version, strings.Join(dirs, ", "), InstallCommand)
}

// Skip skips tb (or fails it, when Required) with why.
func Skip(tb testing.TB, why string) {
	tb.Helper()
	if Required() {
		tb.Fatalf("%s (%s is set: CI must not skip this test)", why, RequiredEnv)
	}
	tb.Skip(why)
}

// Server is a running livekit-server.
type Server struct {
	// URL is the server's signalling URL, ws://127.0.0.1:port, as clients
	// and agents dial it.
	URL string
	// HTTPURL is the same address as http://, for the server APIs.
	HTTPURL string
	// Keys are the API key pairs the server accepts.
	Keys map[string]string

	cmd  *exec.Cmd
	done chan struct{}
	log  *Tail
	dir  string
	once sync.Once
}

// Config sets what Start starts.
type Config struct {
	// Keys are API key pairs the server accepts besides DefaultKey.
	Keys map[string]string
	// Debug logs the server at debug level (into Log).
	Debug bool
}

// New starts a server for tb, stopped when tb ends; it skips tb (or fails
// it, when Required) when the binary is missing.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		Skip(tb, err.Error())
	}
	s, err := Start(bin, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Close()
		if tb.Failed() {
			tb.Logf("livekit-server log (last %d bytes):\n%s", tailBytes, s.Log())
		}
		collectDroppedConns()
	})
	return s
}

// Shared is one server that the tests of a binary share, each test in
// rooms of its own (the adapter names a new room per Connect) with agents
// registered under names of its own: it starts when a test first asks for
// it (Get) and runs until Close, which TestMain calls after the tests.
// Starting a livekit-server costs about a second of wall time and a third
// of a second of CPU; a package whose thirty tests each start their own
// spends that thirty times. A test that must stop its server, or needs
// keys the shared one lacks, starts its own with New.
type Shared struct {
	cfg  Config
	once sync.Once
	srv  *Server
	err  error
}

// NewShared returns a Shared that starts its server with cfg.
func NewShared(cfg Config) *Shared { return &Shared{cfg: cfg} }

// Get returns the shared server, started on the first call. Like New it
// skips tb (or fails it, when Required) when the binary is missing; tb
// fails when the server did not start or has exited, and a tb that
// fails shows the end of the server's log.
func (s *Shared) Get(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		Skip(tb, err.Error())
	}
	s.once.Do(func() { s.srv, s.err = Start(bin, s.cfg) })
	if s.err != nil {
		tb.Fatalf("lkserver: starting the shared server: %v", s.err)
	}
	select {
	case <-s.srv.done:
		tb.Fatalf("lkserver: the shared livekit-server has exited: %s", s.srv.Log())
	default:
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("shared livekit-server log (last %d bytes):\n%s", tailBytes, s.srv.Log())
		}
		collectDroppedConns()
	})
	return s.srv
}

// Start starts the shared server outside a test (a TestMain that starts
// a peer of it ahead of the tests) and returns it, or why it did not
// start; later calls and Get return the same server.
func (s *Shared) Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s.once.Do(func() { s.srv, s.err = Start(bin, s.cfg) })
	return s.srv, s.err
}

// Close stops the server if it was started; a Get after Close fails.
func (s *Shared) Close() {
	s.once.Do(func() { s.err = errors.New("lkserver: the shared server was closed before it was used") })
	if s.srv != nil {
		s.srv.Close()
		collectDroppedConns()
	}
}

// collectDroppedConns runs a garbage collection, whose finalizers close
// the signal connections that LiveKit's Go SDK dropped without closing.
// server-sdk-go v2.19.0 loses one whenever the server closes it first
// (a participant leaving races its own Disconnect; a deleted room):
// signalTransportWebSocket.readWorker stores nil over the connection
// when its read fails, so its Close finds nothing to close, and the
// socket stays open, in the CLOSE state, until the runtime's finalizer of
// the unreachable net.Conn closes it. Tests check that they leave no
// socket open; the server's cleanup runs after every client of it has
// closed, so this is where the dropped ones are collected.
func collectDroppedConns() {
	runtime.GC()
	runtime.GC()
}

// Start starts the server binary bin and waits until it answers; the
// caller must Close it. Ports are picked free on 127.0.0.1; a port taken
// in the meantime by another process is retried with new ones.
func Start(bin string, cfg Config) (*Server, error) {
	var last error
	for range 3 {
		s, err := start(bin, cfg)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start(bin string, cfg Config) (*Server, error) {
	httpPort, err := FreePort("tcp")
	if err != nil {
		return nil, err
	}
	udpPort, err := FreePort("udp")
	if err != nil {
		return nil, err
	}
	keys := map[string]string{DefaultKey: DefaultSecret}
	for k, v := range cfg.Keys {
		keys[k] = v
	}
	dir, err := os.MkdirTemp("", "voicetest-livekit-*")
	if err != nil {
		return nil, err
	}
	level := "info"
	if cfg.Debug {
		level = "debug"
	}
	conf := config(httpPort, udpPort, keys, level)
	path := filepath.Join(dir, "livekit.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{
		URL:     fmt.Sprintf("ws://127.0.0.1:%d", httpPort),
		HTTPURL: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		Keys:    keys,
		done:    make(chan struct{}),
		log:     &Tail{},
		dir:     dir,
	}
	s.cmd = exec.Command(bin, "--config", path)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// The server reads its configuration from these too; the file alone
	// must decide.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LIVEKIT_") && !strings.HasPrefix(kv, "NODE_IP=") && !strings.HasPrefix(kv, "UDP_PORT=") && !strings.HasPrefix(kv, "REDIS_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lkserver: starting %s: %w", bin, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// config returns the server's YAML configuration: loopback only, keys
// given in the file.
func config(httpPort, udpPort int, keys map[string]string, level string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "port: %d\n", httpPort)
	b.WriteString("bind_addresses: [\"127.0.0.1\"]\n")
	b.WriteString("rtc:\n")
	fmt.Fprintf(&b, "  udp_port: %d\n", udpPort)
	b.WriteString("  tcp_port: 0\n")
	b.WriteString("  node_ip: 127.0.0.1\n")
	b.WriteString("  use_external_ip: false\n")
	b.WriteString("  enable_loopback_candidate: true\n")
	b.WriteString("  stun_servers: [\"127.0.0.1:3478\"]\n")
	b.WriteString("  interfaces:\n    includes: [lo]\n")
	b.WriteString("  ips:\n    includes: [127.0.0.0/8]\n")
	b.WriteString("room:\n  empty_timeout: 30\n  departure_timeout: 5\n")
	b.WriteString("keys:\n")
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "  %s: %s\n", strconv.Quote(k), strconv.Quote(keys[k]))
	}
	fmt.Fprintf(&b, "logging:\n  level: %s\n  json: false\n", level)
	return b.String()
}

// FreePort returns a port of network ("tcp" or "udp") free on 127.0.0.1
// at the time of the call.
func FreePort(network string) (int, error) {
	if network == "udp" {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls the server's health endpoint until it answers OK, the
// process exits, or timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("lkserver: livekit-server exited before it answered: %s", s.Log())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.HTTPURL+"/", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			cancel()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		} else {
			cancel()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("lkserver: livekit-server did not answer on %s within %v: %s", s.HTTPURL, timeout, s.Log())
}

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Log returns the end of the server's log.
func (s *Server) Log() string { return s.log.String() }

// Close stops the server and removes its configuration. It kills the
// process: a test server keeps nothing worth a graceful shutdown, which
// waits for rooms and connections to drain.
func (s *Server) Close() {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		os.RemoveAll(s.dir)
	})
}

// tailBytes is how much of a process's log a Tail keeps.
const tailBytes = 64 << 10

// Tail is an io.Writer that keeps the last 64 KiB written to it: the log
// of a child process (the server's, an agent worker's). Safe for
// concurrent use.
type Tail struct {
	mu sync.Mutex
	b  []byte
}

// Write appends p, dropping what is older than the last 64 KiB.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailBytes {
		t.b = append(t.b[:0], t.b[len(t.b)-tailBytes:]...)
	}
	return len(p), nil
}

// String returns what is kept, invalid UTF-8 replaced by "?".
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.ToValidUTF8(t.b, []byte("?")))
}
