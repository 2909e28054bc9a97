package judges

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// VerdictTool is the name of the function the criteria judge forces the
// model to call.
const VerdictTool = "record_verdict"

// Seed is the sampling seed the LLM judges send, with temperature 0, so
// that a model that honours them answers the same way every time.
const Seed = 7

// ErrInvalidAnswer is wrapped by the error an LLM judge returns when the
// model's answer was still invalid after one retry.
var ErrInvalidAnswer = errors.New("judges: the model's answer is invalid")

// The decisions a verdict tool call may carry.
const (
	decisionFinal    = "final"
	decisionContinue = "continue"
)

// CriteriaJudge is an LLM judge: it shows the conversation to a model and
// asks it, through a forced function call, for pass, fail or inconclusive
// plus reasoning on each declared criterion.
//
// Build one with Criteria (or ForTest in a test) and set its LLM with
// WithLLM; the With methods return modified copies, so a base judge can be
// shared. In a test the common case is one line:
//
//	Judge: judges.ForTest(t, "The agent confirms party size and time before ending"),
//
// which is judges.Criteria(...).WithLLM(llm.ForTest(t)): the model is
// called through the test package's record/replay cache, so verdicts are
// recorded once and replayed offline (same conversation, same criteria,
// same model: same request, same cached verdict).
//
// The judge judges only the declared criteria; it is shown the scenario's
// description (Config.Description) as context for them, unless
// WithoutDescription; it is told that the agent's words come from
// speech-to-text and may hold mis-heard words, and sees a transcript
// bounded in size (WithMaxTranscript) with a marker where lines were cut.
// On request it also sees the timeline rendered for a model
// (WithTimeline: who spoke when, overlaps, pauses, latencies, barge-ins,
// tool calls and results), for criteria about timing, and hears the call
// (WithAudio, WithTurnAudio: its audio as input audio, for an
// audio-capable model), for criteria about how it sounded. Requests use
// temperature 0 and a fixed seed. An answer with missing, unknown or
// duplicate criteria or an invalid status is sent back to the model once
// with the problem; a second invalid answer is an error wrapping
// ErrInvalidAnswer.
//
// Continuous (the default) judges at every turn Proceed asks about: the
// model may answer "continue" (Decided false), and the conversation ends
// early as soon as a criterion is clearly failed or every criterion is
// decided. An inconclusive criterion never ends a conversation early.
// FinalOnly answers "continue" without calling the model until the final
// verdict. A final verdict, a Checkpoint and the last allowed turn
// (Turn >= MaxTurns) always get a decision: the prompt and the schema then
// forbid "continue", and criteria the transcript cannot settle are
// inconclusive, reported as such.
type CriteriaJudge struct {
	criteria      []string
	llm           voicetest.LLM
	model         string
	finalOnly     bool
	maxChars      int
	instructions  string
	noDescription bool
	timeline      bool
	audio         *audioInput // nil: the judge does not listen
	temperature   *float64
	system        string
}

var _ voicetest.Judge = (*CriteriaJudge)(nil)

// Criteria returns an LLM judge of the criteria, each a sentence saying
// what the agent must (or must not) do. Set its LLM with WithLLM.
func Criteria(criteria ...string) *CriteriaJudge {
	return &CriteriaJudge{criteria: append([]string(nil), criteria...), maxChars: DefaultMaxTranscript}
}

// ForTest returns Criteria(criteria...).WithLLM(llm.ForTest(t, …)): an
// LLM judge whose completions go through the test package's record/replay
// cache (testdata/voicetest/cache), configured by OPENAI_BASE_URL,
// OPENAI_API_KEY and VOICETEST_LLM_MODEL when it records.
// Like every llm client, it keeps no idle connections, so recording works
// inside the testing/synctest bubble Scenario runs in-process agents in.
func ForTest(t testing.TB, criteria ...string) *CriteriaJudge {
	t.Helper()
	return Criteria(criteria...).WithLLM(llm.ForTest(t))
}

func (j *CriteriaJudge) clone() *CriteriaJudge {
	c := *j
	c.criteria = append([]string(nil), j.criteria...)
	return &c
}

// WithLLM returns a copy of the judge that asks l (an *llm.Client, or any
// voicetest.LLM).
func (j *CriteriaJudge) WithLLM(l voicetest.LLM) *CriteriaJudge {
	c := j.clone()
	c.llm = l
	return c
}

// WithModel returns a copy of the judge that asks for model instead of the
// LLM's default.
func (j *CriteriaJudge) WithModel(model string) *CriteriaJudge {
	c := j.clone()
	c.model = model
	return c
}

