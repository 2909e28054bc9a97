package wscodec_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLiveWebSocket calls your own agent over a plain WebSocket, to show
// how a suite points at one: wscodec.New(url, codec), with the JSON codec
// (JSONBase64: audio as base64 in JSON messages, see its doc) unless
// WS_AGENT_RAW_RATE names the sample rate of a raw PCM16 agent (RawPCM),
// a caller spoken by flite, the agent's greeting and one answer. It is
// skipped unless WS_AGENT_URL names the agent's WebSocket; no test needs
// the internet. Nothing is cached or compared with goldens.
func TestLiveWebSocket(t *testing.T) {
	url := os.Getenv("WS_AGENT_URL")
	if url == "" {
		t.Skip("live test against your WebSocket agent: set WS_AGENT_URL to its WebSocket (and WS_AGENT_RAW_RATE=16000, say, for raw PCM16 instead of JSON) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	codec := wscodec.JSONBase64(wscodec.JSONOptions{})
	if s := os.Getenv("WS_AGENT_RAW_RATE"); s != "" {
		rate, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("WS_AGENT_RAW_RATE=%q: want a sample rate in Hz, such as 16000", s)
		}
		codec = wscodec.RawPCM(rate)
	}
	adaptertest.Live(t, wscodec.New(url, codec), speech.Flite(), 0, true)
}
