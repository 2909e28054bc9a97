package pipecat_test

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// rawWS is the server end of a WebSocket (RFC 6455) for a benchmark's
// minimal peer, spoken on the hijacked connection itself rather than
// through coder/websocket. coder/websocket's server side costs about a
// microsecond a message (two channel-based locks, the header read byte by
// byte through bufio, the payload copied out and unmasked), and the
// benchmark turn is 80 messages: a quarter of the turn's CPU was the
// peer's reading. rawWS reads the frames in place from a 64 KiB buffer and
// writes a burst of messages in one system call.
//
// It takes what a WebSocket client sends (masked frames: data, ping,
// close) and answers pings and the closing handshake; anything it does not
// take (a fragmented or compressed message, an unmasked frame, a frame
// larger than its buffer) ends the connection with an error, which fails
// the benchmark rather than skewing it. Not safe for concurrent use: one
// goroutine reads and writes.
type rawWS struct {
	nc  net.Conn
	r   *bufio.Reader
	out []byte
}

// rawReadBuffer is rawWS's read buffer, and the largest frame it takes.
const rawReadBuffer = 64 << 10

// acceptRaw completes the WebSocket handshake of r (no subprotocol, no
// extension) and takes over its connection.
func acceptRaw(w http.ResponseWriter, r *http.Request) (*rawWS, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
		http.Error(w, "a WebSocket only", http.StatusBadRequest)
		return nil, errors.New("not a WebSocket handshake")
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, fmt.Errorf("%T is not an http.Hijacker", w)
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
	if _, err := nc.Write([]byte(resp)); err != nil {
		nc.Close()
		return nil, err
	}
	// What net/http had read past the request comes first.
	held, _ := brw.Reader.Peek(brw.Reader.Buffered())
	rd := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(held)), nc), rawReadBuffer)
	return &rawWS{nc: nc, r: rd}, nil
}

// Close closes the connection.
func (ws *rawWS) Close() error { return ws.nc.Close() }

// opcodes (RFC 6455 section 5.2).
const (
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xA
)

// ReadLoop calls f with every data message (unmasked, valid until f
// returns) until the client closes the connection (nil) or something goes
// wrong (the error). It answers pings, and a close with a close. A binary
// message whose first byte peek (if not nil) accepts is one f only counts:
// f gets that byte alone, and the rest is not unmasked.
func (ws *rawWS) ReadLoop(peek func(first byte) bool, f func(op byte, data []byte)) error {
	for {
		h, err := ws.r.Peek(2)
		if err != nil {
			return err
		}
		fin, rsv, op := h[0]&0x80 != 0, h[0]&0x70, h[0]&0x0F
		masked, n := h[1]&0x80 != 0, int(h[1]&0x7F)
		if !fin || rsv != 0 || !masked {
			return fmt.Errorf("a frame rawWS does not take (header %x): fragmented, compressed or unmasked", h)
		}
		head := 2
		switch n {
		case 126:
			h, err = ws.r.Peek(4)
			n, head = int(binary.BigEndian.Uint16(h[2:])), 4
		case 127:
			h, err = ws.r.Peek(10)
			n, head = int(min(binary.BigEndian.Uint64(h[2:]), rawReadBuffer)), 10
		}
		if err != nil {
			return err
		}
		if head+4+n > rawReadBuffer {
			return fmt.Errorf("a frame of %d bytes; rawWS takes up to %d", n, rawReadBuffer-head-4)
		}
		frame, err := ws.r.Peek(head + 4 + n)
		if err != nil {
			return err
		}
		mask, data := frame[head:head+4], frame[head+4:]
		if op == opBinary && peek != nil && len(data) > 0 && peek(data[0]^mask[0]) {
			// A message f does not look into: only its first byte is
			// unmasked (for peek), the rest is left as it came.
			data = data[:1:1]
			data[0] ^= mask[0]
		} else {
			unmask(data, mask)
		}
		switch op {
		case opText, opBinary:
			f(op, data)
		case opPing:
			if err := ws.Write(opPong, data); err != nil {
				return err
			}
		case opClose:
			ws.Write(opClose, data) // the same status code back
			return nil
		case opPong:
		default:
			return fmt.Errorf("a frame of opcode %d", op)
		}
		if _, err := ws.r.Discard(len(frame)); err != nil {
			return err
		}
	}
}

// unmask XORs data with the 4-byte mask, eight bytes at a time.
func unmask(data, mask []byte) {
	m4 := binary.LittleEndian.Uint32(mask)
	m8 := uint64(m4) | uint64(m4)<<32
	i := 0
	for ; i+8 <= len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], binary.LittleEndian.Uint64(data[i:])^m8)
	}
	for ; i < len(data); i++ {
		data[i] ^= mask[i&3]
	}
}

// Write sends one message of opcode op.
func (ws *rawWS) Write(op byte, data []byte) error {
	ws.Append(op, data)
	return ws.Flush()
}

// Append adds a message of opcode op to what Flush sends.
func (ws *rawWS) Append(op byte, data []byte) {
	ws.out = append(ws.out, 0x80|op)
	switch n := len(data); {
	case n < 126:
		ws.out = append(ws.out, byte(n))
	case n <= 0xFFFF:
		ws.out = append(ws.out, 126)
		ws.out = binary.BigEndian.AppendUint16(ws.out, uint16(n))
	default:
		ws.out = append(ws.out, 127)
		ws.out = binary.BigEndian.AppendUint64(ws.out, uint64(n))
	}
	ws.out = append(ws.out, data...)
}

// Flush writes the messages appended since the last Flush in one write.
func (ws *rawWS) Flush() error {
	_, err := ws.nc.Write(ws.out)
	ws.out = ws.out[:0]
	return err
}
