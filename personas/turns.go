package personas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// HoldPhrases are the words by which an agent asks the caller to hold on,
// for HoldOn.
var HoldPhrases = []string{
	"one moment", "just a moment", "a moment please", "give me a moment",
	"one second", "just a second", "just a sec", "give me a second",
	"hold on", "please hold", "bear with me", "please wait",
	"let me check", "let me look", "let me see", "i'm checking", "i am checking",
}

// HoldOn returns a rule for voicetest.Config.TurnTaking's Classifier:
// while the agent's latest message asks the caller to hold (it contains
// one of HoldPhrases or of extra, in any case) and the agent has said
// nothing since, the caller waits for wait and then asks again; otherwise
// it speaks. TurnTaking.MaxWaits and MaxWait bound the waits, so an agent
// that never comes back still gets an answer. wait below 100 ms counts as
// 100 ms.
func HoldOn(wait time.Duration, extra ...string) voicetest.TurnClassifier {
	wait = max(wait, 100*time.Millisecond)
	phrases := make([]string, 0, len(HoldPhrases)+len(extra))
	for _, p := range append(append([]string(nil), HoldPhrases...), extra...) {
		if p = normalizeSpace(strings.ToLower(p)); p != "" {
			phrases = append(phrases, p)
		}
	}
	return voicetest.TurnClassifierFunc(func(_ context.Context, st *voicetest.State) (voicetest.TurnDecision, error) {
		m, ok := st.LastMessage(voicetest.RoleAgent)
		if !ok {
			return voicetest.TurnDecision{}, nil
		}
		if u, ok := st.LastMessage(voicetest.RoleUser); ok && u.Turn > m.Turn {
			return voicetest.TurnDecision{}, nil // the caller spoke since
		}
		text := normalizeSpace(strings.ToLower(m.Text))
		for _, p := range phrases {
			if strings.Contains(text, p) {
				return voicetest.TurnDecision{Wait: wait, Reason: fmt.Sprintf("the agent said %q", p)}, nil
			}
		}
		return voicetest.TurnDecision{}, nil
	})
}

func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Bounds of a TurnModel's answer.
const (
	minTurnCheck = 200 * time.Millisecond
	maxTurnCheck = 30 * time.Second
	// maxTurnLines bounds the conversation a TurnModel sends: its last
	// lines, which are what decide whether the agent is done.
	maxTurnLines = 12
)

const toolTakeTurn = "take_turn"