// Continuous returns a copy of the judge that judges at every turn (the
// default).
func (j *CriteriaJudge) Continuous() *CriteriaJudge {
	c := j.clone()
	c.finalOnly = false
	return c
}

// FinalOnly returns a copy of the judge that calls the model only for a
// decision (a final verdict, a Checkpoint, the last allowed turn) and
// answers "continue" to every other request.
func (j *CriteriaJudge) FinalOnly() *CriteriaJudge {
	c := j.clone()
	c.finalOnly = true
	return c
}

// WithMaxTranscript returns a copy of the judge that shows the model at
// most n bytes of transcript (DefaultMaxTranscript by default; at least
// MinMaxTranscript). A longer transcript keeps its start and its most
// recent lines, with a line "[… N lines cut (turns A–B) …]" between.
func (j *CriteriaJudge) WithMaxTranscript(n int) *CriteriaJudge {
	c := j.clone()
	switch {
	case n <= 0:
		c.maxChars = DefaultMaxTranscript
	case n < MinMaxTranscript:
		c.maxChars = MinMaxTranscript
	default:
		c.maxChars = n
	}
	return c
}

// WithInstructions returns a copy of the judge whose system prompt ends
// with text: domain knowledge the judge needs ("Prices include VAT"). It
// adds to the built-in rules; it does not replace them.
func (j *CriteriaJudge) WithInstructions(text string) *CriteriaJudge {
	c := j.clone()
	c.instructions = text
	return c
}

// WithTemperature returns a copy of the judge that samples at t (0 to 2;
// the default is 0, for verdicts that repeat).
func (j *CriteriaJudge) WithTemperature(t float64) *CriteriaJudge {
	c := j.clone()
	c.temperature = &t
	return c
}

// WithSystemPrompt returns a copy of the judge whose system prompt starts
// with text instead of the built-in rules (how to read an STT transcript,
// what pass, fail and inconclusive mean). The rule for the decision asked
// (continue or decide; decide now) and WithInstructions still follow it,
// and the verdict tool still fixes the answer's form.
func (j *CriteriaJudge) WithSystemPrompt(text string) *CriteriaJudge {
	c := j.clone()
	c.system = text
	return c
}

// Criteria returns the judge's own criteria.
func (j *CriteriaJudge) Criteria() []string { return append([]string(nil), j.criteria...) }

// Evaluate implements voicetest.Judge: it asks the model about
// req.Criteria when set (a Checkpoint, which must be decided), else about
// the judge's own criteria.
func (j *CriteriaJudge) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	criteria := req.Criteria
	if criteria == nil {
		criteria = j.criteria
	}
	if err := checkCriteria(criteria); err != nil {
		return voicetest.Judgment{}, err
	}
	if req.State == nil {
		return voicetest.Judgment{}, errors.New("judges: criteria judge: JudgeRequest.State is nil; the runner passes the conversation in it")
	}
	if t := j.temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		return voicetest.Judgment{}, fmt.Errorf("judges: criteria judge: WithTemperature(%v): use 0 to 2", *t)
	}
	if j.llm == nil {
		return voicetest.Judgment{}, errors.New("judges: the criteria judge has no LLM: use judges.ForTest(t, criteria...) in a test, or .WithLLM(client) with an *llm.Client")
	}
	forced := isForced(req)
	if !forced && j.finalOnly {
		return voicetest.Judgment{Decided: false, Reasoning: "final-only judge: waiting for the final verdict"}, nil
	}
	creq, err := j.request(req, criteria, forced)
	if err != nil {
		return voicetest.Judgment{}, fmt.Errorf("judges: criteria judge (turn %d): %w", req.Turn, err)
	}
	ans, err := askValid(ctx, j.llm, creq, func(resp voicetest.ChatResponse) (verdictAnswer, error) {
		return parseVerdict(resp, len(criteria), forced)
	})
	if err != nil {
		return voicetest.Judgment{}, fmt.Errorf("judges: criteria judge (turn %d): %w", req.Turn, err)
	}
	return ans.judgment(criteria, forced), nil
}

func checkCriteria(criteria []string) error {
	if len(criteria) == 0 {
		return errors.New("judges: no criteria to judge: pass criteria to judges.Criteria(...) or to the Checkpoint step")
	}
	seen := map[string]bool{}
	for i, c := range criteria {
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf("judges: criterion %d is empty; write what the agent must do", i+1)
		}
		if seen[c] {
			return fmt.Errorf("judges: criterion %q is given twice; give each criterion once", c)
		}
		seen[c] = true
	}
	return nil
}

