package restaurant_test

// The restaurant agent as a real deployment runs it: a Twilio Media
// Streams WebSocket server with its own speech stack (energy VAD,
// pocketsphinx with a phrase grammar, flite), called by voicetest playing
// Twilio's side of the call through twilio.New. Audio flows as 8 kHz
// µ-law in 20 ms frames paced in real time (twilio.RealTime), exactly as
// it would from a phone.
//
// The phone tests serve the agent in the test's process over in-memory
// connections (startMemBot) and run the whole call in a testing/synctest
// bubble: the line's real-time pacing, the agent's VAD and its timers run
// on virtual time, so a 34-second call takes a fraction of a second of
// wall time, and no machine load can move an event. The agent's code, its
// HTTP and WebSocket handling and every Media Streams message are the same
// as over TCP; startBot serves it on 127.0.0.1 on the real clock (the
// deployed test records its cassette against it), and the Twilio adapter's
// own tests run real-clock calls over TCP.
//
// Every engine call (the caller's voice, the agent's ears and voice, and
// the test's transcription of the agent) goes through the test's cache in
// testdata/voicetest/cache, so these tests replay with no engine
// installed.

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// silenceTimeout is how long the agent waits for the caller in these
// tests before it re-prompts.
const silenceTimeout = 10 * time.Second

// bot is one restaurant agent served on loopback for one test.
type bot struct {
	srv *restaurant.Server
	url string
	tts voicetest.TTS
	stt voicetest.STT
	// dial, when set, connects to the agent in memory (startMemBot).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// startBot serves a restaurant agent on 127.0.0.1 for the rest of the
// test. Its engines use the test's cache.
func startBot(t *testing.T) *bot {
	t.Helper()
	tts := speech.TTSForTest(t, "flite/slt")
	stt := speech.STTForTest(t, "pocketsphinx")
	srv, err := restaurant.NewServer(restaurant.ServerConfig{
		TTS: tts,
		STT: stt,
		// Longer than in production (5 s): while a test records its
		// cache, the test's own transcription of the agent can take
		// seconds on a busy machine, and the line is silent meanwhile.
		// The agent must not take that for the caller's silence, or the
		// recorded conversation would not be the one that replays.
		SilenceTimeout: silenceTimeout,
		Logf:           voicetest.TestLogf(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close() // ends the calls and waits for them
		hs.Close()
	})
	return &bot{srv: srv, url: "ws" + strings.TrimPrefix(hs.URL, "http") + "/media", tts: tts, stt: stt}
}

// call returns the agent's record of the test's only call.
func (b *bot) call(t *testing.T) restaurant.CallRecord {
	t.Helper()
	calls := b.srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("the agent took %d calls, want 1", len(calls))
	}
	return calls[0]
}

// config is the scenario configuration every phone test shares.
func (b *bot) config(script ...voicetest.Step) voicetest.Config {
	agent := twilio.New(b.url)
	agent.Seed = 1 // stable call and stream SIDs
	agent.NetDial = b.dial
	cfg := voicetest.Config{
		Agent: agent,
		// The caller's lines are spoken by flite, at the phone's
		// 8 kHz, so that the µ-law the agent receives is the same on
		// every run.
		UserVoice: b.tts,
		Rate:      restaurant.PhoneRate,
		// The agent sends no transcripts over Twilio, so the test
		// transcribes its audio itself, against the agent's vocabulary
		// (an open-vocabulary model garbles 8 kHz audio).
		AgentSTT: restaurant.TelephoneSTT(b.stt, restaurant.AgentPhrases()),
		Script:   script,
		// A phone call on the real clock (startBot): the goldens compare
		// the order of events exactly and their times within a second,
		// which absorbs a loaded machine (several parallel calls under
		// -race) and still catches a reply that comes a turn late.
		Golden: voicetest.GoldenOptions{TimeTolerance: time.Second},
	}
	if b.dial != nil {
		// On virtual time (startMemBot) no machine load moves an event,
		// and the runner handles the events of one instant by rule, not
		// in the order the scheduler ran the line's frame tick, the agent
		// and itself: the call is the same on every run, and the goldens
		// compare exactly.
		cfg.Golden = voicetest.GoldenOptions{Match: voicetest.GoldenExact}
	}
	return cfg
}

// heard returns what the agent heard the caller say, in order.
func heard(rec restaurant.CallRecord) []string {
	var out []string
	for _, l := range rec.Lines {
		if l.Role == voicetest.RoleUser {
			out = append(out, l.Text)
		}
	}
	return out
}

func checkReservation(t *testing.T, b *bot, want restaurant.Booking) {
	t.Helper()
	got := b.srv.Book().Reservations()
	if len(got) != 1 || got[0].Booking != want {
		t.Errorf("reservations = %+v, want one for %+v; the agent heard %q", got, want, heard(b.call(t)))
	}
}

func checkHeard(t *testing.T, rec restaurant.CallRecord, want ...string) {
	t.Helper()
	got := heard(rec)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the agent heard:\n  %q\nwant:\n  %q", got, want)
	}
}

