package webrtc_test

import (
	"testing"
	"testing/synctest"

	"github.com/pion/transport/v5/vnet"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/webrtc"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
)

// network is where a test's bot and adapter meet. The nil network is the
// machine's: the offer over loopback TCP, ICE, DTLS, SRTP and SCTP over
// loopback UDP, on the real clock. Otherwise, inside a testing/synctest
// bubble, the offer goes over an in-memory network (adaptertest.MemNet)
// and the call's packets over a pion virtual network (vnet.Net), one
// that the bot and the adapter share as two programs share a machine's
// loopback: both gather the same loopback candidates as on the machine,
// and every packet is a message on a channel of the bubble, so that the
// whole call (handshakes, retransmission timers, the 20 ms pacing both
// ways, the bot's end-of-speech silence) runs on virtual time. The
// pion, Opus and adapter code is the same either way; only the sockets
// differ.
type network struct {
	mem *adaptertest.MemNet
	udp *vnet.Net
}

// newNetwork returns a virtual network over mem (an in-memory network
// made inside the test's bubble).
func newNetwork(t testing.TB, mem *adaptertest.MemNet) *network {
	t.Helper()
	udp, err := vnet.NewNet(&vnet.NetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return &network{mem: mem, udp: udp}
}

// onVirtualTime runs f in a testing/synctest bubble of its own, with a
// virtual network for its bots and agents.
func onVirtualTime(t *testing.T, f func(t *testing.T, n *network)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { f(t, newNetwork(t, adaptertest.NewMemNet(t))) })
}

// bot starts a bot on n, stopped when the test ends.
func (n *network) bot(t testing.TB, cfg webrtcpeer.Config) *webrtcpeer.Server {
	t.Helper()
	if n != nil {
		cfg.Listener, cfg.Net = n.mem.Listen(), n.udp
	}
	return webrtcpeer.New(t, cfg)
}

// agent returns an agent that reaches the offer endpoint url over n.
func (n *network) agent(url string) *webrtc.Agent {
	a := webrtc.New(url)
	if n != nil {
		a.HTTPClient = n.mem.HTTPClient()
		webrtc.SetNet(a, n.udp)
	}
	return a
}
