package personas_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// screenAgent shows the free times on the caller's screen without saying
// them, then books what the caller picks.
func screenAgent() *fixtures.FakeAgent {
	return textAgent("Bella Vista, how can I help?",
		fixtures.Reply{Text: "I have put the free times on your screen. Which one would you like?",
			DataName: "booking_form", Data: json.RawMessage(`{"day":"friday","free":["19:00","21:30"]}`)},
		fixtures.Reply{Text: "Booked. Goodbye."},
	)
}

var firstSlot = regexp.MustCompile(`<item>(\d\d:\d\d)</item>`)

// answerFromScreen is the double's caller: it asks for a table, then
// picks the first time its screen shows (or says it sees none).
func answerFromScreen(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
	last := req.Messages[len(req.Messages)-1].Content
	if last == "Booked. Goodbye." {
		return call("hang_up", map[string]any{"text": "Thanks, bye.", "reason": "booked"}), nil
	}
	if len(req.Messages) <= 2 {
		return say("A table for two on Friday, please."), nil
	}
	if m := firstSlot.FindStringSubmatch(last); m != nil {
		return say("The " + m[1] + " one, please."), nil
	}
	return say("I can't see any times."), nil
}

func screenRun(t *testing.T, view voicetest.DataView, user *personas.LLMUser) (*voicetest.Result, []map[string]any) {
	t.Helper()
	srv := fakeopenai.New(t)
	srv.HandleChat(answerFromScreen)
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Name: t.Name(), Agent: screenAgent(), User: user.With(newClient(t, srv, t.TempDir(), cache.Off)),
		DataView: view, Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{Greeting: time.Second, FirstChunk: 5 * time.Second, Engine: 20 * time.Second},
	})
	require.NotNil(t, res, "invalid config: %v", err)
	require.NoError(t, res.Err)
	return res, chats(t, srv)
}

// The scenario's data view reaches the LLM persona's request: the payload
// as XML among the agent's turn, and a system prompt that says the caller
// can see it; the caller answers from it.
func TestLLMSeesTheScenarioDataView(t *testing.T) {
	res, reqs := screenRun(t, voicetest.XMLView("screen"), personas.LLM(personas.Patient, "Book a table for two on Friday."))
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{
		"user: Bella Vista, how can I help?",
		"assistant: A table for two on Friday, please.",
		`user: <screen name="booking_form"> |   <day>friday</day> |   <free> |     <item>19:00</item> |     <item>21:30</item> |   </free> | </screen> | I have put the free times on your screen. Which one would you like?`,
	}, roles(reqs[1], 400)[1:])
	system := reqs[1]["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Contains(t, system, "the agent shows you things on your screen")
	assert.NotContains(t, system, "Lines in square brackets")
	assert.Equal(t, []string{
		"agent: Bella Vista, how can I help?",
		"user: A table for two on Friday, please.",
		"agent: I have put the free times on your screen. Which one would you like?",
		"user: The 19:00 one, please.",
		"agent: Booked. Goodbye.",
		"user: Thanks, bye.",
	}, lines(res))
}

// Without a scenario view the persona keeps its bracketed notes (so
// recorded caches stay valid), and a persona's own Payloads wins over the
// scenario's view.
func TestLLMPayloadViewPrecedence(t *testing.T) {
	_, reqs := screenRun(t, nil, personas.LLM(personas.Patient, "Book a table for two on Friday."))
	require.Len(t, reqs, 3)
	assert.Equal(t, `user: [the agent sent booking_form: {"day":"friday","free":["19:00","21:30"]}] | I have put the free times on your screen. Which one would you like?`, roles(reqs[1], 400)[3])
	system := reqs[1]["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Contains(t, system, "Lines in square brackets")

	own := personas.LLM(personas.Patient, "Book a table for two on Friday.").Payloads(voicetest.XMLView("form"))
	res, reqs := screenRun(t, voicetest.XMLView("screen"), own)
	require.Len(t, reqs, 3)
	assert.Contains(t, roles(reqs[1], 400)[3], `user: <form name="booking_form">`)
	assert.Equal(t, "user: The 19:00 one, please.", lines(res)[3])

	hidden := personas.LLM(personas.Patient, "Book a table for two on Friday.").Payloads(nil)
	res, _ = screenRun(t, voicetest.XMLView("screen"), hidden)
	assert.Equal(t, "user: I can't see any times.", lines(res)[3])
}
