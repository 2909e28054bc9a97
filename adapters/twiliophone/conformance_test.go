package twiliophone_test

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/twiliophone"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/twiliocarrier"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// The numbers of the tests: the account's, and the agent's line.
const (
	ourNumber   = "+15550100001"
	agentNumber = "+15550199999"
)

// line returns an agent (twiliobot) on a line of a loopback carrier, and
// the carrier. With n, both serve on n, and the carrier dials through it.
func line(t *testing.T, bot twiliobot.Config, carrier twiliocarrier.Config, n *adaptertest.MemNet) *twiliocarrier.Server {
	t.Helper()
	if n != nil {
		bot.Listener = n.Listen()
		carrier.Listener, carrier.NetDial = n.Listen(), n.Dial
	}
	b := twiliobot.New(t, bot)
	if carrier.Numbers == nil {
		carrier.Numbers = map[string]string{ourNumber: "https://demo.twilio.com/welcome/voice/"}
	}
	carrier.Agents = map[string]string{agentNumber: b.URL}
	return twiliocarrier.New(t, carrier)
}

// dialer returns an agent that calls agentNumber from ourNumber through
// carrier.
func dialer(carrier *twiliocarrier.Server, token string) *twiliophone.Agent {
	return &twiliophone.Agent{AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: token,
		From: ourNumber, To: agentNumber, APIBase: carrier.URL}
}

// start is the suite's Subject.Start.
func start(t *testing.T, p conformance.Peer) voicetest.Agent {
	token := twiliocarrier.DefaultAuthToken
	if p.Key != "" {
		token = p.Key
	}
	cfg := twiliocarrier.Config{AuthToken: token}
	if p.PeerKey != "" {
		cfg.AuthToken = p.PeerKey
	}
	bot := twiliobot.Config{HangUpAfter: p.HangUpAfter}
	if p.LongReply {
		bot.ReplyDuration = 3500 * time.Millisecond
	}
	if p.Brief {
		bot.ReplyDuration = 200 * time.Millisecond
	}
	switch p.Stall {
	case conformance.StallAnswer:
		cfg.Fault = twiliocarrier.MuteAgent
	case conformance.StallHandshake:
		cfg.Fault = twiliocarrier.NoStream
	}
	for _, f := range p.Send {
		cfg.Send = append(cfg.Send, string(f.Data))
	}
	var a *twiliophone.Agent
	if p.Stall == conformance.StallDial {
		a = dialer(&twiliocarrier.Server{URL: "http" + strings.TrimPrefix(p.BlackHole(t), "ws")}, token)
	} else {
		a = dialer(line(t, bot, cfg, p.Net), token)
	}
	if p.Net != nil {
		a.Listener, a.HTTPClient = p.Net.Listen(), p.Net.HTTPClient()
	}
	a.RingTimeout, a.RequestTimeout = p.DialTimeout, p.DialTimeout
	a.MaxQueueBytes, a.MaxFrameBytes = p.MaxQueueBytes, p.MaxFrameBytes
	return a
}

// mediaTone returns a media message of n µ-law samples of a tone, on the
// carrier's stream ("{sid}").
func mediaTone(n int) conformance.Frame {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/8000))
	}
	payload := base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, s))
	return conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"track":"inbound","chunk":"1","timestamp":"0","payload":"` + payload + `"}}`)
}

// TestConformance runs the wire adapters' shared suite against an agent
// on a line of the loopback carrier.
func TestConformance(t *testing.T) { conformance.Run(t, subject()) }

// FuzzMediaStreamMessage fuzzes the adapter's decoding of the media stream's messages, as
// the carrier sends them, with the shared fuzz target.
func FuzzMediaStreamMessage(f *testing.F) { conformance.Fuzz(f, subject()) }

// subject describes the adapter and its loopback double to the suite.
func subject() conformance.Subject {
	return conformance.Subject{
		Adapter:   "twiliophone",
		InMemory:  true,
		Alongside: true, // RealTimeConversation overlaps the virtual-time checks
		Handshake: true, // the call must be answered and its stream opened
		ChecksKey: true, // the REST API refuses a wrong Auth Token
		Start:     start,
		Audio:     mediaTone,
		Echo: func(s string) conformance.Frame {
			name, _ := json.Marshal(s)
			return conformance.Text(`{"event":"mark","streamSid":"{sid}","mark":{"name":` + string(name) + `}}`)
		},
		Malformed: []conformance.Frame{
			conformance.Text(`not json`),
			conformance.Text(`{"event":"dance","streamSid":"{sid}"}`),
			conformance.Text(`{"event":"media","streamSid":"{sid}","media":{"payload":"%%%"}}`),
			conformance.Text(`{"event":"media","streamSid":"MZ0000000000000000000000000000dead","media":{"payload":"AAAA"}}`),
			conformance.Text(`{"event":"start","streamSid":"{sid}"}`),
		},
	}
}