// TestPhoneBooking is a scripted caller booking a table over the phone.
func TestPhoneBooking(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhoneBooking)
}

func testPhoneBooking(t *testing.T) {
	b := startMemBot(t)
	res := voicetest.Scenario(t, b.config(phoneBooking()...))
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	if res.Ended != "the agent hung up" {
		t.Errorf("Ended = %q, want the agent to hang up after its goodbye", res.Ended)
	}
	rec := b.call(t)
	checkHeard(t, rec, "a table for two", "friday at seven thirty", "the name is garcia", "yes that's right")
	checkReservation(t, b, restaurant.Booking{Party: 2, Day: "friday", Time: "19:30", Name: "Garcia"})
	// The test's own transcription of the agent's telephone audio.
	if !strings.Contains(strings.ToLower(res.State.AgentText()), "garcia") {
		t.Errorf("the agent's read-back, as transcribed, never says the name:\n%s", res.TranscriptText())
	}
	for _, l := range res.Latency.PerTurn {
		if l <= 0 {
			t.Errorf("latency %v: every reply follows the caller's speech", l)
		}
	}
}

// TestPhoneBargeIn cuts the agent's read-back short with a correction:
// the agent hears the caller over its own speech, sends Twilio "clear" to
// stop its audio, and reads back the corrected booking.
func TestPhoneBargeIn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhoneBargeIn)
}

func testPhoneBargeIn(t *testing.T) {
	b := startMemBot(t)
	cfg := b.config(
		voicetest.AgentTurn(),
		voicetest.UserSays("Two people, Friday at seven thirty."),
		voicetest.AgentTurn(),
		voicetest.UserSays("The name is Garcia."),
		voicetest.Interrupt("Sorry, make it eight.", voicetest.AfterWords(3)),
		voicetest.AgentTurn(),
		voicetest.UserSays("Yes, that's right."),
		voicetest.AgentTurn(),
	)
	// The interrupted read-back is cut at an instant of the real clock,
	// so its audio differs from run to run by a few milliseconds and its
	// transcription could not replay from the cache. The agent's own
	// record of the call tells what it heard and said instead.
	cfg.AgentSTT = nil
	res := voicetest.Scenario(t, cfg)
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	rec := b.call(t)
	if rec.Interruptions != 1 {
		t.Errorf("the agent saw %d barge-ins, want 1", rec.Interruptions)
	}
	checkHeard(t, rec, "two people friday at seven thirty", "the name is garcia", "sorry make it eight", "yes that's right")
	checkReservation(t, b, restaurant.Booking{Party: 8, Day: "friday", Time: "19:30", Name: "Garcia"})
	// On the runner's side: the agent's audio stopped (Twilio "clear"
	// reached the adapter as agent_interrupted) and the response time
	// was measured.
	if !strings.Contains(res.TimelineText(), "agent_interrupted") {
		t.Errorf("no agent_interrupted in the timeline:\n%s", res.TimelineText())
	}
	if n := len(res.Latency.InterruptResponse); n != 1 {
		t.Errorf("%d interrupt response times, want 1", n)
	}
}

// TestPhoneSilence stays silent after the agent's question: after
// silenceTimeout of stream time (the media timestamps, not the wall
// clock) the agent asks whether the caller is still there.
func TestPhoneSilence(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhoneSilence)
}

