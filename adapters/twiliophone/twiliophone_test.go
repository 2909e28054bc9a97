package twiliophone_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/twiliophone"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/twiliocarrier"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// run runs script against agent, with fake speech from the user.
func run(t *testing.T, agent voicetest.Agent, cfg voicetest.Config, script ...voicetest.Step) *voicetest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cfg.Name, cfg.Agent, cfg.UserVoice, cfg.Pacing, cfg.Script = t.Name(), agent, fixtures.FakeTTS(), voicetest.PaceFast, script
	if cfg.Logf == nil {
		cfg.Logf = voicetest.TestLogf(t)
	}
	res, err := voicetest.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.TimelineText())
	}
	return res
}

// TestWaitForCall: in Wait mode the adapter points the number's voice URL
// at its webhook, the agent's call (made by Trigger) comes in through the
// signed webhook, the conversation runs on its stream, and Close puts the
// number's voice URL back.
func TestWaitForCall(t *testing.T) { synctest.Test(t, testWaitForCall) }

func testWaitForCall(t *testing.T) {
	const original = "https://handler.twilio.com/twiml/EH0123"
	n := adaptertest.NewMemNet(t)
	carrier := line(t, twiliobot.Config{}, twiliocarrier.Config{Numbers: map[string]string{ourNumber: original}}, n)
	var pointed string
	a := &twiliophone.Agent{AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: twiliocarrier.DefaultAuthToken,
		WaitOn: ourNumber, ExpectCaller: agentNumber, APIBase: carrier.URL,
		Trigger: func(context.Context) error {
			pointed = carrier.VoiceURL(ourNumber)
			_, err := carrier.Dial(agentNumber, ourNumber)
			return err
		}}
	a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
	res := run(t, a, voicetest.Config{}, voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.UserSays("Thanks."), voicetest.AgentTurn())
	if !strings.Contains(pointed, "/twilio/voice/") {
		t.Errorf("while waiting, the number's voice URL was %q, want voicetest's webhook", pointed)
	}
	if got := carrier.VoiceURL(ourNumber); got != original {
		t.Errorf("after Close the number's voice URL is %q, want %q restored", got, original)
	}
	calls := carrier.Calls()
	if len(calls) != 1 || calls[0].Direction != "inbound" || calls[0].Webhooks != 1 || len(calls[0].Errors) > 0 {
		t.Fatalf("the carrier saw %+v: want one inbound call, one webhook, no errors", calls)
	}
	if n := strings.Count(adaptertest.EventTypes(res), string(voicetest.EventAgentStartSpeaking)); n < 2 {
		t.Errorf("%d agent utterances, want 2: %s", n, adaptertest.EventTypes(res))
	}
}

// TestRejectsOtherCallers: in Wait mode a call from another number than
// ExpectCaller is rejected, and Connect times out naming the ring.
func TestRejectsOtherCallers(t *testing.T) { synctest.Test(t, testRejectsOtherCallers) }

func testRejectsOtherCallers(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	carrier := line(t, twiliobot.Config{}, twiliocarrier.Config{}, n)
	a := &twiliophone.Agent{AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: twiliocarrier.DefaultAuthToken,
		WaitOn: ourNumber, ExpectCaller: "+15550142424", APIBase: carrier.URL, RingTimeout: time.Second,
		Trigger: func(context.Context) error { _, err := carrier.Dial(agentNumber, ourNumber); return err }}
	a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
	conn, err := a.Connect(t.Context(), adaptertest.Session(t, 16000))
	if err == nil {
		conn.Close()
		t.Fatal("Connect took a call from another number")
	}
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect {
		t.Errorf("Connect: %v, want a *TimeoutError in phase connect", err)
	}
	if c, _ := carrier.WaitCall(t.Context(), 0, func(c twiliocarrier.Call) bool { return c.Status == "completed" }); c.Streams != 0 {
		t.Errorf("the rejected call opened %d streams", c.Streams)
	}
}

// TestREADMECapabilities: the README's capabilities row of twiliophone
// says what a Conn on a call declares.
func TestREADMECapabilities(t *testing.T) { synctest.Test(t, testREADMECapabilities) }

func testREADMECapabilities(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	carrier := line(t, twiliobot.Config{}, twiliocarrier.Config{}, n)
	a := dialer(carrier, twiliocarrier.DefaultAuthToken)
	a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 16000))
	readmecaps.Check(t, "`twiliophone`", conn.Capabilities())
}

// TestDTMF: key presses update the live call with <Play digits>; the
// agent gets them as dtmf events, the call goes on over a new stream.
func TestDTMF(t *testing.T) { synctest.Test(t, testDTMF) }

func testDTMF(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen()})
	carrier := twiliocarrier.New(t, twiliocarrier.Config{Numbers: map[string]string{ourNumber: ""}, Agents: map[string]string{agentNumber: bot.URL},
		Listener: n.Listen(), NetDial: n.Dial})
	a := dialer(carrier, twiliocarrier.DefaultAuthToken)
	a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
	res := run(t, a, voicetest.Config{},
		voicetest.UserSays("Hello."), voicetest.AgentTurn(), voicetest.DTMF("42#"), voicetest.AgentTurn())
	c := carrier.Calls()[0]
	if c.Digits != "42#" || c.Streams != 2 || len(c.Errors) > 0 {
		t.Errorf("the carrier played %q over %d streams, errors %q: want 42# and 2 streams", c.Digits, c.Streams, c.Errors)
	}
	if b := bot.Calls()[0]; b.DTMF != "42#" {
		t.Errorf("the agent got keys %q, want 42#", b.DTMF)
	}
	if n := strings.Count(adaptertest.EventTypes(res), string(voicetest.EventAgentStartSpeaking)); n < 2 {
		t.Errorf("no reply after the keys: %s", adaptertest.EventTypes(res))
	}
	if c.HungUpBy != "api" {
		t.Errorf("the call was hung up by %q, want Close's REST request", c.HungUpBy)
	}
}

