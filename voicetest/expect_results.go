package voicetest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Expectations on tool results and handoffs, as LiveKit's
// RunResult.expect has them (is_function_call_output, is_agent_handoff,
// contains_function_call): a call matched together with its result, and
// an agent handing the conversation over, in order.

// IsToolResultOf asserts that the item is a successful result of the
// named tool whose output contains result: compared as JSON, objects as
// subsets (every key of result present with an equal value, nested
// objects likewise), anything else by equality. Nil result matches any
// output.
func (ee *EventExpectation) IsToolResultOf(name string, result any) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	e := ee.ev
	if e.Type != EventToolResult || e.Tool == nil || e.Tool.Name != name || e.Tool.IsError {
		ee.x.failf("item %d: expected a successful result of tool %q, got %s", ee.idx, name, describeItem(*e))
		return ee.x
	}
	if err := matchJSON(e.Tool.Result, result, "output"); err != nil {
		ee.x.failf("item %d: result of tool %q: %v", ee.idx, name, err)
	}
	return ee.x
}

// IsHandoff asserts that the item is a handoff to the agent named to (""
// matches a handoff to any agent).
func (ee *EventExpectation) IsHandoff(to string) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventHandoff || (to != "" && ee.ev.Text != to) {
		want := "a handoff"
		if to != "" {
			want = fmt.Sprintf("a handoff to %q", to)
		}
		ee.x.failf("item %d: expected %s, got %s", ee.idx, want, describeItem(*ee.ev))
	}
	return ee.x
}

// ContainsToolResult asserts that some item (anywhere, regardless of the
// cursor) is a successful result of the named tool whose output contains
// result (see IsToolResultOf; nil matches any output).
func (x *Expectation) ContainsToolResult(name string, result any) *Expectation {
	if x.err != nil {
		return x
	}
	var reasons []string
	for _, e := range x.events {
		if e.Type != EventToolResult || e.Tool == nil || e.Tool.Name != name {
			continue
		}
		if e.Tool.IsError {
			reasons = append(reasons, fmt.Sprintf("a result is an error: %s", compactJSON(e.Tool.Result)))
			continue
		}
		if err := matchJSON(e.Tool.Result, result, "output"); err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		return x
	}
	if len(reasons) > 0 {
		x.failf("no result of tool %q matches: %s", name, strings.Join(reasons, "; "))
	} else {
		x.failf("no result of tool %q", name)
	}
	return x
}

// ContainsToolCallWithResult asserts that some call of the named tool
// whose arguments contain args (see IsToolCall) got a successful result
// whose output contains result (see IsToolResultOf): the result with the
// call's ID, or, when the protocol gives none, the first result of that
// tool after the call. Nil args or result match anything.
func (x *Expectation) ContainsToolCallWithResult(name string, args map[string]any, result any) *Expectation {
	if x.err != nil {
		return x
	}
	var reasons []string
	calls := 0
	for i, e := range x.events {
		if e.Type != EventToolCall || e.Tool == nil || e.Tool.Name != name {
			continue
		}
		calls++
		if err := matchArgs(e.Tool.Arguments, args); err != nil {
			reasons = append(reasons, fmt.Sprintf("item %d: %v", i, err))
			continue
		}
		j := resultOf(x.events, i)
		if j < 0 {
			reasons = append(reasons, fmt.Sprintf("item %d: the call %s got no result", i, compactJSON(e.Tool.Arguments)))
			continue
		}
		r := x.events[j].Tool
		if r.IsError {
			reasons = append(reasons, fmt.Sprintf("item %d: the call's result (item %d) is an error: %s", i, j, compactJSON(r.Result)))
			continue
		}
		if err := matchJSON(r.Result, result, "output"); err != nil {
			reasons = append(reasons, fmt.Sprintf("item %d: the call's result (item %d): %v", i, j, err))
			continue
		}
		return x
	}
	switch {
	case calls == 0:
		x.failf("no call of tool %q", name)
	default:
		x.failf("no call of tool %q with a matching result: %s", name, strings.Join(reasons, "; "))
	}
	return x
}

// ContainsHandoff asserts that some item (anywhere, regardless of the
// cursor) is a handoff to the agent named to ("" matches any).
func (x *Expectation) ContainsHandoff(to string) *Expectation {
	if x.err != nil {
		return x
	}
	var seen []string
	for _, e := range x.events {
		if e.Type != EventHandoff {
			continue
		}
		if to == "" || e.Text == to {
			return x
		}
		seen = append(seen, fmt.Sprintf("%q", e.Text))
	}
	if len(seen) > 0 {
		x.failf("no handoff to %q (handoffs to %s)", to, strings.Join(seen, ", "))
	} else {
		x.failf("no handoff to %q", to)
	}
	return x
}

// resultOf returns the index of the result of the call at events[i]: the
// result with its ID, else the first result of the same tool after it
// that no other call claims by ID; -1 when there is none.
func resultOf(events []Event, i int) int {
	call := events[i].Tool
	for j := i + 1; j < len(events); j++ {
		r := events[j].Tool
		if events[j].Type != EventToolResult || r == nil {
			continue
		}
		if call.ID != "" && r.ID != "" {
			if r.ID == call.ID {
				return j
			}
			continue
		}
		if r.Name == call.Name {
			return j
		}
	}
	return -1
}

// matchJSON reports whether the JSON value got contains want (objects by
// key subset, anything else by equality, compared as JSON); nil want
// matches anything. what names got in errors.
func matchJSON(got json.RawMessage, want any, what string) error {
	if want == nil {
		return nil
	}
	var g any
	if len(got) == 0 {
		g = nil
	} else if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("the %s is not valid JSON (%v): %s", what, err, got)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("the expected %s cannot be encoded as JSON: %w", what, err)
	}
	var w any
	if err := json.Unmarshal(wb, &w); err != nil {
		return fmt.Errorf("the expected %s cannot be decoded: %w", what, err)
	}
	if path, ok := subset(w, g, "$"); !ok {
		return fmt.Errorf("%s %s does not contain %s (first difference at %s)", what, compactJSON(got), wb, path)
	}
	return nil
}
