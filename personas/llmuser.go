package personas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// Defaults of an LLM user.
const (
	// DefaultMaxWait bounds one wait of an LLM user.
	DefaultMaxWait = 15 * time.Second
	// DefaultMaxWaits is how many waits in a row an LLM user may make
	// before it must speak or hang up.
	DefaultMaxWaits = 3
	// DefaultSeed is the sampling seed of LLM users and attackers.
	DefaultSeed int64 = 1
	// minWait is the shortest wait; shorter requests are raised to it.
	minWait = time.Second
	// maxLineTokens bounds one answer of the model playing the caller.
	maxLineTokens = 300
)

// ErrEmptyAnswer reports a model that gave no usable answer twice in a
// row for one turn (an empty line, or no decision at all).
var ErrEmptyAnswer = errors.New("personas: the model gave an empty answer")

// The decision tools of an LLM user. The model must call exactly one.
const (
	toolSay    = "say"
	toolWait   = "wait"
	toolHangUp = "hang_up"
)

var (
	saySpec = voicetest.ToolSpec{
		Name:        toolSay,
		Description: "Say your next line to the agent, as the caller.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"What you say: one or two short spoken sentences."}},"required":["text"],"additionalProperties":false}`),
	}
	hangUpSpec = voicetest.ToolSpec{
		Name:        toolHangUp,
		Description: "End the call: your goal is met, or the call cannot get anywhere.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"A short goodbye to say before hanging up, or empty."},"reason":{"type":"string","description":"Why you hang up."}},"required":["text","reason"],"additionalProperties":false}`),
	}
)

