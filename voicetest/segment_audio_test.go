package voicetest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestSegmentAudioIsLaidOutOnDemand: an agent segment keeps the frames
// the agent sent and Audio lays them out on a new buffer each call (the
// agent's seven words, 400 ms each: fixtures.WordTones of its text);
// HasAudio and AudioDuration say the same without laying it out; a user
// segment's Audio is the audio sent.
func TestSegmentAudioIsLaidOutOnDemand(t *testing.T) {
	const reply = "Here is answer number 1 for you"
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: reply, Latency: 300 * time.Millisecond}),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("This is question number 1"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	segs := res.Recording.Segments
	if len(segs) != 2 || segs[0].Role != voicetest.RoleUser || segs[1].Role != voicetest.RoleAgent {
		t.Fatalf("segments %+v, want the user's and the agent's", segs)
	}
	user, agent := segs[0], segs[1]
	want := fixtures.WordTones(reply, pcm.DefaultRate)
	first := agent.Audio()
	if first.Rate != pcm.DefaultRate || !slices.Equal(first.Samples, want.Samples) {
		t.Fatalf("the agent's audio: %d samples at %d Hz, want WordTones of its reply (%d samples)", first.Len(), first.Rate, want.Len())
	}
	if !agent.HasAudio() || agent.AudioDuration() != 7*fixtures.WordDuration || agent.AudioDuration() != first.Duration() {
		t.Errorf("HasAudio %v, AudioDuration %v; want true and %v", agent.HasAudio(), agent.AudioDuration(), 7*fixtures.WordDuration)
	}
	first.Samples[want.Len()/2]++ // the caller's own buffer
	if again := agent.Audio(); !slices.Equal(again.Samples, want.Samples) {
		t.Error("Audio returned a buffer a previous call's caller had modified")
	}
	if u := user.Audio(); !slices.Equal(u.Samples, fixtures.WordTones("This is question number 1", pcm.DefaultRate).Samples) ||
		user.AudioDuration() != 5*fixtures.WordDuration || !user.HasAudio() {
		t.Errorf("the user's audio: %d samples, %v, want the TTS's 2 s", u.Len(), user.AudioDuration())
	}
	s := voicetest.Segment{Role: voicetest.RoleAgent}
	if s.HasAudio() || !s.Audio().IsEmpty() || s.AudioDuration() != 0 {
		t.Error("a Segment without audio reports some")
	}
	if s = s.WithAudio(want); !s.HasAudio() || s.AudioDuration() != want.Duration() || !slices.Equal(s.Audio().Samples, want.Samples) {
		t.Error("WithAudio did not give the Segment its audio")
	}
}
