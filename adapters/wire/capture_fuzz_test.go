package wire_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// FuzzReadCapture feeds arbitrary bytes to ReadCapture, the parser of the
// wire captures that debugging tools and cassettes read back: no panic,
// every record it returns has a direction and a type, and Payload of each
// either works or says why.
func FuzzReadCapture(f *testing.F) {
	for _, s := range []string{
		`{"t_ms":1.5,"dir":"send","type":"text","data":{"event":"media"}}` + "\n" + `{"t_ms":2,"dir":"recv","type":"binary","data":"AAEC"}`,
		`{"t_ms":3,"dir":"note","type":"close","text":"bye"}`,
		`{"t_ms":4,"dir":"recv","type":"binary","data":"not base64"}`,
		`{"t_ms":4,"dir":"recv","type":"binary","data":5}`,
		`{"dir":"","type":""}`, `not json`, "\n\n", `{"t_ms":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := wire.ReadCapture(bytes.NewReader(data))
		if err != nil && err.Error() == "" {
			t.Fatal("an error with no message")
		}
		for _, r := range recs {
			if r.Dir == "" || r.Type == "" {
				t.Fatalf("a record without dir or type: %+v", r)
			}
			if _, err := r.Payload(); err != nil && err.Error() == "" {
				t.Fatal("a Payload error with no message")
			}
		}
	})
}

// FuzzCaptureRoundTrip writes arbitrary frames through a CaptureWriter
// that knows a secret and reads the capture back: it parses, each frame's
// Payload is the frame as sent with its secrets blanked (byte for byte
// otherwise), and the secret is nowhere in the file.
func FuzzCaptureRoundTrip(f *testing.F) {
	const secret = "fuzz-capture-secret-1234"
	for _, s := range []string{
		`{"type":"auth","token":"abc123456"}`, `{"echo":"` + secret + `"}`, "plain " + secret,
		`{"a":1}`, "multi\nline", "", `{"password":"x","n":[1,2]}`, "\xff\xfe",
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(secret), true)
	f.Fuzz(func(t *testing.T, frame []byte, binary bool) {
		if !binary && !utf8.Valid(frame) {
			return // a WebSocket text frame is UTF-8
		}
		var buf bytes.Buffer
		sc := scrub.New(secret)
		w := wire.NewCaptureWriter(&buf, func(string, ...any) {})
		w.SetScrubber(sc)
		typ := websocket.MessageText
		if binary {
			typ = websocket.MessageBinary
		}
		w.Frame("recv", typ, frame)
		w.Note("error", "dial ws://u:"+secret+"@h/x: "+string(frame))
		if bytes.Contains(buf.Bytes(), []byte(secret)) {
			t.Fatalf("the capture holds the secret:\n%s", buf.Bytes())
		}
		recs, err := wire.ReadCapture(bytes.NewReader(buf.Bytes()))
		if err != nil || len(recs) != 2 {
			t.Fatalf("ReadCapture: %d records, %v\n%s", len(recs), err, buf.Bytes())
		}
		got, err := recs[0].Payload()
		if err != nil {
			t.Fatal(err)
		}
		want := sc.JSON(frame)
		if binary {
			want = sc.Binary(frame)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Payload = %q, want %q", got, want)
		}
	})
}
