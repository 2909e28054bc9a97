package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/voicetest-go/voicetest/voicetest"
)

// ToolHandler answers a tool call the agent under test makes of the client
// (OpenAI Realtime function calls, ElevenLabs client tools). It returns the
// tool's result as JSON; an error is sent back to the agent as a failed
// call. ctx ends when the Conn closes, and the handler must return then.
//
// The adapter reports each call as a voicetest.AgentToolCall event and each
// answer as a voicetest.AgentToolResult event, so that expectations and
// judges see both.
type ToolHandler func(ctx context.Context, call voicetest.ToolCall) (result json.RawMessage, err error)

// RunTool calls h, turning a panic into an error, and returns the result
// event's ToolCall and the text to send to the agent.
func RunTool(ctx context.Context, h ToolHandler, call voicetest.ToolCall) (res voicetest.ToolCall, output string) {
	res = call
	result, err := func() (r json.RawMessage, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("tool handler panicked: %v", p)
			}
		}()
		return h(ctx, call)
	}()
	switch {
	case err != nil:
		res.IsError = true
		res.Result, _ = json.Marshal(map[string]string{"error": err.Error()})
	case len(result) == 0:
		res.Result = json.RawMessage(`null`)
	case !json.Valid(result):
		// The agent takes text; keep it, but as a JSON string so that the
		// result event stays valid JSON.
		res.Result, _ = json.Marshal(string(result))
	default:
		res.Result = append(json.RawMessage(nil), result...)
	}
	return res, string(res.Result)
}

// ToolArguments returns the arguments text of a tool call as JSON: as it is
// when it is valid JSON, else as a JSON string (a model can emit broken
// arguments; the test should see them, not lose them).
func ToolArguments(args string) (json.RawMessage, bool) {
	if args == "" {
		return json.RawMessage(`{}`), true
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args), true
	}
	b, _ := json.Marshal(args)
	return b, false
}

// CheckEvent checks that a raw client event is one JSON object, so that a
// raw send cannot put a broken frame on the wire.
func CheckEvent(event json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(event, &obj); err != nil || obj == nil {
		return fmt.Errorf("event %.80q is not a JSON object", event)
	}
	if bytes.ContainsAny(event, "\r\n") {
		// One frame, one line: compact it so captures stay one record a
		// line.
		return errors.New("event spans several lines; compact it (json.Compact) first")
	}
	return nil
}
