package wire

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatchBytes bounds what a batchConn holds of the frames written to it
// and not yet handed to the kernel (beyond one frame larger than it, which
// is taken alone). A socket's own buffer holds more, so the bound costs
// nothing in throughput; it only keeps a stalled agent from piling up
// frames in memory: past it a write waits for the flusher, bounded by
// WSOptions.WriteTimeout.
const maxBatchBytes = 64 << 10

// burstGap is how soon after the previous write a write counts as part of
// a burst, and is batched; a later one (a lone frame: a text message,
// audio paced in real time) is written by its caller at once, as a plain
// connection would, which spares the hand-off to the flusher goroutine
// (waking it costs more than the system call it saves).
const burstGap = 100 * time.Microsecond

// batchConn is the network connection under a Conn's WebSocket. Until
// start it passes writes through (the HTTP handshake). After start a
// write copies its bytes into a bounded buffer and returns, and one
// flusher goroutine hands what has accumulated to the kernel in one
// system call: a burst of small frames sent faster than the socket takes
// them (a Fast-paced utterance is thirty 20 ms frames back to back) costs
// a few writes instead of one each, while a lone frame (one that comes
// burstGap or more after the previous write, with nothing buffered) is
// written by its caller at once. The bytes and their order are exactly
// what was written.
//
// A flusher write that has not finished within the Conn's WriteTimeout
// kills the connection (the agent stopped reading), as a blocked write
// did before; a write error is returned by every later write. Close
// writes what is buffered first (a closing handshake's last frame), so
// that nothing written before it is lost; abort drops it.
type batchConn struct {
	net.Conn

	mu      sync.Mutex
	async   bool      // start was called: writes go through the flusher
	closing bool      // Close was called: the flusher ends once the buffer is empty
	buf     []byte    // bytes written and not yet taken by the flusher
	err     error     // why writes fail from now on
	busy    bool      // a kernel write is under way (the flusher's or a lone write's)
	last    time.Time // when the previous write came

	kick chan struct{} // capacity 1: buf has bytes, or closing
	room chan struct{} // capacity 1: the flusher took buf
	dead chan struct{} // closed by abort and Close: stop waiting
	done chan struct{} // closed when the flusher ends

	deadOnce sync.Once
	closed   atomic.Bool // the underlying connection was closed

	timeout  time.Duration
	writing  atomic.Bool // the flusher is in a kernel write
	timer    *time.Timer
	timedOut func() // runs when a flusher write took longer than timeout
}

// newBatchConn wraps conn; it passes writes through until start.
func newBatchConn(conn net.Conn) *batchConn {
	return &batchConn{
		Conn: conn,
		kick: make(chan struct{}, 1),
		room: make(chan struct{}, 1),
		dead: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// start makes writes go through the flusher, whose writes are bounded by
// timeout (timedOut runs when one is not done in time). It returns the
// flusher, for the caller to run on a goroutine it waits for.
func (b *batchConn) start(timeout time.Duration, timedOut func()) (flusher func()) {
	b.timeout, b.timedOut = timeout, timedOut
	b.timer = time.AfterFunc(time.Hour, b.writeTimedOut)
	b.timer.Stop()
	b.mu.Lock()
	b.async = true
	b.mu.Unlock()
	return b.flush
}

// Write queues p for the flusher (after start), waiting while the buffer
// is full.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	if !b.async {
		b.mu.Unlock()
		return b.Conn.Write(p)
	}
	for b.err == nil && !b.closing && len(b.buf) > 0 && len(b.buf)+len(p) > maxBatchBytes {
		b.mu.Unlock()
		select {
		case <-b.room:
		case <-b.dead:
		}
		b.mu.Lock()
	}
	switch {
	case b.err != nil:
		err := b.err
		b.mu.Unlock()
		return 0, err
	case b.closing:
		b.mu.Unlock()
		return 0, net.ErrClosed
	}
	now := time.Now()
	lone := now.Sub(b.last) >= burstGap
	b.last = now
	if lone && !b.busy && len(b.buf) == 0 {
		b.busy = true
		b.mu.Unlock()
		err := b.kernelWrite(p)
		b.mu.Lock()
		b.busy = false
		more := len(b.buf) > 0 || b.closing
		b.mu.Unlock()
		if err != nil {
			b.fail(err)
			return 0, err
		}
		if more {
			b.kickFlusher()
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	b.mu.Unlock()
	b.kickFlusher()
	return len(p), nil
}

// kickFlusher tells the flusher there is something to do.
func (b *batchConn) kickFlusher() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// kernelWrite writes p to the connection, bounded by the write timeout.
// One runs at a time (busy).
func (b *batchConn) kernelWrite(p []byte) error {
	b.writing.Store(true)
	b.timer.Reset(b.timeout)
	_, err := b.Conn.Write(p)
	b.writing.Store(false)
	b.timer.Stop()
	return err
}

// flush hands the buffered bytes to the kernel until the connection is
// closed or a write fails.
func (b *batchConn) flush() {
	defer close(b.done)
	var out []byte
	for {
		select {
		case <-b.kick:
		case <-b.dead:
			return
		}
		b.mu.Lock()
		if b.busy {
			b.mu.Unlock()
			continue // a lone write is under way; its writer kicks again
		}
		out, b.buf = b.buf, out[:0]
		closing := b.closing
		b.busy = len(out) > 0
		b.mu.Unlock()
		select {
		case b.room <- struct{}{}:
		default:
		}
		if len(out) > 0 {
			err := b.kernelWrite(out)
			b.mu.Lock()
			b.busy = false
			b.mu.Unlock()
			if err != nil {
				b.fail(err)
				return
			}
			if cap(out) > maxBatchBytes {
				out = nil // do not hold on to one huge frame's memory
			}
		}
		if closing {
			b.mu.Lock()
			empty := len(b.buf) == 0
			b.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// fail makes every later write return err and wakes the writers waiting
// for room.
func (b *batchConn) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.buf = nil
	b.mu.Unlock()
	b.deadOnce.Do(func() { close(b.dead) })
}

// writeTimedOut runs when a flusher write has not finished in time.
func (b *batchConn) writeTimedOut() {
	if b.writing.Load() && b.timedOut != nil {
		b.timedOut()
	}
}

// abort closes the connection at once, dropping what is buffered.
func (b *batchConn) abort() error {
	b.fail(net.ErrClosed)
	return b.closeConn()
}

// Close writes what is buffered (bounded by the flusher's write timeout),
// then closes the connection.
func (b *batchConn) Close() error {
	b.mu.Lock()
	wait := b.async && !b.closing
	b.closing = true
	b.mu.Unlock()
	if wait {
		b.kickFlusher()
		<-b.done
	}
	b.fail(net.ErrClosed)
	return b.closeConn()
}

// closeConn closes the underlying connection once.
func (b *batchConn) closeConn() error {
	if b.closed.Swap(true) {
		return nil
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.Conn.Close()
}
