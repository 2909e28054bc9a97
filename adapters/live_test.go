package adapters_test

import (
	"cmp"
	"net/http"
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// The live tests call the real services, each gated on the service's
// credentials or URL, with a caller spoken by flite (speech.Flite), and
// skip with the variables to set without them. No test needs the internet
// or a key; run one with e.g. `TWILIO_BOT_URL=wss://… go test ./adapters
// -run TestLiveTwilio`. These five live here, over the wire adapters that
// had one first; the others live in their protocol's package, next to
// its tests: TestLiveGemini in adapters/gemini (the Gemini adapter links
// google.golang.org/genai, whose ~120 MB of objects this test binary
// would otherwise link again at every `go test ./...`), TestLiveVapi,
// TestLiveWebRTC, TestLiveLiveKit and TestLiveWebSocket in adapters/vapi,
// adapters/webrtc, adapters/livekit and adapters/wscodec (webrtc and
// livekit link cgo Opus, which this binary does not), and TestRealTwilio
// (a real phone call) in adapters/twiliophone.

// TestLiveTwilio calls a real bot that serves Twilio Media Streams, to
// show how a suite points at one: twilio.New(url) plays Twilio's side of a
// phone call (voicetest is the caller and the phone network; Twilio itself
// is not involved, so no Twilio account is needed), with a caller spoken
// by flite at the phone's 8 kHz, the bot's greeting and one answer. It is
// skipped unless TWILIO_BOT_URL names the bot's WebSocket (e.g.
// "wss://bot.example.com/media"); no test needs the internet. Nothing is
// cached or compared with goldens.
func TestLiveTwilio(t *testing.T) {
	url := os.Getenv("TWILIO_BOT_URL")
	if url == "" {
		t.Skip("live test against a Twilio Media Streams bot: set TWILIO_BOT_URL to the bot's WebSocket (wss://…/media) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := twilio.New(url)
	adaptertest.Live(t, agent, speech.Flite(), 8000, true)
}

// TestLiveRealtime runs a short scenario against OpenAI's own Realtime
// API, to show how a suite points at the real service: realtime.New(model)
// with the key from OPENAI_API_KEY, a caller spoken by flite, and a spoken
// answer. It is skipped without OPENAI_API_KEY (no test needs the internet
// or a key); VOICETEST_REALTIME_MODEL picks the model (default
// realtime.DefaultModel). Nothing is cached or compared with goldens: a
// live model answers differently each time.
func TestLiveRealtime(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		t.Skip("live test against the OpenAI Realtime API: set OPENAI_API_KEY (and optionally VOICETEST_REALTIME_MODEL) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := realtime.New(cmp.Or(os.Getenv("VOICETEST_REALTIME_MODEL"), realtime.DefaultModel))
	agent.Instructions = "You answer phone calls for a restaurant. Answer in one short sentence."
	adaptertest.Live(t, agent, speech.Flite(), 0, false)
}

// TestLiveElevenLabs runs a short scenario against a real ElevenLabs
// Conversational AI agent, to show how a suite points at one:
// elevenlabs.New(agentID), with the key from ELEVENLABS_API_KEY for a
// private agent, a caller spoken by flite, the agent's first message and
// one answer. It is skipped unless ELEVENLABS_AGENT_ID is set
// (ELEVENLABS_API_KEY too for a private agent); no test needs the internet
// or a key. Nothing is cached or compared with goldens.
func TestLiveElevenLabs(t *testing.T) {
	id := os.Getenv("ELEVENLABS_AGENT_ID")
	if id == "" {
		t.Skip("live test against ElevenLabs Conversational AI: set ELEVENLABS_AGENT_ID (and ELEVENLABS_API_KEY for a private agent) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := elevenlabs.New(id)
	adaptertest.Live(t, agent, speech.Flite(), 0, true)
}

// TestLiveLayerCode runs a short scenario against a real LayerCode agent,
// to show how a suite points at one: layercode.New(authorizeURL, agentID),
// where the authorize URL is your backend's endpoint that calls
// LayerCode's authorize_session with your LayerCode API key, a caller
// spoken by flite, the agent's greeting and one answer. It is skipped
// unless LAYERCODE_AUTHORIZE_URL and LAYERCODE_AGENT_ID are set;
// LAYERCODE_AUTHORIZE_TOKEN, when set, is sent to the backend as a bearer
// token. No test needs the internet or a key. Nothing is cached or
// compared with goldens.
func TestLiveLayerCode(t *testing.T) {
	authURL, id := os.Getenv("LAYERCODE_AUTHORIZE_URL"), os.Getenv("LAYERCODE_AGENT_ID")
	if authURL == "" || id == "" {
		t.Skip("live test against LayerCode: set LAYERCODE_AUTHORIZE_URL (your backend's authorize endpoint) and LAYERCODE_AGENT_ID (and LAYERCODE_AUTHORIZE_TOKEN if the backend wants one) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := layercode.New(authURL, id)
	if tok := os.Getenv("LAYERCODE_AUTHORIZE_TOKEN"); tok != "" {
		agent.AuthorizeHeader = http.Header{"Authorization": {"Bearer " + tok}}
	}
	adaptertest.Live(t, agent, speech.Flite(), 0, true)
}

// TestLivePipecat calls a real Pipecat bot over its WebSocket transport,
// to show how a suite points at one: pipecat.New(url, serializer), a
// caller spoken by flite, the bot's greeting and one answer. It is skipped
// unless PIPECAT_BOT_URL names the bot's WebSocket; PIPECAT_SERIALIZER
// "twilio" picks the Twilio serializer (default protobuf). No test needs
// the internet. Nothing is cached or compared with goldens.
func TestLivePipecat(t *testing.T) {
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
