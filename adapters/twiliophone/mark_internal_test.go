package twiliophone

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMarkMessageMatchesMarshal wants markMessage's bytes to be exactly
// json.Marshal's of the map EndUtterance used to send, for ordinary and
// odd stream SIDs and names (quotes, HTML characters, control and
// non-ASCII characters, which json.Marshal escapes).
func TestMarkMessageMatchesMarshal(t *testing.T) {
	for _, sid := range []string{"MZ00000000000000000000000000000001", "", `a"b\c`, "<&>", "\x01\u2028é"} {
		for _, name := range []string{"utt-1", "utt-123456", "", `"<x>"`} {
			want, err := json.Marshal(map[string]any{"event": "mark", "streamSid": sid, "mark": map[string]string{"name": name}})
			if err != nil {
				t.Fatal(err)
			}
			if got := markMessage(sid, name); !bytes.Equal(got, want) {
				t.Errorf("markMessage(%q, %q) = %s, json.Marshal gives %s", sid, name, got, want)
			}
		}
	}
}
