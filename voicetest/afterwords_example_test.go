package voicetest_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/internal/testlog"
	"github.com/voicetest-go/voicetest/voicetest"
)

// An adapter whose agent sends its whole reply as text before the audio
// (as ElevenLabs does) declares Capabilities.TranscriptAhead, and
// AfterWords(3) then barges in once the third word has played, not when
// the text arrives. The reply here is five words of 400 ms (the rate of
// Config.WordsPerMinute's default, 150), so the barge-in comes 1.2 s into
// it. It prints:
//
//	barged in once three words had played: true
//	interrupted: one two three four five
//
// (go test compiles this example; TestExampleAfterWordsTranscriptAhead
// runs it on virtual time and checks what it prints.)
func ExampleAfterWords_transcriptAhead() {
	agent := &replayAgent{
		caps: voicetest.Capabilities{Adapter: "ahead", Audio: true, StreamingTranscripts: true, TranscriptAhead: true},
		// The text, then 2 s of audio, all 100 ms after the user's input.
		events: aheadReply("one two three four five", 0, false, false),
	}
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:     agent,
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hello"), voicetest.Interrupt("stop", voicetest.AfterWords(3))},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var start, at time.Duration = -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Type == voicetest.EventAgentStartSpeaking && start < 0:
			start = e.At
		case e.Type == voicetest.EventUserInterrupt && at < 0:
			at = e.At
		}
	}
	fmt.Println("barged in once three words had played:", at-start >= 1200*time.Millisecond)
	fmt.Println("interrupted:", res.Transcript[1].Text)
}

// TestExampleAfterWordsTranscriptAhead runs ExampleAfterWords_transcriptAhead
// inside a testing/synctest bubble and checks that it prints what its doc
// comment shows. As a runnable example it held its test binary for 2.1 s
// of real time (the reply's 2 s of audio playing out, at the binary's very
// end); in the bubble the same code runs on virtual time, with the same
// agent, script and checks. The runner's AfterWords logic reads the
// conversation's clock, whichever it is; TestAfterWordsTranscriptAhead
// checks the exact offsets of this and six other cases, also on virtual
// time. Not parallel: it redirects os.Stdout, which is the process's.
func TestExampleAfterWordsTranscriptAhead(t *testing.T) {
	const want = "barged in once three words had played: true\ninterrupted: one two three four five\n"
	if got := testlog.Stdout(t, func() { synctest.Test(t, func(*testing.T) { ExampleAfterWords_transcriptAhead() }) }); got != want {
		t.Errorf("ExampleAfterWords_transcriptAhead printed:\n%s\nwant:\n%s", got, want)
	}
}