var takeTurnSpec = voicetest.ToolSpec{
	Name:        toolTakeTurn,
	Description: "Say whether the caller should speak now.",
	Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"speak":{"type":"boolean","description":"true if the agent has finished and the caller should answer now; false if the agent is still working or mid-thought."},"check_again_ms":{"type":"integer","description":"When speak is false: how many milliseconds to wait before checking again, %d to %d."},"reason":{"type":"string","description":"Why, in a few words."}},"required":["speak","check_again_ms","reason"],"additionalProperties":false}`,
		minTurnCheck.Milliseconds(), maxTurnCheck.Milliseconds())),
}

// TurnModel is a voicetest.TurnClassifier played by a model; see
// LLMTurns.
type TurnModel struct {
	model  voicetest.LLM
	name   string
	seed   int64
	render PayloadRenderer
	own    bool // render set by Payloads
}

var _ voicetest.TurnClassifier = (*TurnModel)(nil)

// LLMTurns returns a classifier for voicetest.Config.TurnTaking played
// by model m (llm.ForTest(t) in a test, so that its answers are cached):
// given the end of the conversation (the agent's and the caller's lines
// and what the agent showed, through the scenario's Config.DataView when
// set, else RenderPayload), the model calls a take_turn tool saying
// whether the caller should speak now or check again after some
// milliseconds (200 to 30 000), and why. Requests use temperature 0 and a
// seed, so a cached run replays.
func LLMTurns(m voicetest.LLM) *TurnModel {
	return &TurnModel{model: m, seed: DefaultSeed, render: RenderPayload}
}

// Model returns a copy of c that asks for the named model instead of the
// client's default.
func (c *TurnModel) Model(name string) *TurnModel {
	d := *c
	d.name = name
	return &d
}

// Payloads returns a copy of c that shows the model the agent's tool
// calls and data through r (nil hides them), whatever the scenario's view.
func (c *TurnModel) Payloads(r PayloadRenderer) *TurnModel {
	d := *c
	d.render, d.own = r, true
	return &d
}

// TakeTurn asks the model whether the caller should speak now in st.
func (c *TurnModel) TakeTurn(ctx context.Context, st *voicetest.State) (voicetest.TurnDecision, error) {
	if c.model == nil {
		return voicetest.TurnDecision{}, errors.New("personas.LLMTurns: no model; pass one (llm.ForTest(t))")
	}
	req := c.request(st)
	req.Check = func(resp voicetest.ChatResponse) error {
		_, err := readTurn(resp.Message)
		return err
	}
	resp, err := c.model.Complete(ctx, req)
	if err != nil {
		return voicetest.TurnDecision{}, fmt.Errorf("personas.LLMTurns: asking the model before turn %d: %w", st.Turn()+1, err)
	}
	d, err := readTurn(resp.Message)
	if err != nil {
		return voicetest.TurnDecision{}, fmt.Errorf("personas.LLMTurns: before turn %d: %w", st.Turn()+1, err)
	}
	return d, nil
}

// readTurn reads the model's take_turn call.
func readTurn(msg voicetest.ChatMessage) (voicetest.TurnDecision, error) {
	if len(msg.ToolCalls) == 0 || msg.ToolCalls[0].Name != toolTakeTurn {
		return voicetest.TurnDecision{}, errors.New("the model did not call take_turn")
	}
	var args struct {
		Speak   *bool    `json:"speak"`
		CheckMS *float64 `json:"check_again_ms"`
		Reason  string   `json:"reason"`
	}
	if err := json.Unmarshal(msg.ToolCalls[0].Arguments, &args); err != nil {
		return voicetest.TurnDecision{}, fmt.Errorf("the take_turn arguments %s are not the expected object: %w", truncate(string(msg.ToolCalls[0].Arguments), 200), err)
	}
	if args.Speak == nil {
		return voicetest.TurnDecision{}, errors.New("the take_turn call did not say whether to speak")
	}
	reason := cleanLine(args.Reason)
	if *args.Speak {
		return voicetest.TurnDecision{Reason: reason}, nil
	}
	if args.CheckMS == nil || math.IsNaN(*args.CheckMS) {
		return voicetest.TurnDecision{}, errors.New("the take_turn call said not to speak but gave no check_again_ms")
	}
	ms := min(max(*args.CheckMS, float64(minTurnCheck.Milliseconds())), float64(maxTurnCheck.Milliseconds()))
	return voicetest.TurnDecision{Wait: time.Duration(ms * float64(time.Millisecond)), Reason: reason}, nil
}

const turnSystem = "You watch a phone call between a voice agent and a caller, and decide when the caller should speak. The agent's words come from speech recognition. A person waits while the agent is still working (it said it would check something, asked them to hold, or stopped mid-thought) and answers once the agent has finished and expects a reply. Call take_turn: speak true if the caller should answer now; otherwise speak false with how many milliseconds to wait before checking again."

// request builds the classifier's chat request for st.
func (c *TurnModel) request(st *voicetest.State) voicetest.ChatRequest {
	render := c.render
	if !c.own {
		if v := st.DataView(); v != nil {
			render = v
		}
	}
	ls := conversationLines(st, render)
	if len(ls) > maxTurnLines {
		ls = ls[len(ls)-maxTurnLines:]
	}
	var b strings.Builder
	b.WriteString("The end of the call so far:\n")
	if len(ls) == 0 {
		b.WriteString("(nobody has spoken yet)\n")
	}
	for _, l := range ls {
		who := "agent"
		if l.side == sideSelf {
			who = "caller"
		}
		fmt.Fprintf(&b, "%s: %s\n", who, l.text)
	}
	b.WriteString("Should the caller speak now?")
	temp, seed := 0.0, c.seed
	return voicetest.ChatRequest{
		Model: c.name,
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: turnSystem},
			{Role: voicetest.ChatUser, Content: b.String()},
		},
		Tools:       []voicetest.ToolSpec{takeTurnSpec},
		ToolChoice:  toolTakeTurn,
		Temperature: &temp,
		Seed:        &seed,
		MaxTokens:   maxLineTokens,
	}
}
