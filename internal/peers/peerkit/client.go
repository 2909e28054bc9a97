package peerkit

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Client is a raw WebSocket client for testing a peer itself: it sends
// verbatim text messages and reads the peer's JSON messages by type.
type Client struct {
	// TB is the test the client reports to.
	TB testing.TB
	// WS is the connection, closed when the test ends.
	WS *websocket.Conn
}

// Dial connects to url with header, accepting messages of up to 1 MiB,
// and closes the connection when the test ends. It fails the test if the
// handshake fails.
func Dial(tb testing.TB, url string, header http.Header) *Client {
	tb.Helper()
	ws, _, err := websocket.Dial(tb.Context(), url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		tb.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	tb.Cleanup(func() { ws.CloseNow() })
	return &Client{tb, ws}
}

// Send writes m as one text message, failing the test if it cannot.
func (c *Client) Send(m string) {
	c.TB.Helper()
	if err := c.WS.Write(c.TB.Context(), websocket.MessageText, []byte(m)); err != nil {
		c.TB.Fatal(err)
	}
}

// Expect reads messages until one whose "type" is typ, and returns it. It
// fails the test on a message that is not JSON, or if none comes within
// 5 s.
func (c *Client) Expect(typ string) map[string]any {
	c.TB.Helper()
	ctx, cancel := context.WithTimeout(c.TB.Context(), 5*time.Second)
	defer cancel()
	for {
		_, data, err := c.WS.Read(ctx)
		if err != nil {
			c.TB.Fatalf("waiting for %s: %v", typ, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			c.TB.Fatalf("server sent non-JSON %q", data)
		}
		if m["type"] == typ {
			return m
		}
	}
}