const systemRules = `You are the judge of an automated test of a voice agent. You read the transcript of a spoken conversation between the agent under test ("agent") and a simulated caller ("user"), and decide for each numbered criterion whether the agent met it.

Rules:
- Judge only the numbered criteria. Do not judge anything else: not the agent's style, not the caller, not goals that no criterion states.
- The agent's words are a speech-to-text transcript of its audio. Expect mis-heard words, homophones ("for"/"four", "to"/"two", "won"/"one"), missing punctuation, and numbers written as words or as digits. Judge what the agent evidently meant; never fail a criterion because of a transcription slip alone.
- "(audio only)" marks agent speech whose words are unknown; "(interrupted)" marks agent speech the user cut short. Tool calls, tool results, key presses and silences appear as lines of their own.
- A long transcript may have lines cut from its middle; a line "[… N lines cut …]" marks where. Assume nothing about what was cut.
- For each criterion answer "pass" when the transcript shows the agent met it, "fail" when it shows the agent broke it, and "inconclusive" when the transcript does not show enough to tell. Give a short reasoning that cites the turns and words you relied on.
- Answer only by calling ` + VerdictTool + `, with exactly one entry per criterion, by its number.`

const timelineRule = `- A timeline follows the transcript: who spoke from when to when (seconds from the start of the call), the silences and who was to speak, the stretches in which both spoke and who gave way, barge-ins, response latencies, tool calls and their results, and a summary. Use it for criteria about timing (letting the caller finish, keeping the caller waiting, talking over the caller); times are measured, so trust them over the transcript's order.`

const audioRule = `- You also hear the call: its audio follows the transcript. Use it for criteria about how the call sounded (tone, pace, pauses, talking over the caller, what the agent's speech actually says, for instance a number spoken differently from the transcript). Where the audio and the transcript disagree about what the agent said, the audio is what the caller heard.`

const finalRule = `This is the final verdict: the conversation is over or has reached its last allowed turn. Set decision to "final" and decide every criterion now, using "inconclusive" only for a criterion the transcript cannot settle.`

const continuousRule = `The conversation is still going on. Set decision to "final" only when every criterion is already settled by the transcript, or when a criterion is already clearly and irreversibly broken (for example the agent said something a criterion forbids): the test then ends now. Otherwise set decision to "continue" and mark the criteria that later turns could still settle "inconclusive". Use "fail" only for a criterion that is already broken beyond repair, because any "fail" ends the test.`

// request builds the chat request for criteria.
func (j *CriteriaJudge) request(req voicetest.JudgeRequest, criteria []string, forced bool) (voicetest.ChatRequest, error) {
	sys := systemRules
	if strings.TrimSpace(j.system) != "" {
		sys = strings.TrimSpace(j.system)
	}
	if j.timeline {
		sys += "\n" + timelineRule
	}
	if j.audio != nil {
		sys += "\n" + audioRule
	}
	sys += "\n\n"
	if forced {
		sys += finalRule
	} else {
		sys += continuousRule
	}
	if strings.TrimSpace(j.instructions) != "" {
		sys += "\n\nAdditional instructions from the test's author:\n" + strings.TrimSpace(j.instructions)
	}
	var u strings.Builder
	if d := strings.TrimSpace(req.State.Description()); d != "" && !j.noDescription {
		u.WriteString("Scenario (what the test is about: context for the criteria, not a criterion):\n<scenario>\n")
		u.WriteString(truncate(d, maxLine))
		u.WriteString("\n</scenario>\n\n")
	}
	u.WriteString("Criteria:\n")
	for i, c := range criteria {
		fmt.Fprintf(&u, "%d. %s\n", i+1, oneLine(c))
	}
	u.WriteString("\nTranscript (turn 0 is before the user's first turn):\n<transcript>\n")
	text, _ := boundTranscript(renderLines(req.State), j.maxChars)
	if text == "" {
		text = "(nothing has been said yet)\n"
	}
	u.WriteString(text)
	u.WriteString("</transcript>\n")
	if j.timeline {
		u.WriteString("\nTimeline (seconds from the start of the call):\n<timeline>\n")
		u.WriteString(RenderTimeline(req.State, j.maxChars))
		u.WriteString("</timeline>\n")
	}
	var audio []voicetest.InputAudio
	if j.audio != nil {
		var note string
		var err error
		if audio, note, err = j.audio.clips(req.State); err != nil {
			return voicetest.ChatRequest{}, err
		}
		u.WriteString("\n" + note + "\n")
	}
	if forced {
		u.WriteString("\nGive your final verdict now.")
	} else if req.MaxTurns > 0 {
		fmt.Fprintf(&u, "\nThe conversation is at user turn %d of at most %d.", req.Turn, req.MaxTurns)
	}
	temp := 0.0
	if j.temperature != nil {
		temp = *j.temperature
	}
	seed := int64(Seed)
	return voicetest.ChatRequest{
		Model: j.model,
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: sys},
			{Role: voicetest.ChatUser, Content: u.String(), Audio: audio},
		},
		Tools:       []voicetest.ToolSpec{verdictTool(len(criteria), forced)},
		ToolChoice:  VerdictTool,
		Temperature: &temp,
		Seed:        &seed,
	}, nil
}

