package voicetest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func TestSilenceSleepAndDTMF(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{Echo: true, DTMF: true, EchoLatency: 100 * time.Millisecond})
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.Silence(2 * time.Second),
			voicetest.Sleep(time.Second),
			voicetest.DTMF("12#"),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Silence sends 2 s of frames (the agent hears no voice and stays
	// quiet), Sleep sends nothing, the keys go as protocol events.
	want := `      0ms turn 0 silence duration=2000ms
   2000ms turn 0 sleep duration=1000ms
   3000ms turn 0 dtmf "12#"
   3100ms turn 0 agent_start_speaking
   5100ms turn 0 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if got := res.TranscriptText(); got != "agent: You pressed 1 2 #\n" {
		t.Errorf("transcript %q", got)
	}
}

func TestDTMFOnTextOnlyAgentIsUnsupported(t *testing.T) {
	_, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(),
		Script: []voicetest.Step{voicetest.DTMF("1")},
	})
	var ue *voicetest.UnsupportedError
	if !errors.As(err, &ue) || ue.Adapter != "fake-text" || ue.Capability != "DTMF" || !strings.Contains(ue.Alternative, "UserSays") {
		t.Fatalf("err = %v, want an UnsupportedError naming the adapter, DTMF and UserSays", err)
	}
}

func TestSilenceToTextOnlyAgentWaits(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(),
		Script: []voicetest.Step{voicetest.Silence(1500 * time.Millisecond)},
	})
	if err != nil || res.Duration != ms(1500) {
		t.Fatalf("err %v, duration %v", err, res.Duration)
	}
}

func TestEarlyAgentAudioGoesToTheNextAgentTurn(t *testing.T) {
	// The greeting starts at 500 ms, while the user is still speaking
	// (0..800 ms): it must not bleed into the user's segment and must be
	// the next AgentTurn's, not lost.
	agent := fixtures.Fake(fixtures.FakeConfig{
		Greeting: fixtures.Reply{Text: "Hello caller", Latency: 500 * time.Millisecond},
		Replies:  []fixtures.Reply{{Text: "Yes", Latency: 100 * time.Millisecond}},
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("hi there"),
			voicetest.AgentTurn(),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `      0ms turn 1 user_start_speaking
    500ms turn 1 agent_start_speaking
    800ms turn 1 user_stop_speaking
   1300ms turn 1 agent_stop_speaking
   1300ms turn 1 agent_start_speaking latency=100ms
   1700ms turn 1 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if got := res.TranscriptText(); got != "user: hi there\nagent: Hello caller\nagent: Yes\n" {
		t.Errorf("transcript:\n%s", got)
	}
	for _, s := range res.Recording.Segments {
		if s.Role == voicetest.RoleUser && (s.Start != 0 || s.AudioDuration() != ms(800)) {
			t.Errorf("user segment %v..%v with %v of audio, want exactly the 800 ms sent", s.Start, s.End, s.AudioDuration())
		}
	}
	// The reply queued behind the greeting plays after it; its latency is
	// measured to its arrival (900 ms), not its playback.
	if got := res.Latency.PerTurn; len(got) != 1 || got[0] != ms(100) {
		t.Errorf("PerTurn = %v, want [100ms]", got)
	}
}

func TestMaxTurnAudio(t *testing.T) {
	long := strings.Repeat("word ", 20) // 8 s of speech
	for _, fail := range []bool{false, true} {
		res, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: long}), UserVoice: &toneTTS{},
			Timeouts: voicetest.Timeouts{MaxTurnAudio: 2 * time.Second, FailOnMaxTurnAudio: fail},
			Script:   []voicetest.Step{voicetest.UserSays("talk"), voicetest.AgentTurn()},
		})
		if fail {
			var te *voicetest.TimeoutError
			if !errors.As(err, &te) || te.Timeout != 2*time.Second {
				t.Errorf("FailOnMaxTurnAudio: err = %v, want a TimeoutError", err)
			}
			continue
		}
		if err != nil || !strings.Contains(res.TimelineText(), "max_turn_audio") {
			t.Errorf("err %v, timeline:\n%s", err, res.TimelineText())
		}
	}
}

func TestUserDoneAndHangUp(t *testing.T) {
	n := 0
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		n++
		return voicetest.Utterance{Text: "bye then", HangUp: true}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.EchoAgent(), UserVoice: &toneTTS{}, User: user,
		Script: []voicetest.Step{voicetest.UserTurn(), voicetest.AgentTurn(), voicetest.UserTurn()},
	})
	if err != nil || !res.Success || res.Ended != "the user hung up" || len(res.SkippedSteps) != 2 || n != 1 {
		t.Fatalf("err %v, res ended %q skipped %v, asked %d", err, res.Ended, res.SkippedSteps, n)
	}
	if !strings.Contains(res.TimelineText(), "user_hang_up") {
		t.Errorf("no user_hang_up:\n%s", res.TimelineText())
	}
}

