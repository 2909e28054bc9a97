package adapters_test

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

func TestLeakCheckSeesOpenConns(t *testing.T) {
	bot := twiliobot.New(t, twiliobot.Config{})
	conn, err := twilio.New(bot.URL).Connect(t.Context(), adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	// The reader, the keepalive, the writer of batched frames (wire's
	// batchConn), the mark echoer and the RealTime line.
	stacks := adaptertest.Goroutines()
	if n := len(regexp.MustCompile(`created by github.com/voicetest-go/voicetest/adapters/[a-z0-9]+\.`).FindAllString(stacks, -1)); n != 5 {
		t.Errorf("the leak check sees %d goroutines of an open RealTime Twilio conn, want 5:\n%s", n, stacks)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	adaptertest.CheckNoLeak(t)
}

func TestDialTimeout(t *testing.T) {
	t.Parallel()
	url := adaptertest.BlackHole(t)
	for _, agent := range []voicetest.Agent{
		&twilio.Agent{URL: url, WSOptions: wire.WSOptions{DialTimeout: 100 * time.Millisecond}},
		&wscodec.Agent{URL: url, Codec: wscodec.RawPCM(16000), WSOptions: wire.WSOptions{DialTimeout: 100 * time.Millisecond}},
	} {
		_, err := agent.Connect(t.Context(), adaptertest.Session(t, 24000))
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || te.Timeout != 100*time.Millisecond {
			t.Fatalf("Connect to a silent server: %v, want a connect TimeoutError after 100ms", err)
		}
		if !strings.Contains(err.Error(), "DialTimeout") {
			t.Errorf("error %q does not name the option to change", err)
		}
	}
}

func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close()
	_, err = twilio.New(url).Connect(t.Context(), adaptertest.Session(t, 24000))
	if err == nil || !strings.Contains(err.Error(), "dial "+url) {
		t.Fatalf("Connect to a closed port: %v, want a dial error naming the URL", err)
	}
}

func TestBadSessionRate(t *testing.T) {
	for _, agent := range []voicetest.Agent{twilio.New("ws://127.0.0.1:1"), wscodec.New("ws://127.0.0.1:1", wscodec.RawPCM(16000))} {
		_, err := agent.Connect(t.Context(), adaptertest.Session(t, 0))
		if !errors.Is(err, pcm.ErrBadRate) {
			t.Errorf("Connect with rate 0: %v, want ErrBadRate", err)
		}
	}
}

// TestRequireTLSRefusesBeforeDialing: every adapter refuses a remote
// plain-text URL before any network traffic, when asked to.
func TestRequireTLSRefusesBeforeDialing(t *testing.T) {
	on := wire.WSOptions{RequireTLS: true}
	s := voicetest.Session{Name: "tls", Rate: 24000, Logf: voicetest.TestLogf(t)}
	for name, a := range map[string]voicetest.Agent{
		"twilio":     &twilio.Agent{URL: "ws://agent.example.com/media", WSOptions: on},
		"websocket":  &wscodec.Agent{URL: "ws://agent.example.com/ws", Codec: wscodec.RawPCM(24000), WSOptions: on},
		"realtime":   &realtime.Agent{URL: "ws://realtime.example.com/v1/realtime", APIKey: "sk-test", Model: "m", WSOptions: on},
		"layercode":  &layercode.Agent{AuthorizeURL: "http://backend.example.com/authorize", AgentID: "a", WSOptions: on},
		"elevenlabs": &elevenlabs.Agent{URL: "ws://convai.example.com/v1/convai/conversation", AgentID: "a", WSOptions: on},
	} {
		c, err := a.Connect(t.Context(), s)
		if err == nil {
			c.Close()
			t.Errorf("%s: connected to a remote plain-text URL with RequireTLS set", name)
			continue
		}
		if !strings.Contains(err.Error(), "RequireTLS") {
			t.Errorf("%s: error %q does not name RequireTLS", name, err)
		}
	}
}