// verdictTool declares the verdict function for n criteria; a forced
// decision allows only "final".
func verdictTool(n int, forced bool) voicetest.ToolSpec {
	decisions := []string{decisionFinal, decisionContinue}
	if forced {
		decisions = []string{decisionFinal}
	}
	schema := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"decision", "criteria", "reasoning"},
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "enum": decisions,
				"description": `"final" to end the test with this verdict; "continue" to let the conversation go on`},
			"criteria": map[string]any{
				"type": "array", "minItems": n, "maxItems": n,
				"description": "exactly one entry per numbered criterion",
				"items": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"required":             []string{"id", "status", "reasoning"},
					"properties": map[string]any{
						"id":        map[string]any{"type": "integer", "minimum": 1, "maximum": n, "description": "the criterion's number"},
						"status":    map[string]any{"type": "string", "enum": []string{"pass", "fail", "inconclusive"}},
						"reasoning": map[string]any{"type": "string", "description": "why, citing turns and words"},
					},
				},
			},
			"reasoning": map[string]any{"type": "string", "description": "the overall explanation"},
		},
	}
	b, _ := json.Marshal(schema) // a map of strings, ints and slices always encodes
	return voicetest.ToolSpec{Name: VerdictTool, Description: "Record the verdict on every numbered criterion.", Parameters: b}
}

// verdictAnswer is a validated verdict call.
type verdictAnswer struct {
	Decision string `json:"decision"`
	Criteria []struct {
		ID        int    `json:"id"`
		Status    string `json:"status"`
		Reasoning string `json:"reasoning"`
	} `json:"criteria"`
	Reasoning string `json:"reasoning"`
}

// parseVerdict finds and validates the verdict call in resp.
func parseVerdict(resp voicetest.ChatResponse, n int, forced bool) (verdictAnswer, error) {
	var a verdictAnswer
	args, err := toolArgs(resp, VerdictTool)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return a, fmt.Errorf("the %s arguments are not the JSON object the schema describes: %v", VerdictTool, err)
	}
	var problems []string
	switch a.Decision {
	case decisionFinal:
	case decisionContinue:
		if forced {
			problems = append(problems, `decision is "continue", but this is the final verdict: set decision to "final"`)
		}
	default:
		problems = append(problems, fmt.Sprintf(`decision is %q; use "final" or "continue"`, a.Decision))
	}
	seen := make([]bool, n+1)
	for _, c := range a.Criteria {
		switch {
		case c.ID < 1 || c.ID > n:
			problems = append(problems, fmt.Sprintf("criterion id %d does not exist; ids are 1 to %d", c.ID, n))
			continue
		case seen[c.ID]:
			problems = append(problems, fmt.Sprintf("criterion %d is answered more than once", c.ID))
		}
		seen[c.ID] = true
		switch voicetest.Status(c.Status) {
		case voicetest.StatusPass, voicetest.StatusFail, voicetest.StatusInconclusive:
		default:
			problems = append(problems, fmt.Sprintf(`criterion %d has status %q; use "pass", "fail" or "inconclusive"`, c.ID, c.Status))
		}
	}
	var missing []string
	for id := 1; id <= n; id++ {
		if !seen[id] {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "criteria "+strings.Join(missing, ", ")+" are not answered")
	}
	if len(problems) > 0 {
		return a, errors.New(strings.Join(problems, "; "))
	}
	return a, nil
}

// judgment turns a valid answer into a Judgment over criteria.
func (a verdictAnswer) judgment(criteria []string, forced bool) voicetest.Judgment {
	v := voicetest.Judgment{Reasoning: a.Reasoning, Criteria: make([]voicetest.CriterionResult, len(criteria))}
	for _, c := range a.Criteria {
		v.Criteria[c.ID-1] = voicetest.CriterionResult{Criterion: criteria[c.ID-1], Status: voicetest.Status(c.Status), Reasoning: c.Reasoning}
	}
	switch st := v.Status(); {
	case forced:
		v.Decided = true
	case st == voicetest.StatusFail:
		// A criterion is clearly broken: end the run now.
		v.Decided = true
	case a.Decision == decisionFinal && st == voicetest.StatusPass:
		v.Decided = true
	default:
		// "continue", or "final" with inconclusive criteria: an
		// inconclusive criterion never ends a run early.
		v.Decided = false
	}
	return v
}