func testPhoneSilence(t *testing.T) {
	b := startMemBot(t)
	res := voicetest.Scenario(t, b.config(
		voicetest.AgentTurn(),
		voicetest.UserSays("Four people."),
		voicetest.AgentTurn(),
		voicetest.Silence(silenceTimeout+time.Second),
		voicetest.AgentTurn(),
	))
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	rec := b.call(t)
	if rec.Silences != 1 {
		t.Errorf("the agent re-prompted %d times, want 1", rec.Silences)
	}
	last := rec.Lines[len(rec.Lines)-1]
	if want := "Are you still there? What day and time would you like?"; last.Text != want {
		t.Errorf("the agent's last line = %q, want %q", last.Text, want)
	}
	if !strings.Contains(strings.ToLower(res.State.LastAgentText()), "still there") {
		t.Errorf("the re-prompt, as transcribed, = %q", res.State.LastAgentText())
	}
}

// TestPhoneMenu presses keys: Twilio carries them as "dtmf" events.
func TestPhoneMenu(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhoneMenu)
}

func testPhoneMenu(t *testing.T) {
	b := startMemBot(t)
	res := voicetest.Scenario(t, b.config(
		voicetest.AgentTurn(),
		voicetest.DTMF("2"), // opening hours
		voicetest.AgentTurn(),
		voicetest.UserSays("A table for four, please."),
		voicetest.AgentTurn(),
	))
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	rec := b.call(t)
	checkHeard(t, rec, "[keys 2]", "a table for four please")
	var said []string
	for _, l := range rec.Lines {
		if l.Role == voicetest.RoleAgent {
			said = append(said, l.Text)
		}
	}
	if len(said) != 3 || !strings.HasPrefix(said[1], "We are open every day") || said[2] != "A table for four. What day and time would you like?" {
		t.Errorf("the agent said %q", said)
	}
}

// TestPhoneNoisyLine books over a bad line: the caller's speech is
// band-limited to 300–3400 Hz with pink noise 20 dB below it. The VAD
// and the phrase grammar still get the booking right, but only just:
// pocketsphinx is a weak recognizer on a noisy 8 kHz line (at this level
// it hears "a table for four" as "a table for one" and "Chen" as
// "Nguyen"; at 15 dB it loses most lines), so the caller here says the
// lines that survive. examples/README.md lists what was measured.
func TestPhoneNoisyLine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhoneNoisyLine)
}

func testPhoneNoisyLine(t *testing.T) {
	b := startMemBot(t)
	cfg := b.config(
		voicetest.AgentTurn(),
		voicetest.UserSays("A table for two."),
		voicetest.AgentTurn(),
		voicetest.UserSays("Friday at seven thirty."),
		voicetest.AgentTurn(),
		voicetest.UserSays("The name is Garcia."),
		voicetest.AgentTurn(),
		voicetest.UserSays("Yes."),
		voicetest.AgentTurn(),
	)
	// Effects apply after the TTS and its cache, so the noisy audio is
	// the same on every run (fixed seed) and costs no new cache entry
	// for the caller's voice.
	cfg.Effects = pcm.Chain(pcm.TelephoneBand(), pcm.PinkNoise(20, 7))
	res := voicetest.Scenario(t, cfg)
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	checkReservation(t, b, restaurant.Booking{Party: 2, Day: "friday", Time: "19:30", Name: "Garcia"})
}

// TestPhonePersona lets the persona caller (caller_test.go) talk to the
// agent over the phone with no script: it answers whatever the agent's
// audio, as the test transcribes it, asks for.
func TestPhonePersona(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPhonePersona)
}

func testPhonePersona(t *testing.T) {
	b := startMemBot(t)
	cfg := b.config()
	cfg.User = &caller{party: "A table for four, please.", when: "Saturday at seven.", name: "The name is Patel."}
	cfg.MaxTurns = 8
	res := voicetest.Scenario(t, cfg)
	if !res.Success {
		t.Fatalf("scenario failed: %v\n%s", res.Err, res.TranscriptText())
	}
	checkReservation(t, b, restaurant.Booking{Party: 4, Day: "saturday", Time: "19:00", Name: "Patel"})
}
