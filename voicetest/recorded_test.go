package voicetest_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// userTexts returns the user messages as the transcript shows them.
func userTexts(res *voicetest.Result) []string {
	var out []string
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleUser {
			out = append(out, m.DisplayText())
		}
	}
	return out
}

// TestUserAudioSources: UserAudio plays a file path, a pcm.Chunk, raw
// µ-law and A-law bytes, and an Audio with its text; the agent gets the
// audio at the session rate and the transcript shows the known text, what
// the user STT heard, or "(audio only)", never "(silence)".
func TestUserAudioSources(t *testing.T) {
	speech := fixtures.WordTones("one two three", pcm.Rate8k) // 1.2 s
	path := filepath.Join(t.TempDir(), "caller.wav")
	if err := pcm.WriteWAVFile(path, speech); err != nil {
		t.Fatal(err)
	}
	ulaw, alaw := pcm.EncodeMulaw(nil, speech.Samples), pcm.EncodeAlaw(nil, speech.Samples)
	cases := []struct {
		name string
		step voicetest.Step
		stt  voicetest.STT
		want string
	}{
		{"path", voicetest.UserAudio(path), nil, "(audio only)"},
		{"chunk", voicetest.UserAudio(speech), nil, "(audio only)"},
		{"mulaw", voicetest.UserAudio(voicetest.MuLawAudio(ulaw)), lengthSTT{}, "heard 1200ms"},
		{"alaw", voicetest.UserAudio(voicetest.ALawAudio(alaw)), lengthSTT{}, "heard 1200ms"},
		{"file with text", voicetest.UserAudio(voicetest.AudioFile(path).Says("One, two, three.")), lengthSTT{}, "One, two, three."},
		{"chunk heard by UserSTT", voicetest.UserAudio(speech), lengthSTT{}, "heard 1200ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tap := &tapAgent{Agent: fixtures.EchoAgent()}
			res, err := runVirtual(t, voicetest.Config{
				Agent: tap, UserSTT: tc.stt,
				Script: []voicetest.Step{tc.step, voicetest.AgentTurn()},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := userTexts(res); len(got) != 1 || got[0] != tc.want {
				t.Errorf("user messages %q, want [%q]", got, tc.want)
			}
			var d time.Duration
			for _, f := range tap.frames {
				if f.c.Rate != pcm.DefaultRate {
					t.Fatalf("a frame at %d Hz, want the session's %d", f.c.Rate, pcm.DefaultRate)
				}
				d += f.c.Duration()
			}
			if d != 1200*time.Millisecond {
				t.Errorf("the agent got %v of audio, want 1.2s", d)
			}
		})
	}
}

// TestUserAudioToTextAgent: a recording without its text reaches a
// text-only agent as what the user STT hears; without an STT it is a
// clear error.
func TestUserAudioToTextAgent(t *testing.T) {
	speech := fixtures.WordTones("one two", pcm.Rate16k)
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(fixtures.Reply{Text: "Okay"}), UserSTT: lengthSTT{},
		Script: []voicetest.Step{voicetest.UserAudio(speech), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := userTexts(res); len(got) != 1 || got[0] != "heard 800ms" {
		t.Errorf("user messages %q, want the STT's text", got)
	}
	_, err = runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(fixtures.Reply{Text: "Okay"}),
		Script: []voicetest.Step{voicetest.UserAudio(speech), voicetest.AgentTurn()},
	})
	var unsup *voicetest.UnsupportedError
	if !errors.As(err, &unsup) {
		t.Errorf("a recording without text to a text agent, no STT: %v, want an *UnsupportedError", err)
	}
}

// TestInterruptWithRecording barges in with recorded audio, no TTS.
func TestInterruptWithRecording(t *testing.T) {
	barge := fixtures.WordTones("stop please", pcm.Rate16k)
	for _, tc := range []struct {
		name    string
		step    voicetest.Step
		want    string
		wantSTT bool
	}{
		{"chunk", voicetest.Interrupt(barge, voicetest.After(time.Second)), "heard 800ms", true},
		{"audio with text", voicetest.Interrupt(voicetest.AudioChunk(barge).Says("Stop, please."), voicetest.AfterWords(2)), "Stop, please.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent:   fixtures.InterruptibleAgent(fixtures.Reply{Text: "one two three four five six seven eight nine ten"}, fixtures.Reply{Text: "Sure"}),
				UserSTT: lengthSTT{},
				Script:  []voicetest.Step{voicetest.UserSays("hi"), tc.step, voicetest.AgentTurn()},
				// No UserVoice: "hi" needs one, so give the tone TTS.
				UserVoice: &toneTTS{},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := userTexts(res)
			if len(got) != 2 || got[1] != tc.want {
				t.Errorf("user messages %q, want the barge-in as %q", got, tc.want)
			}
			interrupted := false
			for _, m := range res.Transcript {
				interrupted = interrupted || m.Interrupted
			}
			if !interrupted {
				t.Error("no agent message was interrupted")
			}
		})
	}
}

