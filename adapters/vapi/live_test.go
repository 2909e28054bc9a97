package vapi_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLiveVapi runs a short scenario against a real Vapi assistant, to
// show how a suite points at one: vapi.New(apiKey, assistantID) with the
// account's private key, a caller spoken by flite, the assistant's first
// message and one answer. It is skipped unless VAPI_API_KEY and
// VAPI_ASSISTANT_ID are set; no test needs the internet or a key. Nothing
// is cached or compared with goldens.
func TestLiveVapi(t *testing.T) {
	key, id := os.Getenv("VAPI_API_KEY"), os.Getenv("VAPI_ASSISTANT_ID")
	if key == "" || id == "" {
		t.Skip("live test against Vapi: set VAPI_API_KEY (the account's private key) and VAPI_ASSISTANT_ID to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	adaptertest.Live(t, vapi.New(key, id), speech.Flite(), 0, true)
}
