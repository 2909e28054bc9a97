package voicetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestStepsAfterExpectHangUp pins what ExpectHangUp's doc says may follow
// it: the steps that do not need the line are accepted, every step that
// needs it is a script error naming both steps.
func TestStepsAfterExpectHangUp(t *testing.T) {
	script := func(s voicetest.Step) []voicetest.Step {
		return []voicetest.Step{voicetest.AgentTurn(), voicetest.ExpectHangUp(), s}
	}
	allowed := []voicetest.Step{
		voicetest.Check(func(*voicetest.State) error { return nil }),
		voicetest.Checkpoint("the agent said goodbye"),
		voicetest.Verdict(),
		voicetest.Sleep(time.Second),
		voicetest.Succeed("done"),
		voicetest.Fail("done"),
		voicetest.Inject(voicetest.RoleUser, "noted"),
		voicetest.Do("read", func(context.Context, *voicetest.Control) error { return nil }),
	}
	for _, s := range allowed {
		_, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "Goodbye."}), UserVoice: &toneTTS{},
			Script: script(s),
		})
		if err != nil && strings.Contains(err.Error(), "comes after ExpectHangUp()") {
			t.Errorf("%s after ExpectHangUp was refused: %v", s, err)
		}
	}
	needLine := []voicetest.Step{
		voicetest.UserSays("hello?"), voicetest.UserTurn(), voicetest.UserAudio(fixtures.WordTones("hi", 16000)),
		voicetest.AgentTurn(), voicetest.Interrupt("wait", voicetest.AfterSpeechStarts()), voicetest.Silence(time.Second),
		voicetest.DTMF("1"), voicetest.Proceed(1),
	}
	for _, s := range needLine {
		_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.EchoAgent(), Script: script(s)})
		if err == nil || !strings.Contains(err.Error(), "("+s.String()+") comes after ExpectHangUp() at Config.Script[1]") {
			t.Errorf("%s after ExpectHangUp: err = %v, want a script error naming both steps", s, err)
		}
	}
}
