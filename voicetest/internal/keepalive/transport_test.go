package keepalive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingTransport returns a Transport whose dials are counted.
func countingTransport(t *testing.T) (*Transport, *atomic.Int32) {
	t.Helper()
	kt := newTransport(nil)
	kt.proxy = nil
	var dials atomic.Int32
	dial := kt.Dial
	kt.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	t.Cleanup(kt.CloseIdleConnections)
	return kt, &dials
}

// rawServer is an HTTP/1.1 server on loopback that answers each request
// with "ok <n>" and then does what its mode says with the connection.
type rawServer struct {
	ln       net.Listener
	mode     string // "close" (close the connection after each answer) or "connection-close" (say Connection: close, keep it open)
	requests atomic.Int32
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	bodies   []string
}

func startRawServer(t *testing.T, mode string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln, mode: mode}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		_ = c.Close()
		return
	}
	body, _ := io.ReadAll(req.Body)
	n := s.requests.Add(1)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(body))
	s.mu.Unlock()
	answer := fmt.Sprintf("ok %d", n)
	hdr := ""
	if s.mode == "connection-close" {
		hdr = "Connection: close\r\n"
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n%sContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", hdr, len(answer), answer)
	if s.mode == "close" {
		_ = c.Close()
	}
	// "connection-close": the connection stays open until the client
	// closes it (or the test ends).
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/v1/chat/completions" }

// post sends body to url through rt and returns the answer.
func post(ctx context.Context, rt http.RoundTripper, url, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return "", err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestKeepAliveServerClosesIdleConnections: a server that closes each
// connection after its answer (as one whose idle timeout ran out). Outside
// a bubble the idle connection's watcher closes it; inside one nothing
// watches it, so the next request fails on it before any byte of answer
// and is sent once more on a new connection. Every request reaches the
// server exactly once.
func TestKeepAliveServerClosesIdleConnections(t *testing.T) {
	for _, bubble := range []bool{false, true} {
		t.Run(fmt.Sprintf("bubble=%v", bubble), func(t *testing.T) {
			srv := startRawServer(t, "close")
			kt, dials := countingTransport(t)
			run := func(ctx context.Context) {
				for i := range 3 {
					got, err := post(ctx, kt, srv.url(), fmt.Sprintf("request %d", i))
					require.NoError(t, err, "request %d", i)
					assert.Equal(t, fmt.Sprintf("ok %d", i+1), got)
					if !bubble {
						// Let the watcher see the close (outside a
						// bubble the request may also race it, which the
						// retry covers).
						waitFor(t, func() bool { kt.mu.Lock(); defer kt.mu.Unlock(); return len(kt.idle) == 0 })
					}
				}
			}
			if bubble {
				synctest.Test(t, func(t *testing.T) { run(t.Context()) })
			} else {
				run(t.Context())
			}
			assert.EqualValues(t, 3, srv.requests.Load(), "requests the server answered")
			assert.Equal(t, []string{"request 0", "request 1", "request 2"}, srv.bodies, "each request reached the server once, whole")
			assert.EqualValues(t, 3, dials.Load(), "a new connection for each request")
		})
	}
}

// waitFor polls cond for up to ten seconds of real time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 10 s")
}

// TestKeepAliveConnectionClose: an answer that says Connection: close is
// the connection's last; the client closes it (the server waits for that)
// and the next request has a new one.
func TestKeepAliveConnectionClose(t *testing.T) {
	srv := startRawServer(t, "connection-close")
	kt, dials := countingTransport(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a kept connection would wait for an answer forever
	defer cancel()
	for i := range 3 {
		got, err := post(ctx, kt, srv.url(), "x")
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("ok %d", i+1), got)
	}
	assert.EqualValues(t, 3, dials.Load())
	kt.mu.Lock()
	assert.Empty(t, kt.idle)
	kt.mu.Unlock()
}

// TestKeepAliveCancel: cancelling a request's context ends it while it
// waits for the answer's header, or while its body is read; the error
// says so (context.Canceled) and the connection is not kept.
func TestKeepAliveCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("first part"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	kt, dials := countingTransport(t)

	t.Run("header", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-arrived; cancel() }()
		_, err := post(ctx, kt, srv.URL+"/header", "x")
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "reading the response header")
	})
	t.Run("body", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/body", nil)
		require.NoError(t, err)
		resp, err := kt.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		<-arrived
		buf := make([]byte, 10)
		_, err = io.ReadFull(resp.Body, buf)
		require.NoError(t, err)
		assert.Equal(t, "first part", string(buf))
		cancel()
		_, err = io.ReadAll(resp.Body)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
	})
	kt.mu.Lock()
	assert.Empty(t, kt.idle, "a cancelled request's connection was kept")
	kt.mu.Unlock()
	assert.EqualValues(t, 2, dials.Load())
}

