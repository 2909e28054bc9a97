package voicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A DataView turns something the agent showed rather than said (a data
// payload such as a LayerCode response.data or a WebSocket data frame, a
// tool call such as a Realtime or ElevenLabs client tool, or a tool's
// result) into the text a simulated caller sees of it: a caller looking
// at a screen the agent fills in ("the booking form now shows 7 pm"). It
// is given an Event of type EventData, EventToolCall or EventToolResult
// and returns the text, or "" to hide the event from the caller.
//
// Config.DataView sets the view of a scenario; State.Shown applies it.
// The personas package's LLM callers use it too (unless the persona sets
// its own), so that what the caller sees is in what the model is asked.
type DataView func(e Event) string

// DefaultDataRoot is the root tag of DefaultDataView.
const DefaultDataRoot = "data"

// DefaultDataView is the view of a scenario whose Config.DataView is nil:
// XMLView(DefaultDataRoot). Data payloads are shown; tool calls and
// results (DataView.WithTools shows those of client tools), and payloads
// with nothing in them (a protocol's bare markers), are not.
func DefaultDataView(e Event) string { return xmlView(DefaultDataRoot, e) }

// Bounds of XMLView.
const (
	// maxViewChars bounds the text of one shown event, in characters
	// (runes); a longer one is cut and ends in "…".
	maxViewChars = 4000
	// maxViewDepth bounds the nesting XMLView writes as elements; deeper
	// values are written as their compact JSON.
	maxViewDepth = 16
)

// XMLView returns a DataView that shows each data payload as XML under
// the root tag root (DefaultDataRoot when root is empty or not a valid XML
// name): the payload's name as the root's name attribute, each field of a
// JSON object as an element named after it (in the payload's order;
// characters an XML name cannot hold become "_"), each element of an
// array as an <item>, and scalars as escaped text, indented by two spaces
// a level, as models read it more reliably than JSON. A payload that is
// not JSON is shown as escaped text. Tool calls, tool results and
// payloads with no data are hidden (""). One event's text is cut at 4000
// characters, and nesting deeper than 16 levels is written as compact
// JSON.
//
// For example the payload {"form":"booking","time":"19:00","free":["19:00","21:00"]}
// named "ui" shows, under XMLView("screen"), as
//
//	<screen name="ui">
//	  <form>booking</form>
//	  <time>19:00</time>
//	  <free>
//	    <item>19:00</item>
//	    <item>21:00</item>
//	  </free>
//	</screen>
func XMLView(root string) DataView {
	if !validXMLName(root) {
		root = DefaultDataRoot
	}
	return func(e Event) string { return xmlView(root, e) }
}

func xmlView(root string, e Event) string {
	if e.Type != EventData {
		return ""
	}
	return xmlPayload(root, e.Text, e.Data, false)
}

// xmlPayload writes data as XML under root, named name; an empty payload
// ("", null, {}) is "" unless keepEmpty.
func xmlPayload(root, name string, data json.RawMessage, keepEmpty bool) string {
	data = bytes.TrimSpace(data)
	empty := len(data) == 0 || string(data) == "null" || string(data) == "{}"
	if empty && !keepEmpty {
		return ""
	}
	var b strings.Builder
	b.WriteString("<" + root)
	if name != "" {
		b.WriteString(` name="`)
		escapeXML(&b, name, true)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	switch {
	case empty:
	case !json.Valid(data):
		escapeXML(&b, string(data), false)
	default:
		if err := writeXMLValue(&b, newNumberDecoder(data), 1); err != nil {
			// Valid JSON always decodes; this is only a guard.
			return fmt.Sprintf("<%s>%s</%s>", root, xmlText(string(data)), root)
		}
	}
	if strings.Contains(b.String(), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</" + root + ">")
	return cutView(b.String())
}

// WithTools returns a view that shows what v shows and, besides, the
// calls and results of the named tools (every tool when no name is
// given) as XML: a call's arguments under <tool_call name="…">, a result
// under <tool_result name="…"> (<tool_error …> for a failure). It is for
// tools through which the agent shows the caller something, such as an
// ElevenLabs client tool or a Realtime function the caller's page runs
// ("show_free_times"); a backend tool the caller would never see is better
// left out. A nil v shows only the tools.
func (v DataView) WithTools(names ...string) DataView {
	return func(e Event) string {
		if (e.Type == EventToolCall || e.Type == EventToolResult) && e.Tool != nil &&
			(len(names) == 0 || slices.Contains(names, e.Tool.Name)) {
			if e.Type == EventToolCall {
				return xmlPayload("tool_call", e.Tool.Name, e.Tool.Arguments, true)
			}
			root := "tool_result"
			if e.Tool.IsError {
				root = "tool_error"
			}
			return xmlPayload(root, e.Tool.Name, e.Tool.Result, true)
		}
		if v == nil {
			return ""
		}
		return v(e)
	}
}

// writeXMLValue writes the next JSON value of dec as the content of an
// element at the given depth: text for a scalar, indented child elements
// for an object or an array.
func writeXMLValue(b *strings.Builder, dec *json.Decoder, depth int) error {
	if depth > maxViewDepth {
		// Too deep for elements: the whole value as compact JSON.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return err
		}
		escapeXML(b, c.String(), false)
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		escapeXML(b, scalarText(tok), false)
		return nil
	}
	indent := "\n" + strings.Repeat("  ", depth)
	for dec.More() {
		name := "item"
		if delim == '{' {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := key.(string) // object keys are strings
			name = xmlName(k)
		}
		b.WriteString(indent + "<" + name + ">")
		before := b.Len()
		if err := writeXMLValue(b, dec, depth+1); err != nil {
			return err
		}
		if strings.Contains(b.String()[before:], "\n") {
			b.WriteString(indent)
		}
		b.WriteString("</" + name + ">")
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func newNumberDecoder(data []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec
}

// scalarText returns a JSON scalar token as text: strings as they are,
// numbers as written, true, false, and null as "".
func scalarText(tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case float64:
		return fmt.Sprint(v)
	}
	return ""
}

// xmlName makes key a valid XML element name: characters a name cannot
// hold become "_", and a name that cannot start with its first character
// gets a "_" before it.
func xmlName(key string) string {
	if key == "" {
		return "_"
	}
	var b strings.Builder
	for i, r := range key {
		switch {
		case r == '_' || unicode.IsLetter(r):
		case i > 0 && (r == '-' || r == '.' || unicode.IsDigit(r)):
		case i == 0 && (r == '-' || r == '.' || unicode.IsDigit(r)):
			b.WriteByte('_')
		default:
			r = '_'
		}
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) >= 3 && strings.EqualFold(s[:3], "xml") {
		s = "_" + s // names starting with "xml" are reserved
	}
	return s
}

func validXMLName(s string) bool { return s != "" && xmlName(s) == s }

// escapeXML writes s as XML text (or, with attr, as an attribute value),
// dropping characters XML cannot carry.
func escapeXML(b *strings.Builder, s string, attr bool) {
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case attr && r == '"':
			b.WriteString("&quot;")
		case r == '\t' || r == '\n' || r == '\r':
			if attr {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		case r < 0x20 || r == utf8.RuneError || r == 0xFFFE || r == 0xFFFF:
		default:
			b.WriteRune(r)
		}
	}
}

func xmlText(s string) string {
	var b strings.Builder
	escapeXML(&b, s, false)
	return b.String()
}

// cutView cuts a shown text to maxViewChars characters.
func cutView(s string) string {
	if utf8.RuneCountInString(s) <= maxViewChars {
		return s
	}
	r := []rune(s)
	return string(r[:maxViewChars]) + "…"
}

// DataView returns the scenario's Config.DataView, or nil when it set
// none (State.Shown then uses DefaultDataView). A User that renders the
// agent's payloads itself may use it to show them the way the scenario
// asks.
func (s *State) DataView() DataView { return s.view }

// Shown returns what the agent showed the caller since the caller last
// spoke (the events of the current turn: data payloads, tool calls and
// results), each through the scenario's DataView (DefaultDataView when
// Config.DataView is nil), the texts that are not empty joined by
// newlines, oldest first; "" when nothing was shown. A user-written User
// reads it to react to what is on the caller's screen.
func (s *State) Shown() string {
	view := s.view
	if view == nil {
		view = DefaultDataView
	}
	var parts []string
	for _, e := range s.Events() {
		if e.Turn != s.turn {
			continue
		}
		switch e.Type {
		case EventData, EventToolCall, EventToolResult:
			if t := view(e); strings.TrimSpace(t) != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}