func TestUtteranceAudioAndEffects(t *testing.T) {
	var heard []pcm.Chunk
	loud := func(c pcm.Chunk) pcm.Chunk {
		out := c.Clone()
		for i := range out.Samples {
			out.Samples[i] = 1000
		}
		return out
	}
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		return voicetest.Utterance{Text: "recorded", Audio: pcm.Silence(pcm.DefaultRate, time.Second), Effects: loud}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.EchoAgent(), User: user,
		Effects: func(c pcm.Chunk) pcm.Chunk { heard = append(heard, c); return c },
		Script:  []voicetest.Step{voicetest.UserTurn(), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 || heard[0].Samples[0] != 1000 {
		t.Fatalf("Config.Effects saw %d chunks, want 1 after the utterance's effects", len(heard))
	}
	// The echo agent played the effected audio back.
	agent := res.Recording.Segments[1]
	if agent.Role != voicetest.RoleAgent || agent.AudioDuration() != time.Second || agent.Audio().Samples[10] != 1000 {
		t.Errorf("agent segment %v %v", agent.Role, agent.AudioDuration())
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  voicetest.Config
		want string
	}{
		{"no agent", voicetest.Config{}, "Config.Agent is nil"},
		{"zero step", voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{{}}}, "Config.Script[0] is a zero Step"},
		{"bad rate", voicetest.Config{Agent: fixtures.SilentAgent(), Rate: -1}, "Config.Rate is -1"},
		{"bad timeout", voicetest.Config{Agent: fixtures.SilentAgent(), Timeouts: voicetest.Timeouts{TailSilence: -1}}, "Config.Timeouts.TailSilence"},
		{"bad pass rate", voicetest.Config{Agent: fixtures.SilentAgent(), Repeat: voicetest.Repeat{MinPassRate: 2}}, "MinPassRate"},
		{"bad DTMF", voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{voicetest.DTMF("1x")}}, `'x' is not a key`},
		{"bad silence", voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{voicetest.Silence(0)}}, "must be positive"},
	} {
		if _, err := voicetest.Run(t.Context(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestMissingPiecesAreClearErrors(t *testing.T) {
	t.Run("no user voice", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{Agent: fixtures.EchoAgent(), Script: []voicetest.Step{voicetest.UserSays("hi")}})
		if err == nil || !strings.Contains(err.Error(), "set Config.UserVoice") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no user", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{Agent: fixtures.EchoAgent(), Script: []voicetest.Step{voicetest.UserTurn()}})
		if err == nil || !strings.Contains(err.Error(), "Config.User is nil") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("user error", func(t *testing.T) {
		boom := errors.New("persona broke")
		_, err := runVirtual(t, voicetest.Config{Agent: fixtures.EchoAgent(),
			User: voicetest.UserFunc(func(context.Context, *voicetest.State) (voicetest.Utterance, error) {
				return voicetest.Utterance{}, boom
			}),
			Script: []voicetest.Step{voicetest.UserTurn()}})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestAgentHangsUpWhileTheUserSpeaks(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{Greeting: fixtures.Reply{Text: "Bye", Latency: 410 * time.Millisecond, HangUp: true}})
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("I have a long question for you"), voicetest.UserSays("hello?")},
	})
	// The second line needs the line the agent hung up during the first
	// (issue 14: it fails, naming both steps, instead of being skipped).
	var hu *voicetest.HangUpError
	var se *voicetest.StepError
	if !errors.As(err, &hu) || !errors.As(err, &se) || se.Index != 2 || hu.At != ms(410) ||
		hu.Step != `step 1 UserSays("I have a long question for you")` || res.Success {
		t.Fatalf("err = %v, want step 2 to fail on the hang-up at 410ms during step 1", err)
	}
	if res.Ended != "the agent hung up" || len(res.SkippedSteps) != 0 {
		t.Errorf("ended %q, skipped %v", res.Ended, res.SkippedSteps)
	}
	// The user stopped being heard when the agent hung up, and the agent's
	// last words were recorded although no AgentTurn drained them.
	want := `      0ms turn 1 user_start_speaking
    410ms turn 1 user_stop_speaking
    410ms turn 1 agent_start_speaking
    410ms turn 1 agent_hang_up "goodbye"
    810ms turn 1 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if got := res.TranscriptText(); got != "user: I have a long question for you\nagent: Bye\n" {
		t.Errorf("transcript:\n%s", got)
	}
}

// stuckTTS never answers until its context ends.
type stuckTTS struct{}

func (stuckTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	<-ctx.Done()
	return pcm.Chunk{}, ctx.Err()
}

func TestEngineTimeout(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.EchoAgent(), UserVoice: stuckTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hello")},
	})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseSynthesize || te.Timeout != voicetest.DefaultEngineTimeout ||
		!strings.Contains(te.Hint, "Config.UserVoice") {
		t.Fatalf("err = %v, want a synthesis TimeoutError naming Config.UserVoice", err)
	}
	if res.Duration != voicetest.DefaultEngineTimeout {
		t.Errorf("duration %v", res.Duration)
	}
}

// stuckAgent accepts the connection and then never reads user audio.
type stuckAgent struct{ fixtures.FakeAgent }

type stuckConn struct {
	voicetest.Conn
	block chan struct{}
}

func (a *stuckAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.FakeAgent.Connect(ctx, s)
	return &stuckConn{Conn: c, block: make(chan struct{})}, err
}

func (c *stuckConn) SendAudio(ctx context.Context, a pcm.Chunk) error {
	select {
	case <-c.block:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestSendTimeout(t *testing.T) {
	_, err := runVirtual(t, voicetest.Config{
		Agent: &stuckAgent{*fixtures.EchoAgent()}, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hello")},
	})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseSend || !strings.Contains(te.Hint, "stopped accepting audio after 0s of 400ms") {
		t.Fatalf("err = %v, want a send TimeoutError", err)
	}
}

func TestInBandDTMF(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.ScriptedAgent(),
		Script: []voicetest.Step{voicetest.DTMF("12#")},
	})
	if err != nil {
		t.Fatal(err)
	}
	// 3 keys of 100 ms with 50 ms gaps, sent as the user's audio.
	segs := res.Recording.Segments
	if len(segs) != 1 || segs[0].Role != voicetest.RoleUser || segs[0].AudioDuration() != ms(400) || res.Duration != ms(400) {
		t.Fatalf("segments %+v, duration %v", segs, res.Duration)
	}
	keys, err := pcm.DetectDTMF(segs[0].Audio(), pcm.DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := pcm.DTMFString(keys); got != "12#" {
		t.Errorf("detected %q in the sent audio, want 12#", got)
	}
	if !strings.Contains(res.TimelineText(), `dtmf "12#" duration=400ms`) {
		t.Errorf("timeline:\n%s", res.TimelineText())
	}
}

func TestUserAudioAtAnotherRateIsResampled(t *testing.T) {
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		return voicetest.Utterance{Text: "recorded", Audio: fixtures.WordTones("one two", pcm.Rate16k)}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.EchoAgent(), User: user,
		Script: []voicetest.Step{voicetest.UserTurn(), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	u := res.Recording.Segments[0]
	if u.Audio().Rate != pcm.DefaultRate || u.AudioDuration() != ms(800) || u.End != ms(800) {
		t.Errorf("user segment at %d Hz lasting %v (ends %v), want 24 kHz and 800 ms", u.Audio().Rate, u.AudioDuration(), u.End)
	}
	if pcm.RMS(u.Audio()) < 1000 {
		t.Errorf("resampled audio RMS %v, want the tones kept", pcm.RMS(u.Audio()))
	}
}

func TestMixedRecordingSumsOverlaps(t *testing.T) {
	rec := voicetest.Recording{Rate: 8000, Duration: ms(300), Segments: []voicetest.Segment{
		voicetest.Segment{Role: voicetest.RoleAgent, Start: 0}.WithAudio(pcm.Chunk{Rate: 8000, Samples: []int16{100, 100, 30000}}),
		voicetest.Segment{Role: voicetest.RoleUser, Start: time.Second / 8000}.WithAudio(pcm.Chunk{Rate: 8000, Samples: []int16{5, 10000}}),
	}}
	m := rec.Mixed()
	if m.Duration() != ms(300) || m.Samples[0] != 100 || m.Samples[1] != 105 || m.Samples[2] != 32767 || m.Samples[3] != 0 {
		t.Errorf("mixed %v (%v), want [100 105 32767 0 ...] over 300 ms", m.Samples[:4], m.Duration())
	}
}

func TestUserAudioStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hello.wav")
	if err := pcm.WriteWAVFile(path, fixtures.WordTones("hello there", pcm.Rate16k)); err != nil {
		t.Fatal(err)
	}
	res, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.EchoAgent(),
		Script: []voicetest.Step{voicetest.UserAudio(path), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Recording.Segments[0]; u.Audio().Rate != pcm.DefaultRate || u.AudioDuration() != ms(800) {
		t.Errorf("user audio %d Hz, %v", u.Audio().Rate, u.AudioDuration())
	}
	if a := res.Recording.Segments[1]; a.Role != voicetest.RoleAgent || a.AudioDuration() != ms(800) {
		t.Errorf("echo %v %v", a.Role, a.AudioDuration())
	}
	_, err = runVirtual(t, voicetest.Config{
		Agent:  fixtures.EchoAgent(),
		Script: []voicetest.Step{voicetest.UserAudio(filepath.Join(t.TempDir(), "missing.wav"))},
	})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "UserAudio") {
		t.Errorf("missing file: err = %v", err)
	}
}
