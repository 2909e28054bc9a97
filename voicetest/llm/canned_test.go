package llm

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// cannedCompletion is the body the fakeopenai double answers
// loopbackRequest with (its bytes as sent), so that the canned server's
// client decodes the same answer.
const cannedCompletion = `{"choices":[{"finish_reason":"stop","index":0,"logprobs":null,"message":{"content":"Here is answer one.","refusal":null,"role":"assistant"}}],"created":1700000000,"id":"chatcmpl-fake-1","model":"fakeopenai-double","object":"chat.completion","usage":{"completion_tokens":4,"prompt_tokens":4,"total_tokens":8}}`

// cannedServer is a measuring device, not a test double of OpenAI: an
// HTTP/1.1 server on loopback that answers every request, whatever it
// asks, with the same prepared bytes (a 200 with cannedCompletion). It
// reads a request's header lines and skips its body by Content-Length,
// with no net/http, no JSON and no allocation per request, so that a
// benchmark against it measures the client's cost (the framework's own)
// and the loopback round trip, and next to nothing of the server's.
type cannedServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// startCannedServer starts a cannedServer; it stops when tb ends.
func startCannedServer(tb testing.TB) *cannedServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	s := &cannedServer{ln: ln, conns: map[net.Conn]bool{}}
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(cannedCompletion)) + "\r\n\r\n" + cannedCompletion)
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Go(func() {
				s.serve(c, answer)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			})
		}
	})
	tb.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// baseURL is the server's base URL, as a Client's WithBaseURL takes it.
func (s *cannedServer) baseURL() string { return "http://" + s.ln.Addr().String() + "/v1/" }

// serve answers the requests on c until it fails or a request is not
// HTTP/1.1 as expected.
func (s *cannedServer) serve(c net.Conn, answer []byte) {
	br := bufio.NewReaderSize(c, 8192)
	contentLength := []byte("content-length:")
	for {
		length := int64(-1)
		for first := true; ; first = false {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 { // the blank line ending the header
				if first {
					return
				}
				break
			}
			if len(line) > len(contentLength) && bytes.EqualFold(line[:len(contentLength)], contentLength) {
				length = 0
				for _, d := range bytes.TrimSpace(line[len(contentLength):]) {
					if d < '0' || d > '9' || length > 1<<30 {
						return
					}
					length = length*10 + int64(d-'0')
				}
			}
		}
		if length < 0 { // chunked or absent: not what a Client sends
			return
		}
		if _, err := br.Discard(int(length)); err != nil {
			return
		}
		if _, err := c.Write(answer); err != nil {
			return
		}
	}
}
