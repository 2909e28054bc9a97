package wire

import (
	"net"
	"time"
)

// BatchListener returns a listener whose connections can batch their
// writes as those of Dial do (see StartBatching), for an adapter that is
// the server of its WebSocket (it accepts the agent's, or Twilio's,
// connection). Until StartBatching, a connection's writes pass through
// unchanged: an HTTP exchange on it (a webhook, the WebSocket handshake)
// is written as a plain connection's.
func BatchListener(ln net.Listener) net.Listener { return batchListener{ln} }

// batchListener wraps each accepted connection in a batchConn.
type batchListener struct{ net.Listener }

// Accept wraps the next connection.
func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newBatchConn(c), nil
}

// StartBatching makes conn, a connection a BatchListener accepted, batch
// its writes from now on: a burst of frames written faster than the
// socket takes them goes to the kernel in few system calls, while a lone
// frame is written at once by its writer; the bytes and their order are
// unchanged. A kernel write that has not finished within timeout closes
// the connection at once (what is buffered is dropped) and then runs
// timedOut, if set. StartBatching returns the flusher, which the caller
// must run on a goroutine (it ends once conn is closed; closing conn
// writes what is buffered first), or nil when conn is not a
// BatchListener's (it then passes writes through as before).
func StartBatching(conn net.Conn, timeout time.Duration, timedOut func()) (flusher func()) {
	b, ok := conn.(*batchConn)
	if !ok {
		return nil
	}
	return b.start(timeout, func() {
		b.abort()
		if timedOut != nil {
			timedOut()
		}
	})
}
