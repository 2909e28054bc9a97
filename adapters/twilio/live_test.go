package twilio_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLive calls a real bot that serves Twilio Media Streams, to show how
// a suite points at one: twilio.New(url) plays Twilio's side of a phone
// call (voicetest is the caller and the phone network; Twilio itself is
// not involved, so no Twilio account is needed), with a caller spoken by
// flite at the phone's 8 kHz, the bot's greeting and one answer. It is
// skipped unless TWILIO_BOT_URL names the bot's WebSocket (e.g.
// "wss://bot.example.com/media"); no test needs the internet. Nothing is
// cached or compared with goldens.
func TestLive(t *testing.T) {
	url := os.Getenv("TWILIO_BOT_URL")
	if url == "" {
		t.Skip("live test against a Twilio Media Streams bot: set TWILIO_BOT_URL to the bot's WebSocket (wss://…/media) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := twilio.New(url)
	adaptertest.Live(t, agent, speech.Flite(), 8000, true)
}
