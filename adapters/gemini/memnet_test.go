package gemini_test

import (
	"testing"

	gorilla "github.com/gorilla/websocket"
	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
)

// dialThrough makes the genai SDK dial through n until the test ends, so
// that a test in a testing/synctest bubble reaches its in-memory peer on
// virtual time. The SDK's Live.Connect dials with gorilla/websocket's
// package-level DefaultDialer and takes no dialer, HTTP client or
// transport of its own (genai v1.77.0: ClientConfig.HTTPClient serves only
// the REST calls), so this sets DefaultDialer.NetDialContext, and puts it
// back when the test ends. The tests of this package therefore never run
// in parallel (none calls t.Parallel); the conformance suite runs its
// checks one after another.
func dialThrough(t *testing.T, n *adaptertest.MemNet) {
	t.Helper()
	prev := gorilla.DefaultDialer.NetDialContext
	gorilla.DefaultDialer.NetDialContext = n.Dial
	t.Cleanup(func() { gorilla.DefaultDialer.NetDialContext = prev })
}

// memPeer starts a server of cfg on a new in-memory network that the SDK
// dials through (dialThrough), and returns it with an agent for it: for a
// test in a testing/synctest bubble. (The conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.)
func memPeer(t *testing.T, cfg geminipeer.Config) (*geminipeer.Server, *gemini.Agent) {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	dialThrough(t, n)
	cfg.Listener = n.Listen()
	peer := geminipeer.New(t, cfg)
	return peer, agent(peer)
}
