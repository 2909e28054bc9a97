package wscodec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
)

// Issue 14, item 7: failures read well.

// A binary frame with an odd number of bytes is described, not dumped.
func TestOddBinaryFrameErrorHasNoBinary(t *testing.T) {
	bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Fault: wsbot.OddPCM})
	conn := dialWS(t, wscodec.New(bot.URL, wscodec.RawPCM(24000)), adaptertest.Session(t, 24000))
	_, err := conn.Recv(t.Context())
	var fe *wire.FrameError
	if !errors.As(err, &fe) {
		t.Fatalf("Recv: %v, want a FrameError", err)
	}
	msg := err.Error()
	if strings.Contains(msg, `\x01`) || strings.ContainsRune(msg, 1) || !strings.Contains(msg, "<3 bytes of binary: 01 02 03>") {
		t.Errorf("error %q: want the frame described as 3 bytes of binary, no raw bytes", msg)
	}
}
