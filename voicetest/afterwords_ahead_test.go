package voicetest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// aheadReply is the events of a reply whose transcript runs ahead of its
// audio, as a remote agent sends them: 100 ms after the user's input the
// whole text (or all of its word deltas at once), then the speech —
// fixtures.WordTones, 400 ms a word — in 100 ms chunks, one every gap
// (0: all at once), then AgentTurnEnd when turnEnd is set.
func aheadReply(text string, gap time.Duration, deltas, turnEnd bool) []timedEvent {
	const first = 100 * time.Millisecond
	var evs []timedEvent
	if deltas {
		words := strings.Fields(text)
		for i, w := range words {
			if i < len(words)-1 {
				w += " "
			}
			evs = append(evs, timedEvent{first, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: w}})
		}
	} else {
		evs = append(evs, timedEvent{first, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: text, Final: true}})
	}
	at := first
	for i, f := range fixtures.WordTones(text, pcm.DefaultRate).Frames(100 * time.Millisecond) {
		at = first + time.Duration(i)*gap
		evs = append(evs, timedEvent{at, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: f}})
	}
	if turnEnd {
		evs = append(evs, timedEvent{at, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}})
	}
	return evs
}

// aheadCaps are the capabilities of a remote-like agent whose transcript
// runs ahead of its audio.
func aheadCaps(turnEnd bool) voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "ahead", Audio: true, StreamingTranscripts: true,
		TranscriptAhead: true, TurnEnd: turnEnd, VirtualTime: true}
}

// bargeInOffset returns how long after the agent started speaking the
// user barged in.
func bargeInOffset(t *testing.T, res *voicetest.Result) time.Duration {
	t.Helper()
	var start, at time.Duration = -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Type == voicetest.EventAgentStartSpeaking && start < 0:
			start = e.At
		case e.Type == voicetest.EventUserInterrupt && at < 0:
			at = e.At
		}
	}
	if start < 0 || at < 0 {
		t.Fatalf("no agent_start_speaking or user_interrupt in the timeline:\n%s", res.TimelineText())
	}
	return at - start
}

// With a transcript that runs ahead of the audio, AfterWords(3) barges in
// when the third word has played — 1.2 s into a reply of 400 ms words —
// however early the text came: the words are spread over the audio, whose
// length is taken to be at least the words' at Config.WordsPerMinute until
// the turn is marked over. The scenarios run on virtual time, so the
// offsets are exact.
func TestAfterWordsTranscriptAhead(t *testing.T) {
	const reply = "one two three four five" // 2 s of speech
	for _, tc := range []struct {
		name    string
		caps    voicetest.Capabilities
		events  []timedEvent
		wpm     int
		want    time.Duration
		comment string
	}{
		{name: "whole text, audio at once", caps: aheadCaps(false),
			events: aheadReply(reply, 0, false, false), want: ms(1200)},
		{name: "whole text, audio in real time", caps: aheadCaps(false),
			events: aheadReply(reply, 100*time.Millisecond, false, false), want: ms(1200)},
		{name: "word deltas, audio in real time", caps: aheadCaps(false),
			events: aheadReply(reply, 100*time.Millisecond, true, false), want: ms(1200)},
		{name: "audio at once, turn end, slow WordsPerMinute", caps: aheadCaps(true),
			events: aheadReply(reply, 0, false, true), wpm: 100, want: ms(1200),
			comment: "the turn end says all the audio is in: the rate plays no part"},
		{name: "audio in real time, slow WordsPerMinute", caps: aheadCaps(false),
			events: aheadReply(reply, 100*time.Millisecond, false, false), wpm: 100, want: ms(1800),
			comment: "five words at 100 a minute take 3 s, longer than the 2 s of audio: late"},
		{name: "audio in real time, fast WordsPerMinute", caps: aheadCaps(false),
			events: aheadReply(reply, 100*time.Millisecond, false, false), wpm: 200, want: ms(900),
			comment: "five words at 200 a minute take 1.5 s, so until more than 1.5 s of audio is in, 0.9 s holds three: early"},
		{name: "not declared: counts the text as it arrives",
			caps:   voicetest.Capabilities{Adapter: "ahead", Audio: true, StreamingTranscripts: true, VirtualTime: true},
			events: aheadReply(reply, 100*time.Millisecond, false, false), want: 0,
			comment: "the early barge-in TranscriptAhead exists to prevent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: &replayAgent{caps: tc.caps, events: tc.events}, UserVoice: &toneTTS{},
				WordsPerMinute: tc.wpm,
				Script:         []voicetest.Step{voicetest.UserSays("hello"), voicetest.Interrupt("stop", voicetest.AfterWords(3))},
			})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, res.TimelineText())
			}
			if got := bargeInOffset(t, res); got != tc.want {
				t.Errorf("barged in %v after the agent started, want %v (%s)\n%s", got, tc.want, tc.comment, res.TimelineText())
			}
			msg := res.Transcript[1]
			if msg.Role != voicetest.RoleAgent || !msg.Interrupted || msg.Text != reply {
				t.Errorf("agent message %+v, want the interrupted reply", msg)
			}
		})
	}
}