func waitSpec(max time.Duration) voicetest.ToolSpec {
	return voicetest.ToolSpec{
		Name:        toolWait,
		Description: "Stay silent and let the agent continue, because it asked you to hold on or is still working on something.",
		Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"seconds":{"type":"number","description":"How long you wait, 1 to %d seconds."},"reason":{"type":"string","description":"What you are waiting for."}},"required":["seconds","reason"],"additionalProperties":false}`,
			int(max/time.Second))),
	}
}

// LLMUser is a caller played by an LLM; see LLM.
type LLMUser struct {
	persona  Persona
	goal     string
	model    voicetest.LLM
	name     string // model name override
	seed     int64
	maxWait  time.Duration
	maxWaits int
	engine   string
	render   PayloadRenderer
	ownView  bool     // render was set by Payloads
	temp     *float64 // Temperature; nil is 0
	system   string   // SystemPrompt; "" is the built-in prompt
	lazy     *lazyLLM
	convs    *conversations[llmConv]
}

var _ voicetest.User = (*LLMUser)(nil)

// llmConv is what an LLM user remembers of one conversation.
type llmConv struct {
	// waits counts the waits since the user last spoke.
	waits int
	// waited is their total.
	waited time.Duration
}

// LLM returns a User played by an LLM as persona p, pursuing goal ("Book a
// table for two tonight, fast."). The model is told it is the caller: the
// conversation goes to it with the roles reversed (the agent's turns as
// user messages, its own past lines as assistant messages), with the
// agent's tool calls and data payloads as bracketed lines (see
// RenderPayload), and it answers each turn by calling one of three tools:
// say (a short spoken line), wait (stay silent while the agent works, up
// to MaxWait, at most MaxWaits times in a row), or hang_up. An empty answer
// is asked for again once, with a reminder, before it fails the turn with
// ErrEmptyAnswer. Requests use temperature 0 and a seed, so under the
// cache every run replays the same caller.
//
// The model comes from With. Without it, the first turn builds one from
// the environment with llm.New (OPENAI_BASE_URL, OPENAI_API_KEY,
// VOICETEST_LLM_MODEL); under go test that client uses the test package's
// cache (testdata/voicetest/cache, in the mode of the -voicetest.cache flag
// or VOICETEST_CACHE), so a value built outside any test, as in a table of
// cases, still replays offline. In a test, prefer the one-liner
//
//	personas.LLM(personas.Rushed, "Book a table for two tonight.").With(llm.ForTest(t))
//
// whose cache misses name the test. An LLMUser may serve several
// conversations at once (parallel subtests): it keeps what it remembers
// (its waits) per conversation.
func LLM(p Persona, goal string) *LLMUser {
	return &LLMUser{persona: p, goal: goal, seed: DefaultSeed, maxWait: DefaultMaxWait, maxWaits: DefaultMaxWaits,
		render: RenderPayload, lazy: new(lazyLLM), convs: new(conversations[llmConv])}
}

func (u *LLMUser) clone() *LLMUser {
	c := *u
	c.convs = new(conversations[llmConv])
	if c.model == nil {
		c.lazy = new(lazyLLM)
	}
	return &c
}

// With returns a copy of u played by model m (llm.ForTest(t) in a test).
func (u *LLMUser) With(m voicetest.LLM) *LLMUser {
	c := u.clone()
	c.model = m
	return c
}

// Model returns a copy of u that asks for the named model instead of the
// client's default.
func (u *LLMUser) Model(name string) *LLMUser {
	c := u.clone()
	c.name = name
	return c
}

// Seed returns a copy of u that sends seed n with its requests.
func (u *LLMUser) Seed(n int64) *LLMUser {
	c := u.clone()
	c.seed = n
	return c
}

// MaxWait returns a copy of u whose waits last at most d (longer ones are
// cut to d; d below a second means one second).
func (u *LLMUser) MaxWait(d time.Duration) *LLMUser {
	c := u.clone()
	c.maxWait = max(d, minWait)
	return c
}

// MaxWaits returns a copy of u that waits at most n times in a row; then
// the wait tool is withdrawn and the model must speak or hang up. n < 0
// counts as 0 (never wait).
func (u *LLMUser) MaxWaits(n int) *LLMUser {
	c := u.clone()
	c.maxWaits = max(n, 0)
	return c
}

// Engine returns a copy of u whose utterances carry the persona's voice
// for the named TTS engine ("openai", "flite", "espeak"; see Voice.For).
// Without it the runner's Config.Voice is used.
func (u *LLMUser) Engine(name string) *LLMUser {
	c := u.clone()
	c.engine = name
	return c
}

// Payloads returns a copy of u that renders the agent's tool calls and
// data with r (a voicetest.DataView, such as voicetest.XMLView("screen"));
// nil hides them from the model. It takes precedence over the scenario's
// Config.DataView. Without it, u shows what the agent showed through the
// scenario's Config.DataView when one is set, else through RenderPayload.
func (u *LLMUser) Payloads(r PayloadRenderer) *LLMUser {
	c := u.clone()
	c.render = r
	c.ownView = true
	return c
}

// view returns the renderer of the agent's payloads in st, and whether it
// is a data view of the scenario's (whose text the model is told is what
// its screen shows).
func (u *LLMUser) view(st *voicetest.State) (PayloadRenderer, bool) {
	if !u.ownView {
		if v := st.DataView(); v != nil {
			return v, true
		}
	}
	return u.render, false
}

// Temperature returns a copy of u whose model samples at t (0 to 2). The
// default is 0, so that a cached conversation replays; a higher
// temperature gives a more varied caller under Config.Repeat (each
// answer is still cached by its request).
func (u *LLMUser) Temperature(t float64) *LLMUser {
	c := u.clone()
	c.temp = &t
	return c
}

// SystemPrompt returns a copy of u whose model is given prompt as its
// whole system prompt, instead of the built-in one built from the
// persona, the goal and the scenario's description: for a caller the
// library's prompt does not fit. The conversation still comes with the
// roles reversed, and the say, wait and hang_up tools are still offered.
func (u *LLMUser) SystemPrompt(prompt string) *LLMUser {
	c := u.clone()
	c.system = prompt
	return c
}

// Persona returns the persona u plays.
func (u *LLMUser) Persona() Persona { return u.persona }

// Goal returns what u wants from the call.
func (u *LLMUser) Goal() string { return u.goal }

// InterruptDecision says whether u barges in on the agent's turn now
// starting in the conversation st, and after how long from the start of
// the agent's speech; see Interruption.Decide. It is repeatable for a seed.
// It makes u a voicetest.Interrupter: Proceed asks it before each agent
// turn and, when it says yes, says u's next line over the agent's reply.
func (u *LLMUser) InterruptDecision(st *voicetest.State) (interrupt bool, after time.Duration) {
	ok, d, _ := u.persona.Interrupt.Decide(uint64(u.seed), st.Name(), st.Turn())
	return ok, d
}

// lazyLLM builds the default client once, on first use.
type lazyLLM struct {
	once sync.Once
	m    voicetest.LLM
	err  error
}

func (l *lazyLLM) get() (voicetest.LLM, error) {
	l.once.Do(func() { l.m, l.err = defaultLLM() })
	return l.m, l.err
}

// defaultLLM is the client of a persona built without With: llm.New from
// the environment, through the test package's cache under go test.
// Like every llm client built without WithHTTPClient, it keeps no idle
// connections, so it records inside a testing/synctest bubble.
func defaultLLM() (voicetest.LLM, error) {
	var opts []llm.Option
	if testing.Testing() {
		mode, err := cache.DefaultMode()
		if err != nil {
			return nil, err
		}
		c, err := cache.Open(cache.DefaultDir, cache.WithMode(mode))
		if err != nil {
			return nil, err
		}
		opts = append(opts, llm.WithCache(c))
	}
	return llm.New(opts...)
}

func (u *LLMUser) llm() (voicetest.LLM, error) {
	if u.model != nil {
		return u.model, nil
	}
	m, err := u.lazy.get()
	if err != nil {
		return nil, fmt.Errorf("no model was given with With, and the default client could not be built: %w (give one: personas.LLM(...).With(llm.ForTest(t)))", err)
	}
	return m, nil
}

func (u *LLMUser) validate() error {
	if strings.TrimSpace(u.goal) == "" {
		return errors.New("the goal is empty; say what the caller wants from the call, e.g. \"Book a table for two tonight\"")
	}
	if t := u.temp; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		return fmt.Errorf("Temperature(%v): use 0 to 2", *t)
	}
	return u.persona.Validate()
}

// NextUtterance asks the model for the caller's next move in the
// conversation st.
func (u *LLMUser) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if err := u.validate(); err != nil {
		return voicetest.Utterance{}, fmt.Errorf("personas.LLM: %w", err)
	}
	m, err := u.llm()
	if err != nil {
		return voicetest.Utterance{}, fmt.Errorf("personas.LLM(%s): %w", u.persona.Name, err)
	}
	conv, unlock := u.convs.lock(st, func() llmConv { return llmConv{} })
	defer unlock()

	canWait := conv.waits < u.maxWaits
	req := u.request(st, canWait)
	// The check goes with the request, so that an LLM that caches answers
	// (an *llm.Client) retries itself and never keeps an unusable one.
	req.Check = func(resp voicetest.ChatResponse) error {
		if _, problem := u.decide(resp.Message, canWait); problem != "" {
			return errors.New(problem)
		}
		return nil
	}
	req.Retry = func(_ voicetest.ChatResponse, problem error) []voicetest.ChatMessage {
		return []voicetest.ChatMessage{{Role: voicetest.ChatSystem, Content: retryNote(problem.Error(), canWait)}}
	}
	var d decision
	for attempt := 0; ; attempt++ {
		resp, err := m.Complete(ctx, req)
		if errors.Is(err, voicetest.ErrAnswerRejected) {
			return voicetest.Utterance{}, fmt.Errorf("personas.LLM(%s): turn %d: %w: %w (check the model and its tool-calling support)", u.persona.Name, st.Turn()+1, ErrEmptyAnswer, err)
		}
		if err != nil {
			return voicetest.Utterance{}, fmt.Errorf("personas.LLM(%s): asking the model for turn %d: %w", u.persona.Name, st.Turn()+1, err)
		}
		var problem string
		d, problem = u.decide(resp.Message, canWait)
		if problem == "" {
			break
		}
		if attempt == 1 {
			return voicetest.Utterance{}, fmt.Errorf("personas.LLM(%s): turn %d: %s, twice: %w (check the model and its tool-calling support)", u.persona.Name, st.Turn()+1, problem, ErrEmptyAnswer)
		}
		req.Messages = append(req.Messages, req.Retry(resp, errors.New(problem))...)
	}

	var out voicetest.Utterance
	switch d.kind {
	case toolWait:
		conv.waits++
		conv.waited += d.wait
		return voicetest.Utterance{Wait: d.wait, WaitReason: d.reason}, nil
	case toolHangUp:
		out = voicetest.Utterance{Text: d.text, HangUp: true}
		u.convs.forget(st)
	default:
		out = voicetest.Utterance{Text: d.text}
		conv.waits, conv.waited = 0, 0
	}
	sound{persona: &u.persona, engine: u.engine}.apply(&out)
	return out, nil
}

// decision is the model's answer for one turn.
type decision struct {
	kind   string // toolSay, toolWait or toolHangUp
	text   string
	wait   time.Duration
	reason string // the wait's reason
}

// decide reads the model's answer; a non-empty problem says why it is
// unusable.
func (u *LLMUser) decide(msg voicetest.ChatMessage, canWait bool) (decision, string) {
	if len(msg.ToolCalls) == 0 {
		// Models without tool support answer in plain text: take it
		// as the line to say.
		if t := cleanLine(msg.Content); t != "" {
			return decision{kind: toolSay, text: t}, ""
		}
		return decision{}, "the answer was empty (no tool call and no text)"
	}
	call := msg.ToolCalls[0]
	var args struct {
		Text    string   `json:"text"`
		Seconds *float64 `json:"seconds"`
		Reason  string   `json:"reason"`
	}
	if len(call.Arguments) > 0 {
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return decision{}, fmt.Sprintf("the %s call's arguments %s are not the expected object (%v)", call.Name, truncate(string(call.Arguments), 200), err)
		}
	}
	switch call.Name {
	case toolSay:
		t := cleanLine(args.Text)
		if t == "" {
			return decision{}, "the answer was empty (say with no text)"
		}
		return decision{kind: toolSay, text: t}, ""
	case toolHangUp:
		return decision{kind: toolHangUp, text: cleanLine(args.Text)}, ""
	case toolWait:
		if !canWait {
			return decision{}, fmt.Sprintf("it chose to wait again after %d waits in a row, which is not allowed", u.maxWaits)
		}
		if args.Seconds == nil || math.IsNaN(*args.Seconds) {
			return decision{}, "the wait call gave no number of seconds"
		}
		w := time.Duration(*args.Seconds * float64(time.Second))
		return decision{kind: toolWait, wait: min(max(w, minWait), u.maxWait), reason: cleanLine(args.Reason)}, ""
	}
	return decision{}, fmt.Sprintf("it called an unknown tool %q", call.Name)
}

func retryNote(problem string, canWait bool) string {
	tools := "say (your next line) or hang_up"
	if canWait {
		tools = "say (your next line), wait, or hang_up"
	}
	return fmt.Sprintf("Your last answer could not be used: %s. You are still the caller. Answer now by calling exactly one tool: %s.", problem, tools)
}

var (
	stageDirection = regexp.MustCompile(`\*[^*]*\*`)
	speakerPrefix  = regexp.MustCompile(`(?i)^\s*(caller|user|me|customer)\s*:\s*`)
)

// cleanLine makes a model's line speakable: no *stage directions*, no
// "Caller:" prefix, no wrapping quotes, single spaces.
func cleanLine(s string) string {
	s = stageDirection.ReplaceAllString(s, " ")
	s = speakerPrefix.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// opening is the first user message when the agent has not spoken.
const opening = "[The call has connected. The agent has not said anything yet.]"

// request builds the chat request for the caller's next move in st.
func (u *LLMUser) request(st *voicetest.State, canWait bool) voicetest.ChatRequest {
	temp := 0.0
	if u.temp != nil {
		temp = *u.temp
	}
	seed := u.seed
	tools := []voicetest.ToolSpec{saySpec}
	if canWait {
		tools = append(tools, waitSpec(u.maxWait))
	}
	tools = append(tools, hangUpSpec)
	render, screen := u.view(st)
	sys := u.systemPrompt(st, canWait, screen)
	if strings.TrimSpace(u.system) != "" {
		sys = u.system
	}
	msgs := []voicetest.ChatMessage{{Role: voicetest.ChatSystem, Content: sys}}
	msgs = append(msgs, reversed(conversationLines(st, render), opening)...)
	return voicetest.ChatRequest{
		Model:       u.name,
		Messages:    msgs,
		Tools:       tools,
		ToolChoice:  "required",
		Temperature: &temp,
		Seed:        &seed,
		MaxTokens:   maxLineTokens,
	}
}

func (u *LLMUser) systemPrompt(st *voicetest.State, canWait, screen bool) string {
	var b strings.Builder
	b.WriteString("You are role-playing a person who has phoned a voice assistant. You are the CALLER, not the assistant: never offer help, never answer as the agent, never describe what the agent should do. The other side of this conversation is the agent; its words come from speech recognition, so expect odd spellings and missing punctuation.\n\n")
	fmt.Fprintf(&b, "Who you are: %s\n", u.persona.Description)
	if u.persona.Style != "" {
		fmt.Fprintf(&b, "How you talk: %s\n", u.persona.Style)
	}
	fmt.Fprintf(&b, "What you want from this call: %s\n", strings.TrimSpace(u.goal))
	if d := strings.TrimSpace(st.Description()); d != "" {
		fmt.Fprintf(&b, "Situation: %s\n", d)
	}
	b.WriteString("\nHow to answer:\n")
	b.WriteString("- This is a spoken phone call. Say one or two short sentences at a time, in plain words, the way people talk: no lists, no markdown, no emoji, no stage directions.\n")
	if screen {
		// Only with the scenario's data view, so that the prompts (and
		// cached answers) of personas without one stay as they were.
		b.WriteString("- Besides speaking, the agent shows you things on your screen (forms, lists, search results). What it shows comes among its turns, formatted as data (such as XML). You can see it: react to it and answer from it as a caller looking at the screen would.\n")
	} else {
		b.WriteString("- Lines in square brackets are notes about what the agent's system did (tool calls, data it sent). React to them only as a caller could, for instance to details the agent read out.\n")
	}
	b.WriteString("- Give details when the agent asks for them or when it helps your goal; do not volunteer your whole request at once unless that is your character.\n")
	if canWait {
		fmt.Fprintf(&b, "- If the agent asked you to hold on, or said it is checking something, call wait with the seconds you would give it (1 to %d).\n", int(u.maxWait/time.Second))
	} else if u.maxWaits == 0 {
		b.WriteString("- Do not wait in silence: always speak, or hang up.\n")
	} else {
		b.WriteString("- You have already waited as long as you will: do not wait any more; speak, or hang up.\n")
	}
	b.WriteString("- Call hang_up, with a short goodbye, once your goal is met or the call clearly cannot get there. Otherwise call say with your next line.\n")
	b.WriteString("- Stay in character and never mention that this is a test or that you are an AI.")
	return b.String()
}
