package gemini_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
)

// memPeer starts a server of cfg on a new in-memory network and returns
// it with an agent that dials it there (WSOptions.NetDial): for a test in
// a testing/synctest bubble. (The conformance suite's
// RealTimeConversation keeps the adapter on loopback TCP and the real
// clock.)
func memPeer(t *testing.T, cfg geminipeer.Config) (*geminipeer.Server, *gemini.Agent) {
	t.Helper()
	n := adaptertest.NewMemNet(t)
	cfg.Listener = n.Listen()
	peer := geminipeer.New(t, cfg)
	a := agent(peer)
	a.NetDial = n.Dial
	return peer, a
}