// TestBadSignature: a webhook whose X-Twilio-Signature does not match is
// refused, and Connect fails at once saying what to check.
func TestBadSignature(t *testing.T) {
	carrier := line(t, twiliobot.Config{}, twiliocarrier.Config{Fault: twiliocarrier.BadSignature}, nil)
	a := dialer(carrier, twiliocarrier.DefaultAuthToken)
	a.RingTimeout = 30 * time.Second
	start := time.Now()
	conn, err := a.Connect(t.Context(), adaptertest.Session(t, 16000))
	if err == nil {
		conn.Close()
		t.Fatal("Connect took a webhook with a bad signature")
	}
	if !strings.Contains(err.Error(), "X-Twilio-Signature") || !strings.Contains(err.Error(), "AuthToken") {
		t.Errorf("Connect: %v, want it to name the signature and the AuthToken", err)
	}
	var te *voicetest.TimeoutError
	if errors.As(err, &te) || time.Since(start) > 20*time.Second {
		t.Errorf("a bad signature waited for the ring timeout: %v", err)
	}
}

// TestConfigErrors: settings that cannot work fail Connect with what to
// set, before any request.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		a    *twiliophone.Agent
		want string
	}{
		{&twiliophone.Agent{AccountSid: "AC1", From: "+15550100001", To: "+15550199999"}, "AuthToken"},
		{&twiliophone.Agent{AccountSid: "AC1", AuthToken: "t", From: "+15550100001"}, "both From"},
		{&twiliophone.Agent{AccountSid: "AC1", AuthToken: "t", From: "+1", To: "+2", WaitOn: "+3"}, "not both"},
		{&twiliophone.Agent{AccountSid: "AC1", AuthToken: "t"}, "WaitOn"},
		{&twiliophone.Agent{AccountSid: "AC1", AuthToken: "t", From: "+1", To: "+2"}, "Agent.PublicURL"},
		{&twiliophone.Agent{AccountSid: "AC1", AuthToken: "t", From: "+1", To: "+2", APIBase: "http://127.0.0.1:1", APIKeySid: "SK1"}, "APIKeySecret"},
	} {
		conn, err := tc.a.Connect(t.Context(), adaptertest.Session(t, 16000))
		if err == nil {
			conn.Close()
			t.Errorf("Connect succeeded, want an error naming %q", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Connect: %v, want it to name %q", err, tc.want)
		}
	}
}

// TestNumbersRedacted: the phone numbers, the Auth Token and the Account
// SID reach neither the capture nor the log, in any encoding.
func TestNumbersRedacted(t *testing.T) { synctest.Test(t, testNumbersRedacted) }

func testNumbersRedacted(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	carrier := line(t, twiliobot.Config{}, twiliocarrier.Config{}, n)
	var log strings.Builder
	capture := &adaptertest.SyncBuffer{}
	a := dialer(carrier, twiliocarrier.DefaultAuthToken)
	a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
	run(t, a, voicetest.Config{Capture: capture,
		Logf: func(f string, args ...any) { log.WriteString(strings.TrimSpace(f)) }},
		voicetest.UserSays("Hello."), voicetest.AgentTurn(), voicetest.DTMF("1"))
	text := string(capture.Bytes()) + log.String()
	if !strings.Contains(text, "REDACTED") {
		t.Fatal("nothing was redacted: the capture holds no REST exchange")
	}
	for _, secret := range []string{ourNumber, agentNumber, strings.ReplaceAll(ourNumber, "+", "%2B"), strings.TrimPrefix(agentNumber, "+"),
		twiliocarrier.DefaultAuthToken, twiliocarrier.DefaultAccountSid} {
		if strings.Contains(text, secret) {
			t.Errorf("the capture or the log holds %q", secret)
		}
	}
}

// TestRealTwilio places a real call through Twilio to an agent's number.
// It needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER (your
// Twilio number), TWILIO_AGENT_NUMBER (the agent's), and
// VOICETEST_PUBLIC_URL, the https URL of a tunnel (ngrok http 8089) to
// VOICETEST_LISTEN (default 127.0.0.1:8089); it is skipped without them.
func TestRealTwilio(t *testing.T) {
	env := map[string]string{}
	for _, k := range []string{"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM_NUMBER", "TWILIO_AGENT_NUMBER", "VOICETEST_PUBLIC_URL"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			t.Skipf("set %s (and the other TWILIO_* variables and VOICETEST_PUBLIC_URL) to call a real agent through Twilio", k)
		}
	}
	listen := os.Getenv("VOICETEST_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:8089"
	}
	a := &twiliophone.Agent{AccountSid: env["TWILIO_ACCOUNT_SID"], AuthToken: env["TWILIO_AUTH_TOKEN"],
		From: env["TWILIO_FROM_NUMBER"], To: env["TWILIO_AGENT_NUMBER"], PublicURL: env["VOICETEST_PUBLIC_URL"], Listen: listen}
	res := run(t, a, voicetest.Config{Pacing: voicetest.PaceRealTime}, voicetest.AgentTurn(), voicetest.UserSays("Hello, can you hear me?"), voicetest.AgentTurn())
	if res.Metrics.Wire == nil || res.Metrics.Wire.FramesIn == 0 {
		t.Errorf("no audio from the call: %+v", res.Metrics.Wire)
	}
}