// toolArgs returns the arguments of the call of tool in resp.
func toolArgs(resp voicetest.ChatResponse, tool string) (json.RawMessage, error) {
	var names []string
	for _, c := range resp.Message.ToolCalls {
		if c.Name == tool {
			if len(c.Arguments) == 0 {
				return nil, fmt.Errorf("the %s call has no arguments", tool)
			}
			return c.Arguments, nil
		}
		names = append(names, c.Name)
	}
	if len(names) > 0 {
		return nil, fmt.Errorf("the answer calls %s instead of %s", strings.Join(names, ", "), tool)
	}
	return nil, fmt.Errorf("the answer does not call %s (it says %q)", tool, clip(resp.Message.Content))
}

// askValid sends req; when parse rejects the answer it sends the problem
// back to the model once and parses the second answer. The check goes
// with the request (ChatRequest.Check), so that an LLM that caches
// answers, such as an *llm.Client, does the retry itself and never keeps
// an answer that does not parse.
func askValid[T any](ctx context.Context, l voicetest.LLM, req voicetest.ChatRequest, parse func(voicetest.ChatResponse) (T, error)) (T, error) {
	var zero T
	req.Check = func(resp voicetest.ChatResponse) error {
		_, err := parse(resp)
		return err
	}
	resp, err := l.Complete(ctx, req)
	if errors.Is(err, voicetest.ErrAnswerRejected) {
		return zero, fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
	}
	if err != nil {
		return zero, err
	}
	v, perr := parse(resp)
	if perr == nil {
		return v, nil
	}
	// An LLM that does not check answers: ask again here.
	retry := req
	retry.Messages = append(append([]voicetest.ChatMessage(nil), req.Messages...), llm.RetryMessages(req, resp, perr)...)
	resp2, err := l.Complete(ctx, retry)
	if err != nil {
		return zero, fmt.Errorf("retrying after an invalid answer (%v): %w", perr, err)
	}
	v, perr2 := parse(resp2)
	if perr2 != nil {
		return zero, fmt.Errorf("%w: %v; after one retry: %v", ErrInvalidAnswer, perr, perr2)
	}
	return v, nil
}

// WithoutDescription returns a copy of the judge that is not shown the
// scenario's description (Config.Description), for criteria that must be
// judged on the conversation alone.
func (j *CriteriaJudge) WithoutDescription() *CriteriaJudge {
	c := j.clone()
	c.noDescription = true
	return c
}

// WithTimeline returns a copy of the judge that is also shown the
// conversation's timeline (RenderTimeline): who spoke when, the pauses,
// the overlaps and who gave way, barge-ins, latencies, tool calls and
// their results. Criteria such as "the agent let the caller finish" or
// "it did not leave the caller waiting" need it. The timeline's times
// are part of the request, so its cached answer replays for a
// conversation with the same timings: exact for in-process agents on
// virtual time; a remote agent's timings vary from run to run.
func (j *CriteriaJudge) WithTimeline() *CriteriaJudge {
	c := j.clone()
	c.timeline = true
	return c
}

// WithAudio returns a copy of the judge that hears the call: the whole
// conversation, both parties mixed on one time axis, is sent as input
// audio (a WAV clip at JudgeAudioRate, at most MaxJudgeAudio of it) with
// the transcript. The judge's model must take audio input (for OpenAI,
// an audio model such as gpt-4o-audio-preview: set it with WithModel or
// VOICETEST_LLM_MODEL). The request is cached like every other: the audio
// counts in its key by its digest, so the same audio replays the same
// verdict, and different audio (another run of a remote agent, another
// TTS) is a new question. A conversation without audio (a text-only
// agent) is an error.
func (j *CriteriaJudge) WithAudio() *CriteriaJudge {
	c := j.clone()
	c.audio = &audioInput{}
	return c
}

// WithTurnAudio is WithAudio with only the chosen turns' speech: one clip
// per stretch of speech of those turns, each labelled with its turn and
// speaker ("Turn 2, the agent:"), in time order.
func (j *CriteriaJudge) WithTurnAudio(turns ...int) *CriteriaJudge {
	c := j.clone()
	c.audio = &audioInput{turns: append([]int(nil), turns...), chosen: true}
	return c
}
