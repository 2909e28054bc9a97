package clinic_test

// An LLM-played caller that reads the agent's screen and waits through its
// "one moment", replayed from the committed cache.
//
// No language model can run on the machine this example was recorded on,
// so the committed answers (testdata/voicetest/cache/llm, provider
// "fakeopenai", model "fakeopenai-double", the double's own names, which
// each answer also records as its producer) were produced by standinCaller
// below, served by the project's OpenAI-compatible test double
// (internal/peers/fakeopenai) on 127.0.0.1: a SCRIPTED STAND-IN for a chat
// model, which answers the persona's requests by rules on what they hold,
// not by reasoning. The persona builds its real prompt and tool schemas,
// the llm client sends them over HTTP, and the cache stores what came
// back; it shows the flow and what reaches the model (the XML of the
// screen), not what a real model would say. Re-record the stand-in's
// answers (and the goldens) with
//
//	go run ./cmd/voicetest-update ./examples/clinic -- -clinic.standin
//
// or against a real model (new entries under its provider and model;
// review the golden diff):
//
//	OPENAI_API_KEY=… VOICETEST_LLM_MODEL=gpt-4o-mini go run ./cmd/voicetest-update ./examples/clinic

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/examples/clinic"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

var useStandin = flag.Bool("clinic.standin", false, "answer the persona's LLM requests with the scripted stand-in (to re-record its committed answers)")

// llmForTest returns the persona's model: the stand-in's committed
// answers (served by the stand-in itself under -clinic.standin), or a
// real model when VOICETEST_LLM_MODEL names one.
func llmForTest(t *testing.T) *llm.Client {
	t.Helper()
	if os.Getenv(llm.EnvModel) != "" {
		return llm.ForTest(t)
	}
	opts := []llm.Option{llm.WithProvider(fakeopenai.Provider), llm.WithModel(fakeopenai.Model)}
	if *useStandin {
		srv := fakeopenai.New(t)
		srv.HandleChat(standinCaller)
		opts = append(opts, llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()))
	}
	return llm.ForTest(t, opts...)
}

// TestCallerReadsTheScreenAndWaits: the caller asks for a check-up; the
// agent says "one moment" and goes quiet for three seconds while it looks
// the calendar up; the caller waits (a counted wait on the timeline),
// then picks the earliest time from what the agent showed on its screen,
// which the agent never said aloud.
func TestCallerReadsTheScreenAndWaits(t *testing.T) {
	cal := clinic.NewCalendar("tuesday", "09:30", "14:00", "16:15")
	res := voicetest.Scenario(t, voicetest.Config{
		Description: "Northside Dental's booking line. The receptionist shows free times on the caller's screen.",
		Agent:       handler.New(clinic.Agent(cal), handler.WithThinkTime(400*time.Millisecond)),
		User: personas.LLM(personas.Patient,
			"Book a dental check-up at the earliest time the practice offers.").With(llmForTest(t)),
		// What the caller sees of the agent's data payloads.
		DataView: voicetest.XMLView("screen"),
		// The caller speaks once the agent has been quiet for a second; an
		// agent that said "one moment" gets the wait the persona chooses.
		TurnTaking: voicetest.TurnTaking{Idle: time.Second},
		MaxTurns:   4,
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	if got := cal.Booked(); !slices.Equal(got, []string{"09:30"}) {
		t.Errorf("booked %v, want the earliest time on the screen, 09:30", got)
	}
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent && strings.Contains(m.Text, "09:30") && !strings.Contains(m.Text, "booked") {
			t.Errorf("the agent said the time aloud (%q): the caller must read it from the screen", m.Text)
		}
	}
	// One wait, from a second after "one moment" ended to the agent's
	// return LookupTime after it: exactly 2 s on virtual time.
	var waits []voicetest.Event
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventUserWait || e.Type == voicetest.EventUserWaitLimit {
			waits = append(waits, e)
		}
	}
	if len(waits) != 1 || waits[0].Type != voicetest.EventUserWait || waits[0].Duration != clinic.LookupTime-time.Second {
		t.Errorf("wait events %+v, want one user_wait of %v", waits, clinic.LookupTime-time.Second)
	}
	if w := res.Metrics.Waits; w.Count != 1 || w.Time != 2*time.Second || w.GaveUp != 0 {
		t.Errorf("Metrics.Waits = %+v", w)
	}
	// Gym's TTFAB beside our latency: the agent's text-only speech has
	// no audio, so only the turn durations and words are Gym's here.
	g := res.Metrics.Gym
	t.Logf("Gym: user turns mean %v median %v, agent turns mean %v median %v, words user %d agent %d; our latency p50 %v",
		g.UserTurn.Mean, g.UserTurn.P50, g.AgentTurn.Mean, g.AgentTurn.P50, g.UserWords.Total, g.AgentWords.Total, res.Metrics.Latency.P50)
}

var screenTime = regexp.MustCompile(`<item>(\d\d:\d\d)</item>`)

// standinCaller is the scripted stand-in for the persona's model (see the
// file comment). It reads the agent's latest words and screen, the last
// user message of the request (the persona sees the roles reversed):
// after the greeting it asks for a check-up; while the agent asks it to
// hold, it waits; once the screen shows times, it picks the first; after
// the goodbye, it hangs up.
func standinCaller(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
	last := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = req.Messages[i].Content
			break
		}
	}
	lower := strings.ToLower(last)
	call := func(name, args string) fakeopenai.ChatReply {
		return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: name, Arguments: args}}}
	}
	switch m := screenTime.FindStringSubmatch(last); {
	case strings.Contains(lower, "goodbye"):
		return call("hang_up", `{"text":"Thank you, bye.","reason":"the appointment is booked"}`), nil
	case m != nil:
		return call("say", `{"text":"The `+m[1]+` one, please."}`), nil
	case strings.Contains(lower, "one moment"):
		return call("wait", `{"seconds":8,"reason":"the receptionist is checking the calendar"}`), nil
	case strings.Contains(lower, "how can i help"):
		return call("say", `{"text":"Hello, I would like to book a check-up, please."}`), nil
	}
	return call("say", `{"text":"Sorry, could you say that again?"}`), nil
}
