package wire

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// A BatchListener's connection passes writes through until StartBatching;
// after it, a burst of small writes reaches the peer whole and in order,
// and closing the connection writes what was buffered first. A
// connection of another listener is left alone (StartBatching returns
// nil).
func TestBatchListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bl := BatchListener(ln)
	defer bl.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	conn, err := bl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := conn.(*batchConn); !ok {
		t.Fatalf("accepted a %T, want a *batchConn", conn)
	}
	var want []byte
	write := func(p []byte) {
		t.Helper()
		if _, err := conn.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n")) // before StartBatching: through
	flusher := StartBatching(conn, 5*time.Second, nil)
	if flusher == nil {
		t.Fatal("StartBatching returned no flusher for a BatchListener's connection")
	}
	done := make(chan struct{})
	go func() { defer close(done); flusher() }()
	for i := range 200 {
		write(bytes.Repeat([]byte{byte(i)}, 160))
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(want))
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	if StartBatching(c1, time.Second, nil) != nil {
		t.Error("StartBatching returned a flusher for a plain connection")
	}
}
