package webrtc

import "github.com/pion/transport/v5"

// SetNet makes a's calls gather their ICE candidates and send their media
// on n (a pion vnet.Net shared with the loopback bot) instead of the
// machine's sockets, for a test on virtual time.
func SetNet(a *Agent, n transport.Net) { a.net = n }