// TestKeepAliveStreamingBody: a server-sent-events body is read as it
// comes (the server sends its second event only after the client has read
// the first); read to its end, its connection serves the next request.
func TestKeepAliveStreamingBody(t *testing.T) {
	readFirst := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Path == "/stream" {
			_, _ = io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-readFirst:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	kt, dials := countingTransport(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/stream", strings.NewReader("{}"))
	require.NoError(t, err)
	resp, err := kt.RoundTrip(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	sc := bufio.NewScanner(resp.Body)
	require.True(t, sc.Scan())
	assert.Equal(t, "data: one", sc.Text())
	close(readFirst)
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, []string{"", "data: [DONE]", ""}, rest)
	require.NoError(t, resp.Body.Close())
	got, err := post(t.Context(), kt, srv.URL+"/again", "{}")
	require.NoError(t, err)
	assert.Equal(t, "data: [DONE]\n\n", got)
	assert.EqualValues(t, 1, dials.Load(), "the streamed response's connection was not reused")
}

// TestKeepAliveBoundsTheResponse: a response larger than the transport's
// bound fails when read, and its connection is closed.
func TestKeepAliveBoundsTheResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 8192))
	}))
	defer srv.Close()
	kt, dials := countingTransport(t)
	kt.maxResponse = 4096
	_, err := post(t.Context(), kt, srv.URL, "{}")
	require.Error(t, err)
	assert.True(t, errors.Is(err, errResponseTooLarge), "got %v", err)
	kt.maxResponse = 1 << 20
	got, err := post(t.Context(), kt, srv.URL, "{}")
	require.NoError(t, err)
	assert.Len(t, got, 8192)
	assert.EqualValues(t, 2, dials.Load(), "the connection of the response that was too large was reused")
}

// TestKeepAliveBodyClosedEarly: a body closed before its end closes its
// connection instead of leaving unread bytes on it.
func TestKeepAliveBodyClosedEarly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "a long answer")
	}))
	defer srv.Close()
	kt, dials := countingTransport(t)
	for range 2 {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := kt.RoundTrip(req)
		require.NoError(t, err)
		buf := make([]byte, 2)
		_, err = io.ReadFull(resp.Body, buf)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	assert.EqualValues(t, 2, dials.Load())
	got, err := post(t.Context(), kt, srv.URL, "{}")
	require.NoError(t, err)
	assert.Equal(t, "a long answer", got)
	got, err = post(t.Context(), kt, srv.URL, "{}")
	require.NoError(t, err)
	assert.Equal(t, "a long answer", got)
	assert.EqualValues(t, 3, dials.Load(), "bodies read to their end share a connection")
}

// TestKeepAliveTLSInsideABubble: inside a bubble an https request is made
// by the keep-alive transport too (HTTP/1.1 over TLS), and its connection
// is reused; outside a bubble https goes to the other transport.
func TestKeepAliveTLSInsideABubble(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto+" "+r.RemoteAddr)
	}))
	defer srv.Close()
	kt, dials := countingTransport(t)
	kt.other = srv.Client().Transport
	kt.tlsConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	var answers []string
	synctest.Test(t, func(t *testing.T) {
		for range 3 {
			got, err := post(t.Context(), kt, srv.URL, "{}")
			require.NoError(t, err)
			answers = append(answers, got)
		}
	})
	require.Len(t, answers, 3)
	assert.True(t, strings.HasPrefix(answers[0], "HTTP/1.1 "), answers[0])
	assert.Equal(t, answers[0], answers[1])
	assert.Equal(t, answers[0], answers[2])
	assert.EqualValues(t, 1, dials.Load())
	got, err := post(t.Context(), kt, srv.URL, "{}")
	require.NoError(t, err)
	assert.NotEqual(t, answers[0], got, "outside the bubble the other transport makes the request")
	assert.EqualValues(t, 1, dials.Load())
}

// TestKeepAliveTLSCertificateCheckedInRealTime: inside a bubble the
// clock reads 2000, but a server's certificate is checked against the
// real time: one valid only since 2020 is accepted.
func TestKeepAliveTLSCertificateCheckedInRealTime(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	defer srv.Close()
	kt, _ := countingTransport(t)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	kt.tlsConfig = &tls.Config{RootCAs: roots}
	synctest.Test(t, func(t *testing.T) {
		got, err := post(t.Context(), kt, srv.URL, "{}")
		require.NoError(t, err)
		assert.Equal(t, "ok", got)
	})
}
