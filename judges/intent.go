package judges

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
)

// IntentTool is the name of the function the intent judge forces the
// model to call.
const IntentTool = "record_intent_match"

// IntentJudge asks an LLM whether one agent message carries an intent
// ("offers to book a table", "asks for the caller's name"), where a
// substring check is too brittle. It judges a single message, so it fits
// Check steps and ordered expectations:
//
//	greets := judges.Intent(llm.ForTest(t), "greets the caller and offers help")
//	voicetest.Check(greets.Check) // the agent's last message
//
//	st.Expect().NextEvent().IsMessageMatching(ctx, voicetest.RoleAgent, greets)
//
// Like CriteriaJudge it tells the model the text comes from speech-to-text,
// asks at temperature 0 with a fixed seed through a forced function call,
// and sends an invalid answer back once. Through a cached LLM (llm.ForTest)
// the verdicts are recorded once and replayed.
type IntentJudge struct {
	llm    voicetest.LLM
	intent string
	model  string
}

var (
	_ voicetest.Judge          = (*IntentJudge)(nil)
	_ voicetest.MessageMatcher = (*IntentJudge)(nil)
)

// Intent returns a judge of whether an agent message carries intent,
// asking l.
func Intent(l voicetest.LLM, intent string) *IntentJudge {
	return &IntentJudge{llm: l, intent: intent}
}

// WithModel returns a copy of the judge that asks for model instead of the
// LLM's default.
func (j *IntentJudge) WithModel(model string) *IntentJudge {
	c := *j
	c.model = model
	return &c
}

// Criterion returns the criterion as reports show it.
func (j *IntentJudge) Criterion() string {
	return fmt.Sprintf("the agent's last message: %s", j.intent)
}

// Criteria returns the judge's one criterion.
func (j *IntentJudge) Criteria() []string { return []string{j.Criterion()} }

// String describes the matcher in expectation failures.
func (j *IntentJudge) String() string { return fmt.Sprintf("intent %q", j.intent) }

// Judge asks whether text, one agent message, carries the intent. The
// result's Status is pass, fail, or inconclusive when the message is too
// garbled or ambiguous to tell.
func (j *IntentJudge) Judge(ctx context.Context, text string) (voicetest.CriterionResult, error) {
	res := voicetest.CriterionResult{Criterion: j.intent}
	if strings.TrimSpace(j.intent) == "" {
		return res, errors.New("judges: Intent has an empty intent; say what the message should do")
	}
	if j.llm == nil {
		return res, errors.New("judges: Intent has no LLM: pass llm.ForTest(t) (or an *llm.Client) to judges.Intent")
	}
	temp := 0.0
	seed := int64(Seed)
	schema, _ := json.Marshal(map[string]any{ // strings and slices always encode
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"status", "reasoning"},
		"properties": map[string]any{
			"status":    map[string]any{"type": "string", "enum": []string{"pass", "fail", "inconclusive"}},
			"reasoning": map[string]any{"type": "string"},
		},
	})
	req := voicetest.ChatRequest{
		Model: j.model,
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: `You check one message a voice agent said in a test. Decide whether the message carries the given intent: "pass" if it does, "fail" if it does not, "inconclusive" only if the message is too garbled or ambiguous to tell. The message is a speech-to-text transcript of the agent's audio: expect mis-heard words, homophones ("for"/"four", "to"/"two") and missing punctuation, and judge what the agent evidently meant. Judge only the intent, nothing else. Answer only by calling ` + IntentTool + `, with a short reasoning.`},
			{Role: voicetest.ChatUser, Content: fmt.Sprintf("Intent: %s\n\nAgent message:\n<message>\n%s\n</message>", oneLine(j.intent), truncate(text, DefaultMaxTranscript))},
		},
		Tools: []voicetest.ToolSpec{{Name: IntentTool, Description: "Record whether the message carries the intent.",
			Parameters: schema}},
		ToolChoice:  IntentTool,
		Temperature: &temp,
		Seed:        &seed,
	}
	type answer struct {
		Status    string `json:"status"`
		Reasoning string `json:"reasoning"`
	}
	a, err := askValid(ctx, j.llm, req, func(resp voicetest.ChatResponse) (answer, error) {
		var a answer
		args, err := toolArgs(resp, IntentTool)
		if err != nil {
			return a, err
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return a, fmt.Errorf("the %s arguments are not the JSON object the schema describes: %v", IntentTool, err)
		}
		switch voicetest.Status(a.Status) {
		case voicetest.StatusPass, voicetest.StatusFail, voicetest.StatusInconclusive:
			return a, nil
		}
		return a, fmt.Errorf(`status is %q; use "pass", "fail" or "inconclusive"`, a.Status)
	})
	if err != nil {
		return res, fmt.Errorf("judges: intent %q: %w", j.intent, err)
	}
	res.Status, res.Reasoning = voicetest.Status(a.Status), a.Reasoning
	return res, nil
}

// MatchMessage implements voicetest.MessageMatcher: nil when text carries
// the intent, else an error (wrapping ErrNotPassed when the model said
// fail or inconclusive) with the model's reasoning.
func (j *IntentJudge) MatchMessage(ctx context.Context, text string) error {
	r, err := j.Judge(ctx, text)
	if err != nil {
		return err
	}
	if r.Status != voicetest.StatusPass {
		return fmt.Errorf("%w: intent %q: %s: %s", ErrNotPassed, j.intent, r.Status, r.Reasoning)
	}
	return nil
}

// Check judges the agent's last message; use it in a Check step:
// voicetest.Check(judges.Intent(l, "asks for the caller's name").Check).
// The model is called with context.Background() because Check steps get
// no context; use MatchMessage to pass one.
func (j *IntentJudge) Check(st *voicetest.State) error {
	v, err := j.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
	if err != nil {
		return err
	}
	return judgmentError(v)
}

// Evaluate implements voicetest.Judge by judging the agent's last message;
// it always decides. An agent that has said nothing with known words is
// inconclusive, and so is a Checkpoint criterion that is not this judge's.
func (j *IntentJudge) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	if req.State == nil {
		return voicetest.Judgment{}, errors.New("judges: intent judge: JudgeRequest.State is nil; the runner passes the conversation in it")
	}
	crit := j.Criterion()
	asked := req.Criteria
	if asked == nil {
		asked = []string{crit}
	}
	v := voicetest.Judgment{Decided: true}
	for _, c := range asked {
		if c != crit {
			v.Criteria = append(v.Criteria, notMine(c, j.Criteria()))
			continue
		}
		m, ok := req.State.LastMessage(voicetest.RoleAgent)
		switch {
		case !ok:
			v.Criteria = append(v.Criteria, voicetest.CriterionResult{Criterion: crit, Status: voicetest.StatusInconclusive, Reasoning: "the agent has said nothing yet"})
			continue
		case m.AudioOnly || m.Text == "":
			v.Criteria = append(v.Criteria, voicetest.CriterionResult{Criterion: crit, Status: voicetest.StatusInconclusive,
				Reasoning: fmt.Sprintf("turn %d: the agent's last message has no transcript (%s); set Config.AgentSTT", m.Turn, m.DisplayText())})
			continue
		}
		r, err := j.Judge(ctx, m.Text)
		if err != nil {
			return voicetest.Judgment{}, err
		}
		r.Criterion = crit
		r.Reasoning = fmt.Sprintf("turn %d %q: %s", m.Turn, clip(m.Text), r.Reasoning)
		v.Criteria = append(v.Criteria, r)
		v.Reasoning = r.Reasoning
	}
	return v, nil
}