// A turn that ends before n words were said is still an error, whether the
// agent marks its turn end or the runner waits for tail silence; when the
// text had the words but the estimate lagged (an agent faster than
// Config.WordsPerMinute), the error says so and what to set.
func TestAfterWordsTranscriptAheadTurnEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   voicetest.Capabilities
		events []timedEvent
		wpm    int
		want   []string
	}{
		{name: "turn end", caps: aheadCaps(true),
			events: aheadReply("one two", 0, false, true),
			want:   []string{"finished its turn after 2 words, before the 3 that AfterWords(3) waits for"}},
		{name: "tail silence", caps: aheadCaps(false),
			events: aheadReply("one two", 100*time.Millisecond, true, false),
			want:   []string{"finished its turn after 2 words, before the 3 that AfterWords(3) waits for"}},
		{name: "agent faster than WordsPerMinute", caps: aheadCaps(false),
			events: aheadReply("one two three four", 100*time.Millisecond, false, false), wpm: 60,
			want: []string{"finished its turn of 4 words (1.6s of audio) before voicetest reckoned 3 of them heard",
				"Config.WordsPerMinute (60)", "about 150 words a minute"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: &replayAgent{caps: tc.caps, events: tc.events}, UserVoice: &toneTTS{},
				WordsPerMinute: tc.wpm,
				Script:         []voicetest.Step{voicetest.UserSays("hello"), voicetest.Interrupt("stop", voicetest.AfterWords(3))},
			})
			if err == nil {
				t.Fatalf("Run succeeded, want an error\n%s", res.TimelineText())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, e := range res.Timeline {
				if e.Type == voicetest.EventUserInterrupt {
					t.Errorf("the user barged in at %v after the turn ended\n%s", e.At, res.TimelineText())
				}
			}
		})
	}
}

// The estimate follows the text received: words that arrive later (a
// second utterance of the turn) add to the count only from then on, and
// the barge-in waits for the audio that says them.
func TestAfterWordsTranscriptAheadLateText(t *testing.T) {
	rate := pcm.DefaultRate
	events := []timedEvent{
		{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "one two", Final: true}},
		{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: fixtures.WordTones("one two", rate)}},
		// The second utterance's text and audio arrive once the first has
		// played (at 900 ms).
		{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "three four", Final: true}},
		{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: fixtures.WordTones("three four", rate)}},
		{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}},
	}
	res, err := runVirtual(t, voicetest.Config{
		Agent: &replayAgent{caps: aheadCaps(true), events: events}, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.Interrupt("stop", voicetest.AfterWords(3))},
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.TimelineText())
	}
	if got := bargeInOffset(t, res); got != ms(1200) {
		t.Errorf("barged in %v after the agent started, want 1.2s\n%s", got, res.TimelineText())
	}
}

// Under PaceFast the runner does not wait for the agent's audio to play
// before it calls a turn over, but words counted as their audio plays
// (a transcript ahead of the audio, or words estimated from speech time)
// need that playback: AfterWords(3) still barges in at the third word,
// not with an error that the turn ended first.
func TestAfterWordsPaceFast(t *testing.T) {
	const reply = "one two three four five" // 2 s of speech
	for _, tc := range []struct {
		name  string
		agent voicetest.Agent
	}{
		{"transcript ahead, audio at once", &replayAgent{caps: aheadCaps(false), events: aheadReply(reply, 0, false, false)}},
		{"transcript ahead, audio in real time", &replayAgent{caps: aheadCaps(false), events: aheadReply(reply, 100*time.Millisecond, false, false)}},
		{"audio only, words from speech time", fixtures.Fake(fixtures.FakeConfig{NoTranscripts: true, NoTurnEnd: true,
			Replies: []fixtures.Reply{{Text: reply, Latency: 100 * time.Millisecond}}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: tc.agent, UserVoice: &toneTTS{}, Pacing: voicetest.PaceFast,
				Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.Interrupt("stop", voicetest.AfterWords(3))},
			})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, res.TimelineText())
			}
			if got := bargeInOffset(t, res); got != ms(1200) {
				t.Errorf("barged in %v after the agent started, want 1.2s (the third 400 ms word played)\n%s", got, res.TimelineText())
			}
		})
	}
}
