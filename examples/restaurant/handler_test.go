package restaurant_test

// The restaurant agent in process, through handler.New, on virtual
// time: every scenario below takes milliseconds of wall time however long
// the conversation, and its timeline is the same on every run, so the
// tests compare transcripts and timelines exactly.

import (
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// thinkTime is how long the in-process agent takes to answer.
const thinkTime = 250 * time.Millisecond

// bookedTable checks, at the end of a scenario, that the agent called
// book_table with want and that the tool succeeded: the conversation's
// tool events, read through State.Expect.
func bookedTable(want map[string]any) voicetest.Step {
	return voicetest.Check(func(st *voicetest.State) error {
		return st.Expect().
			ContainsToolCall(restaurant.ToolBookTable, want).
			Err()
	})
}

// TestHandlerText runs the agent in text mode: the caller's lines arrive
// as text and the agent's words as transcripts, with speaking times at 150
// words a minute. Each subtest shows one feature.
func TestHandlerText(t *testing.T) {
	t.Parallel()
	garcia2 := map[string]any{"party": 2, "day": "friday", "time": "19:30", "name": "Garcia"}
	for _, tc := range []struct {
		name   string
		script []voicetest.Step
		// transcript is the whole conversation, exactly.
		transcript string
		// timeline, when set, must appear in the timeline.
		timeline []string
		// interrupted is the number of agent messages cut short.
		interrupted int
	}{
		{
			name: "scripted booking",
			script: []voicetest.Step{
				voicetest.AgentTurn(), // the greeting
				voicetest.UserSays("A table for two, please."),
				voicetest.AgentTurn(),
				voicetest.UserSays("Friday at seven thirty."),
				voicetest.AgentTurn(),
				voicetest.UserSays("The name is Garcia."),
				voicetest.AgentTurn(),
				voicetest.UserSays("Yes, that's right."),
				voicetest.AgentTurn(), // goodbye, then the agent hangs up
				bookedTable(garcia2),
			},
			transcript: `agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
user: A table for two, please.
agent: A table for two. What day and time would you like?
user: Friday at seven thirty.
agent: On Friday at seven thirty. What name is the booking under?
user: The name is Garcia.
agent: So that's a table for two on Friday at seven thirty, under the name Garcia. Is that right?
user: Yes, that's right.
agent: You're all booked. See you on Friday. Goodbye!
`,
			timeline: []string{
				`tool_call book_table {"party":2,"day":"friday","time":"19:30","name":"Garcia"}`,
				`tool_result book_table {"id":"BV-0001","party":2,"day":"friday","time":"19:30","name":"Garcia"}`,
				`agent_hang_up "goodbye"`,
			},
		},
		{
			// The caller cuts the read-back short three words in;
			// the agent stops, hears the correction and reads back
			// the new party size.
			name: "correction barge-in",
			script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("Two people, Friday at seven thirty."),
				voicetest.AgentTurn(),
				voicetest.UserSays("Garcia."),
				voicetest.Interrupt("Sorry, make it eight.", voicetest.AfterWords(3)),
				voicetest.AgentTurn(),
				voicetest.UserSays("Yes."),
				voicetest.AgentTurn(),
				bookedTable(map[string]any{"party": 8, "name": "Garcia"}),
			},
			transcript: `agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
user: Two people, Friday at seven thirty.
agent: On Friday at seven thirty. What name is the booking under?
user: Garcia.
agent: So that's a table for two on Friday at seven thirty, under the name Garcia. Is that right?
user: Sorry, make it eight.
agent: No problem. So that's a table for eight on Friday at seven thirty, under the name Garcia. Is that right?
user: Yes.
agent: You're all booked. See you on Friday. Goodbye!
`,
			timeline:    []string{`user_interrupt "Sorry, make it eight."`, "agent_interrupted"},
			interrupted: 1,
		},
		{
			// Six seconds of silence: after five the agent asks
			// whether the caller is still there, and repeats its
			// question.
			name: "silence re-prompt",
			script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("Four people."),
				voicetest.AgentTurn(),
				voicetest.Silence(6 * time.Second),
				voicetest.AgentTurn(),
			},
			transcript: `agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
user: Four people.
agent: A table for four. What day and time would you like?
agent: Are you still there? What day and time would you like?
`,
			timeline: []string{"silence duration=6000ms"},
		},
		{
			name: "DTMF menu",
			script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.DTMF("2"), // opening hours
				voicetest.AgentTurn(),
				voicetest.DTMF("1"), // book a table
				voicetest.AgentTurn(),
			},
			transcript: `agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
agent: We are open every day from noon until ten at night. How many people is the table for?
agent: How many people is the table for?
`,
			timeline: []string{`dtmf "2"`, `dtmf "1"`},
		},
		{
			// A caller who asks for a repeat, and one the agent
			// cannot understand.
			name: "repeat and not understood",
			script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("A table for three."),
				voicetest.AgentTurn(),
				voicetest.UserSays("What?"),
				voicetest.AgentTurn(),
				voicetest.UserSays("Banana."),
				voicetest.AgentTurn(),
			},
			transcript: `agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
user: A table for three.
agent: A table for three. What day and time would you like?
user: What?
agent: What day and time would you like?
user: Banana.
agent: Sorry, I didn't catch that. What day and time would you like?
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := voicetest.Scenario(t, voicetest.Config{
				// The agent takes 250 ms to answer, as a model would;
				// on virtual time that costs nothing.
				Agent:  restaurant.Agent(&restaurant.Book{}, handler.WithThinkTime(thinkTime)),
				Script: tc.script,
			})
			if !res.Success {
				t.Fatalf("scenario failed: %v", res.Err)
			}
			if got := res.TranscriptText(); got != tc.transcript {
				t.Errorf("transcript:\n got:\n%s\nwant:\n%s", got, tc.transcript)
			}
			timeline := res.TimelineText()
			for _, want := range tc.timeline {
				if !strings.Contains(timeline, want) {
					t.Errorf("timeline lacks %q:\n%s", want, timeline)
				}
			}
			// A text agent's transcript holds the whole text it meant
			// to say; the message is marked as cut short.
			interrupted := 0
			for _, m := range res.Transcript {
				if m.Interrupted {
					interrupted++
				}
			}
			if interrupted != tc.interrupted {
				t.Errorf("%d interrupted agent messages, want %d", interrupted, tc.interrupted)
			}
		})
	}
}

// TestHandlerPersona lets a persona (a caller who answers whatever is
// asked) talk to the agent with no script: Proceed until the agent hangs
// up. Three callers, each with its own answers.
func TestHandlerPersona(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		caller caller
		want   map[string]any
	}{
		{caller{party: "A table for four, please.", when: "Tomorrow at eight.", name: "It's Chen."},
			map[string]any{"party": 4, "day": "tomorrow", "time": "20:00", "name": "Chen"}},
		{caller{party: "Just two of us.", when: "Saturday, half past six.", name: "Patel."},
			map[string]any{"party": 2, "day": "saturday", "time": "18:30", "name": "Patel"}},
		{caller{party: "Party of six.", when: "Sunday at noon.", name: "My name is Nguyen."},
			map[string]any{"party": 6, "day": "sunday", "time": "12:00", "name": "Nguyen"}},
	} {
		t.Run(tc.caller.name, func(t *testing.T) {
			t.Parallel()
			book := &restaurant.Book{}
			user := tc.caller
			res := voicetest.Scenario(t, voicetest.Config{
				Agent: restaurant.Agent(book),
				User:  &user,
				// No Script: the User and the agent take turns until
				// the agent hangs up.
			})
			if !res.Success {
				t.Fatalf("scenario failed: %v", res.Err)
			}
			if err := res.State.Expect().ContainsToolCall(restaurant.ToolBookTable, tc.want).Err(); err != nil {
				t.Error(err)
			}
			if got := book.Reservations(); len(got) != 1 {
				t.Errorf("the book holds %d reservations, want 1: %+v", len(got), got)
			}
			if res.Ended != "the agent hung up" {
				t.Errorf("Ended = %q, want the agent to hang up", res.Ended)
			}
		})
	}
}

// TestHandlerAudio runs the same agent in audio mode, still in process and
// on virtual time: the caller's lines are spoken by flite, the agent hears
// them through pocketsphinx (with its phrase grammar) and speaks with
// flite. Every engine call replays from testdata/voicetest/cache, so this
// needs no engine; -voicetest.record re-records with the engines
// installed.
func TestHandlerAudio(t *testing.T) {
	t.Parallel()
	tts := speech.TTSForTest(t, "flite/slt")
	stt := speech.STTForTest(t, "pocketsphinx")
	book := &restaurant.Book{}
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: restaurant.Agent(book, handler.WithThinkTime(thinkTime),
			handler.AudioMode(tts, restaurant.TelephoneSTT(stt, restaurant.CallerPhrases()))),
		UserVoice: tts,
		Rate:      speech.PocketsphinxRate,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two, please."),
			voicetest.AgentTurn(),
			voicetest.UserSays("Friday at seven thirty."),
			voicetest.AgentTurn(),
			voicetest.UserSays("The name is Garcia."),
			voicetest.Interrupt("Sorry, make it eight.", voicetest.AfterWords(3)),
			voicetest.AgentTurn(),
			voicetest.UserSays("Yes, that's right."),
			voicetest.AgentTurn(),
			bookedTable(map[string]any{"party": 8, "day": "friday", "time": "19:30", "name": "Garcia"}),
		},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	// What the agent heard, through its own STT, shows in the user
	// transcript events it streams; what it said, in its transcript.
	if got, want := res.State.LastAgentText(), "You're all booked. See you on Friday. Goodbye!"; got != want {
		t.Errorf("last agent message = %q, want %q", got, want)
	}
	var interrupted int
	for _, m := range res.Transcript {
		if m.Interrupted {
			interrupted++
		}
	}
	if interrupted != 1 {
		t.Errorf("%d interrupted agent messages, want 1:\n%s", interrupted, res.TranscriptText())
	}
	if n := len(res.Latency.InterruptResponse); n != 1 {
		t.Errorf("%d interrupt response times, want 1", n)
	}
	// On virtual time the latencies are exact: the think time, every
	// turn.
	for i, l := range res.Latency.PerTurn {
		if l != thinkTime {
			t.Errorf("turn %d latency %v, want the think time %v", i+1, l, thinkTime)
		}
	}
}
