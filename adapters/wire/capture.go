package wire

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// CaptureRecord is one line of a wire capture, the artifact a WebSocket
// adapter writes to voicetest.Session.Capture: every frame sent and received,
// in order, with its time relative to the start of Connect, plus notes on the
// connection's life (open, close, errors).
//
// The capture is a JSON-lines file; each line is one record:
//
//	{"t_ms":12.345,"dir":"send","type":"text","data":{"event":"media",…}}
//	{"t_ms":13.002,"dir":"recv","type":"binary","data":"AAEC…"}
//	{"t_ms":14.100,"dir":"recv","type":"text","text":"not json"}
//	{"t_ms":20.000,"dir":"note","type":"close","text":"voicetest: twilio transport closed"}
//
// A text frame that is JSON on one line is kept verbatim in data, so the
// capture shows it as the agent sent it; any other text frame is kept as a
// JSON string in text. A binary frame is base64 in data. Payload gives a
// frame's bytes back exactly.
type CaptureRecord struct {
	// TMs is the time in milliseconds since Connect started.
	TMs float64 `json:"t_ms"`
	// Dir is "send" (voicetest to agent), "recv" (agent to voicetest) or
	// "note" (an event of the connection itself).
	Dir string `json:"dir"`
	// Type is "text" or "binary" for frames; "open", "close", "closed" or
	// "error" for notes.
	Type string `json:"type"`
	// Data is a JSON text frame verbatim, or a binary frame as a base64
	// JSON string.
	Data json.RawMessage `json:"data,omitempty"`
	// Text is a text frame that is not one-line JSON, or a note's message.
	Text string `json:"text,omitempty"`
}

// Payload returns the frame's bytes exactly as they crossed the wire (for a
// note, its message).
func (r CaptureRecord) Payload() ([]byte, error) {
	switch {
	case r.Type == "binary":
		var s string
		if err := json.Unmarshal(r.Data, &s); err != nil {
			return nil, fmt.Errorf("adapters: capture record at %v ms: binary data is not a base64 string: %w", r.TMs, err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("adapters: capture record at %v ms: %w", r.TMs, err)
		}
		return b, nil
	case len(r.Data) > 0:
		return []byte(r.Data), nil
	default:
		return []byte(r.Text), nil
	}
}

// ReadCapture parses a capture written by a WebSocket adapter. A line that is
// not a capture record is an error naming the line.
func ReadCapture(r io.Reader) ([]CaptureRecord, error) {
	var out []CaptureRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec CaptureRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return out, fmt.Errorf("adapters: capture line %d: %w", n, err)
		}
		if rec.Dir == "" || rec.Type == "" {
			return out, fmt.Errorf("adapters: capture line %d: missing dir or type; is this a voicetest wire capture?", n)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("adapters: reading capture: %w", err)
	}
	return out, nil
}

// CaptureWriter writes CaptureRecords to a Session.Capture. It is safe for
// concurrent use; a nil *CaptureWriter, or one without a writer, does
// nothing. A write error is logged once and ends the capture (the run goes
// on: a capture is a debugging aid, not part of the test).
//
// Every record is scrubbed before it is written (see SetScrubber): URL
// userinfo passwords, every secret the scrubber knows and, in text frames
// and notes, the credential members of JSON (by name) and what text shows
// after "Bearer " or "Basic " and in credential parameters read
// "REDACTED" (binary frames are scrubbed with scrub.Scrubber.Binary), so
// Payload returns a frame's bytes as they crossed the wire except for its
// secrets.
type CaptureWriter struct {
	mu     sync.Mutex
	scrub  atomic.Pointer[scrub.Scrubber]
	w      io.Writer
	start  time.Time
	logf   func(string, ...any)
	buf    []byte
	failed bool
}

// NewCaptureWriter returns a CaptureWriter that writes to w (nil for
// none), timing records from now, and logs a write error with logf.
func NewCaptureWriter(w io.Writer, logf func(string, ...any)) *CaptureWriter {
	return &CaptureWriter{w: w, start: time.Now(), logf: logf}
}

// SetScrubber sets the scrubber of the records; without one they are
// scrubbed by position only (URL passwords, JSON members named like
// credentials).
func (c *CaptureWriter) SetScrubber(sc *scrub.Scrubber) {
	if c != nil {
		c.scrub.Store(sc)
	}
}

// Frame records one WebSocket frame sent ("send") or received ("recv").
func (c *CaptureWriter) Frame(dir string, typ websocket.MessageType, data []byte) {
	if c == nil || c.w == nil {
		return
	}
	sc := c.scrub.Load()
	if typ == websocket.MessageBinary {
		data = sc.Binary(data)
	} else {
		data = sc.JSON(data)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Timed under the lock, so the lines of a capture are in time order
	// even when the send and receive sides record at once.
	t := time.Since(c.start)
	kind := "text"
	if typ == websocket.MessageBinary {
		kind = "binary"
	}
	b := c.head(t, dir, kind)
	switch {
	case typ == websocket.MessageBinary:
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, '"')
	case oneLineJSON(data):
		b = append(b, `,"data":`...)
		b = append(b, data...)
	default:
		b = append(b, `,"text":`...)
		b = appendJSONString(b, string(data))
	}
	c.flush(append(b, '}', '\n'))
}

// Note records an event of the connection itself: kind is "open",
// "close", "closed", "error" or an adapter's own (LayerCode's
// "authorize").
func (c *CaptureWriter) Note(kind, msg string) {
	if c == nil || c.w == nil {
		return
	}
	msg = c.scrub.Load().String(msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	// Timed under the lock, so the lines of a capture are in time order
	// even when the send and receive sides record at once.
	t := time.Since(c.start)
	b := c.head(t, "note", kind)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, msg)
	c.flush(append(b, '}', '\n'))
}

// head starts a record in c.buf. Call with c.mu held.
func (c *CaptureWriter) head(t time.Duration, dir, typ string) []byte {
	b := append(c.buf[:0], `{"t_ms":`...)
	b = strconv.AppendFloat(b, float64(t.Microseconds())/1000, 'f', 3, 64)
	b = append(b, `,"dir":"`...)
	b = append(b, dir...)
	b = append(b, `","type":"`...)
	b = append(b, typ...)
	return append(b, '"')
}

// flush writes one line. Call with c.mu held.
func (c *CaptureWriter) flush(b []byte) {
	c.buf = b
	if c.failed {
		return
	}
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
		c.logf("adapters: wire capture stopped: %v", err)
	}
}

// oneLineJSON reports whether data is valid JSON with no line breaks and
// no surrounding space, so it can stand verbatim inside a JSON line and
// come back byte for byte (a parser drops the space around a value).
func oneLineJSON(data []byte) bool {
	return len(data) > 0 && !bytes.ContainsAny(data, "\r\n") && len(bytes.TrimSpace(data)) == len(data) && json.Valid(data)
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes
// U+FFFD, as WebSocket text frames must be UTF-8 anyway).
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(b, q...)
}
