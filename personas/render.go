package personas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/voicetest-go/voicetest/voicetest"
)

// PayloadRenderer turns an agent's tool call, tool result or data payload
// (a voicetest.Event of type EventToolCall, EventToolResult or EventData)
// into the text an LLM caller sees among the agent's turns. An empty
// string hides the event. It is a voicetest.DataView, so a view such as
// voicetest.XMLView("screen") can be given to LLMUser.Payloads as it is.
type PayloadRenderer = voicetest.DataView

// maxPayloadChars bounds one rendered payload.
const maxPayloadChars = 600

// RenderPayload is the default PayloadRenderer: one bracketed line naming
// the tool or payload, with its JSON compacted and cut to 600 characters.
// A caller on the phone would not see these; an LLM caller sees them so
// that it can react to what the agent's system did ("your booking number
// is …"), as the adapters expose them.
func RenderPayload(e voicetest.Event) string {
	switch e.Type {
	case voicetest.EventToolCall:
		if e.Tool == nil {
			return ""
		}
		return fmt.Sprintf("[the agent called tool %s with %s]", e.Tool.Name, compactJSON(e.Tool.Arguments))
	case voicetest.EventToolResult:
		if e.Tool == nil {
			return ""
		}
		what := "result"
		if e.Tool.IsError {
			what = "error"
		}
		return fmt.Sprintf("[tool %s returned %s: %s]", e.Tool.Name, what, compactJSON(e.Tool.Result))
	case voicetest.EventData:
		name := e.Text
		if name == "" {
			name = "data"
		}
		return fmt.Sprintf("[the agent sent %s: %s]", name, compactJSON(e.Data))
	}
	return ""
}

// compactJSON returns raw as compact JSON (or as text when it is not
// JSON), cut to maxPayloadChars.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	s := string(raw)
	if json.Compact(&b, raw) == nil {
		s = b.String()
	}
	return truncate(s, maxPayloadChars)
}

// truncate cuts s to at most n characters (runes), marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// side is a party as the LLM caller sees it.
type side int

const (
	sideAgent side = iota // the agent under test: the model's "user"
	sideSelf              // the simulated caller: the model's "assistant"
)

type line struct {
	turn    int
	at      time.Duration
	side    side
	payload bool // a rendered tool call, tool result or data payload
	text    string
}

// conversationLines is the conversation of st from the caller's point of
// view: the agent's messages and rendered payloads, and the caller's own
// messages, in order of turn: within a turn the caller's message first,
// then the agent's side in time order. (Times alone do not order them:
// on the real clock with fast pacing the agent's times are playback
// times, ahead of the user's.)
func conversationLines(st *voicetest.State, render PayloadRenderer) []line {
	var out []line
	for _, m := range st.Transcript() {
		switch m.Role {
		case voicetest.RoleAgent:
			text := m.Text
			if m.AudioOnly || strings.TrimSpace(text) == "" {
				text = "(inaudible)"
			}
			if m.Interrupted {
				text += " [cut off]"
			}
			out = append(out, line{turn: m.Turn, at: m.Start, side: sideAgent, text: text})
		case voicetest.RoleUser:
			if t := strings.TrimSpace(m.Text); t != "" {
				out = append(out, line{turn: m.Turn, at: m.Start, side: sideSelf, text: t})
			}
		}
	}
	if render != nil {
		for _, e := range st.Events() {
			switch e.Type {
			case voicetest.EventToolCall, voicetest.EventToolResult, voicetest.EventData:
				if t := render(e); t != "" {
					out = append(out, line{turn: e.Turn, at: e.At, side: sideAgent, payload: true, text: t})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b line) int {
		if a.turn != b.turn {
			return a.turn - b.turn
		}
		if a.side != b.side {
			return int(b.side) - int(a.side) // the caller's line first
		}
		if c := cmpDuration(a.at, b.at); c != 0 {
			return c
		}
		// At the same instant a payload comes first: agents call tools
		// before they speak of the result.
		if a.payload != b.payload {
			if a.payload {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reversed turns lines into chat messages with the roles reversed: the
// agent's lines become user messages and the caller's own lines assistant
// messages, consecutive lines of one side joined into one message. Models
// are trained to speak as the assistant, so this way the model speaks as
// the caller instead of drifting into helping. opening is the user message
// that starts a conversation in which the agent has not spoken first.
func reversed(lines []line, opening string) []voicetest.ChatMessage {
	var out []voicetest.ChatMessage
	if len(lines) == 0 || lines[0].side != sideAgent {
		out = append(out, voicetest.ChatMessage{Role: voicetest.ChatUser, Content: opening})
	}
	for _, l := range lines {
		role := voicetest.ChatUser
		if l.side == sideSelf {
			role = voicetest.ChatAssistant
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content += "\n" + l.text
			continue
		}
		out = append(out, voicetest.ChatMessage{Role: role, Content: l.text})
	}
	return out
}
