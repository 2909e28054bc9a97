package wscodec_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/floodpeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue #15, item 1: an agent that states a tiny sample_rate made the
// JSON codec resample a 5.5 KB frame into tens of MiB (sample_rate 1 at a
// 24 kHz session: 94 MiB). The rate must be one the codec allows, and
// the error must name the value and the allowed set.
func TestJSONCodecRefusesAmplifyingSampleRates(t *testing.T) {
	raw := make([]byte, 4000) // 2000 samples, 5.4 KB of base64
	audio := base64.StdEncoding.EncodeToString(raw)
	sess, _, err := wscodec.JSONBase64(wscodec.JSONOptions{}).Open(voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []int{1, 7, 7999, 96000, 16777216} {
		frame := fmt.Sprintf(`{"type":"audio","audio":%q,"sample_rate":%d}`, audio, rate)
		evs, err := sess.Decode(nil, wscodec.Frame{Data: []byte(frame)})
		held := 0
		for _, ev := range evs {
			held += 2 * len(ev.Audio.Samples)
		}
		if err == nil || held > 0 {
			t.Errorf("sample_rate %d: a %d-byte frame became %d bytes of audio (error %v); want an error", rate, len(frame), held, err)
			continue
		}
		var fe *wire.FormatError
		if !errors.As(err, &fe) || fe.Value != fmt.Sprint(rate) {
			t.Errorf("sample_rate %d: error %v, want a *wire.FormatError naming the value", rate, err)
		}
		for _, want := range []string{fmt.Sprint(rate), "8000", "48000", "JSONOptions.AgentRates"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("sample_rate %d: error %q does not name %q", rate, err, want)
			}
		}
	}
	// Every allowed rate still decodes.
	for _, rate := range []int{8000, 16000, 22050, 24000, 44100, 48000} {
		frame := fmt.Sprintf(`{"type":"audio","audio":%q,"sample_rate":%d}`, audio, rate)
		if _, err := sess.Decode(nil, wscodec.Frame{Data: []byte(frame)}); err != nil {
			t.Errorf("sample_rate %d: %v", rate, err)
		}
	}
}

// The rates set at the handshake are checked there, with an error naming
// the value and the allowed set.
func TestCodecRatesCheckedAtOpen(t *testing.T) {
	s := voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)}
	for name, codec := range map[string]wscodec.Codec{
		"RawPCM(1)":              wscodec.RawPCM(1),
		"RawPCM(1000000)":        wscodec.RawPCM(1000000),
		"JSONOptions.Rate 3":     wscodec.JSONBase64(wscodec.JSONOptions{Rate: 3}),
		"JSONOptions.AgentRates": wscodec.JSONBase64(wscodec.JSONOptions{AgentRates: []int{16000, 1}}),
	} {
		_, _, err := codec.Open(s)
		var fe *wire.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "8000") {
			t.Errorf("%s: Open = %v, want a *wire.FormatError naming the allowed rates", name, err)
		}
	}
	if _, _, err := wscodec.JSONBase64(wscodec.JSONOptions{AgentRates: []int{16000}}).Open(s); err != nil {
		t.Errorf("AgentRates {16000}: %v", err)
	}
}

// AgentRates narrows the set: a rate outside it is refused even when it
// is a standard one.
func TestJSONCodecAgentRates(t *testing.T) {
	sess, _, err := wscodec.JSONBase64(wscodec.JSONOptions{AgentRates: []int{16000}}).Open(voicetest.Session{Name: t.Name(), Rate: 24000, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Decode(nil, wscodec.Frame{Data: []byte(`{"type":"audio","audio":"AAAAAA==","sample_rate":16000}`)}); err != nil {
		t.Errorf("16000: %v", err)
	}
	if _, err := sess.Decode(nil, wscodec.Frame{Data: []byte(`{"type":"audio","audio":"AAAAAA==","sample_rate":48000}`)}); err == nil || !strings.Contains(err.Error(), "allowed: 16000 ") {
		t.Errorf("48000 with AgentRates {16000}: %v", err)
	}
}

// Found merging issue #15 items 1-4: an agent that floods the line while
// the last step runs user code (a Check) fills the adapter's queue, which
// ends the connection with a *voicetest.LimitError; with no step left
// that listens, nobody read it and the scenario passed. A limit hit is
// never silent: the scenario fails with the LimitError naming the bound.
func TestLimitHitAfterTheLastListeningStepFails(t *testing.T) {
	peer := floodpeer.New(t, floodpeer.Config{Frame: make([]byte, 4000), Binary: true, Bytes: 16 << 20})
	agent := wscodec.New(peer.URL, wscodec.RawPCM(24000))
	agent.MaxQueueBytes = 4 << 20
	busy := voicetest.Check(func(*voicetest.State) error {
		select { // user code that takes its time while the agent floods
		case <-peer.Done():
		case <-time.After(time.Minute):
		}
		return nil
	})
	res, err := voicetest.Run(t.Context(), voicetest.Config{Agent: agent, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.AgentTurn(), busy}})
	t.Logf("flooded %d MiB; err = %v", peer.Sent()>>20, err)
	var le *voicetest.LimitError
	if !errors.As(err, &le) || le.Name != "WSOptions.MaxQueueBytes" || res.Success {
		t.Errorf("err = %v, success %v; want the scenario failed with a *voicetest.LimitError naming WSOptions.MaxQueueBytes", err, res != nil && res.Success)
	}
}

// An agent that hangs up and goes on sending made the adapter log a line
// for each event it ignored: 10 000 events, 10 000 lines. It logs the
// first, and the count at Close.
func TestEventsAfterHangUpAreCountedNotLogged(t *testing.T) {
	const n = 10_000
	peer := floodpeer.New(t, floodpeer.Config{Greeting: []string{`{"type":"hangup","reason":"bye"}`},
		Frame: []byte(`{"type":"transcript","text":"still here"}`), Bytes: n * int64(len(`{"type":"transcript","text":"still here"}`))})
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	conn, err := wscodec.New(peer.URL, wscodec.JSONBase64(wscodec.JSONOptions{})).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-peer.Done():
	case <-time.After(time.Minute):
		t.Fatal("the flood did not end")
	}
	// The peer has written everything, but the adapter may not have read
	// its hang-up yet (under load its reader lags): closing before then,
	// the flood after it would never be counted as after a hang-up. As a
	// runner does, take the hang-up first; what follows it in the stream
	// is read before the peer's answer to the close.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv before the hang-up: %v", err)
		}
		if ev.Kind == voicetest.AgentHangUp {
			break
		}
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(lines, "\n")
	if len(lines) > 5 || !regexp.MustCompile(`the agent sent \d+ events after hanging up; all ignored`).MatchString(all) {
		t.Errorf("%d lines logged, want a few, one of them counting the events ignored:\n%s", len(lines), strings.Join(lines[:min(len(lines), 10)], "\n"))
	}
	t.Logf("logged:\n%s", all)
}