// TestSayOptions: one utterance's voice, speed, instructions and effects
// override the Config's, for that utterance only.
func TestSayOptions(t *testing.T) {
	tts := &speedTTS{} // persona_hooks_test.go: it records the requests
	tap := &tapAgent{Agent: fixtures.SilentAgent()}
	_, err := runVirtual(t, voicetest.Config{
		Agent: tap, UserVoice: tts, Voice: "nova",
		Script: []voicetest.Step{
			voicetest.UserSays("first", voicetest.WithVoice("onyx"), voicetest.WithSpeed(0.8),
				voicetest.WithInstructions("hesitant, elderly"), voicetest.WithEffects(pcm.Gain(-20))),
			voicetest.UserSays("second"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tts.reqs) != 2 {
		t.Fatalf("%d TTS requests, want 2", len(tts.reqs))
	}
	if r := tts.reqs[0]; r.Voice != "onyx" || r.Speed != 0.8 || r.Instructions != "hesitant, elderly" {
		t.Errorf("first request %+v, want voice onyx, speed 0.8, the instructions", r)
	}
	if r := tts.reqs[1]; r.Voice != "nova" || r.Speed != 0 || r.Instructions != "" {
		t.Errorf("second request %+v, want the Config's voice and nothing else", r)
	}
	// The effect: the first word 20 dB down, the second untouched.
	first, second := tap.frames[5].c, tap.frames[25].c
	if d := pcm.DBFS(pcm.RMS(second)) - pcm.DBFS(pcm.RMS(first)); d < 19 || d > 21 {
		t.Errorf("the first utterance is %.1f dB below the second, want 20 (WithEffects(Gain(-20)))", d)
	}
}

// TestRecordedStepErrors: bad recordings are script errors before the
// scenario starts, with the step named.
func TestRecordedStepErrors(t *testing.T) {
	for _, tc := range []struct {
		step voicetest.Step
		want string
	}{
		{voicetest.UserAudio(""), "path"},
		{voicetest.UserAudio(pcm.Chunk{Rate: 8000}), "no samples"},
		{voicetest.UserAudio(pcm.Chunk{}), "rate"},
		{voicetest.UserAudio(voicetest.MuLawAudio(nil)), "no bytes"},
		{voicetest.UserAudio(voicetest.Audio{}), "zero Audio"},
		{voicetest.Interrupt(voicetest.Audio{}, voicetest.After(0)), "zero Audio"},
		{voicetest.UserSays("hi", voicetest.SayOption{}), "zero SayOption"},
	} {
		_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{tc.step}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Config.Script[0]") {
			t.Errorf("%s: %v, want a script error about %q", tc.step, err, tc.want)
		}
	}
	names := map[string]voicetest.Step{
		`UserAudio("caller.wav")`:                          voicetest.UserAudio("caller.wav"),
		`UserAudio(MuLawAudio(3 bytes))`:                   voicetest.UserAudio(voicetest.MuLawAudio([]byte{1, 2, 3})),
		`UserAudio(AudioFile("x.wav").Says("hi"))`:         voicetest.UserAudio(voicetest.AudioFile("/tmp/x.wav").Says("hi")),
		`Interrupt(AudioChunk(1s at 8000 Hz), After(1s))`:  voicetest.Interrupt(pcm.Silence(8000, time.Second), voicetest.After(time.Second)),
		`UserSays("hi", WithVoice("ash"), WithSpeed(1.2))`: voicetest.UserSays("hi", voicetest.WithVoice("ash"), voicetest.WithSpeed(1.2)),
		`Interrupt("wait", AfterWords(2), WithEffects(…))`: voicetest.Interrupt("wait", voicetest.AfterWords(2), voicetest.WithEffects(pcm.Gain(3))),
	}
	for want, s := range names {
		if s.String() != want {
			t.Errorf("step name %q, want %q", s.String(), want)
		}
	}
}
