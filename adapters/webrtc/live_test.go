package webrtc_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/webrtc"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLiveWebRTC calls a real bot over WebRTC, to show how a suite points
// at one: webrtc.New(offerURL), the HTTP endpoint that takes the SDP offer
// (Pipecat's SmallWebRTCTransport: its /api/offer), a caller spoken by
// flite, the bot's greeting and one answer. It is skipped unless
// WEBRTC_BOT_URL names that endpoint; no test needs the internet. Nothing
// is cached or compared with goldens.
func TestLiveWebRTC(t *testing.T) {
	url := os.Getenv("WEBRTC_BOT_URL")
	if url == "" {
		t.Skip("live test against a WebRTC bot: set WEBRTC_BOT_URL to its SDP offer endpoint (Pipecat's SmallWebRTC: http://host:7860/api/offer) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	adaptertest.Live(t, webrtc.New(url), speech.Flite(), 0, true)
}
