package pipecat_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLive calls a real Pipecat bot over its WebSocket transport, to show
// how a suite points at one: pipecat.New(url, serializer), a caller spoken
// by flite, the bot's greeting and one answer. It is skipped unless
// PIPECAT_BOT_URL names the bot's WebSocket; PIPECAT_SERIALIZER "twilio"
// picks the Twilio serializer (default protobuf). No test needs the
// internet. Nothing is cached or compared with goldens.
func TestLive(t *testing.T) {
	url := os.Getenv("PIPECAT_BOT_URL")
	if url == "" {
		t.Skip("live test against a Pipecat bot: set PIPECAT_BOT_URL to its WebSocket (and PIPECAT_SERIALIZER=twilio for the Twilio serializer) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	ser := pipecat.Protobuf
	if os.Getenv("PIPECAT_SERIALIZER") == "twilio" {
		ser = pipecat.Twilio
	}
	agent := pipecat.New(url, ser)
	adaptertest.Live(t, agent, speech.Flite(), 0, true)
}
