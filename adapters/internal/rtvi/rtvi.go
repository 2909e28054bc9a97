// Package rtvi is the client side of RTVI, the message protocol of
// Pipecat's RTVI processor and observer (pipecat
// src/pipecat/processors/frameworks/rtvi/models.py, protocol 2.1.0:
// messages {"label":"rtvi-ai","type","id","data"}), shared by the adapters
// whose transport carries it: adapters/pipecat (in protobuf MessageFrames
// or as bare JSON text) and adapters/webrtc (on a WebRTC data channel, as
// Pipecat's SmallWebRTCTransport carries it).
//
// A Decoder turns the bot's messages into voicetest events:
//
//   - bot-tts-text: AgentTranscript deltas (the text the bot's TTS speaks,
//     ahead of the audio), and the turn's whole text with Final set at
//     bot-stopped-speaking or at an interruption.
//   - user-transcription: UserTranscript (Final as the message says).
//   - bot-started-speaking, bot-stopped-speaking: AgentData named after the
//     message; bot-stopped-speaking is also AgentTurnEnd, unless the turn
//     was interrupted.
//   - bot-interrupted: AgentInterrupted, once per barge-in however many of
//     the transport's signals tell of it (Decoder.Interruption).
//   - llm-function-call-in-progress and llm-function-call-stopped: the
//     bot's own function calls and their results, as AgentToolCall and
//     AgentToolResult. The deprecated llm-function-call asks the client to
//     run a function: AgentToolCall, handed to Decoder.Answer when set.
//   - server-message: AgentData named "server-message".
//   - error, error-response: an *Error (wrapped in wire.AgentError, so the
//     Conn stays usable).
//   - the rest (bot-ready, bot-llm-*, metrics, user speaking state, …) is
//     consumed silently; an unknown type is logged once.
//
// A transport message that is not RTVI is AgentData named "message".
package rtvi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Version is the RTVI protocol version voicetest speaks.
const Version = "2.1.0"

// Label is the label of every RTVI message.
const Label = "rtvi-ai"

// Error is an error an RTVI bot reported (error or error-response). Recv
// returns it; the conversation can go on unless Fatal.
type Error struct {
	// Adapter names the adapter that received it.
	Adapter string
	// Message is the bot's message.
	Message string
	// Fatal reports that the bot's pipeline stopped.
	Fatal bool
}

// Error returns the bot's message.
func (e *Error) Error() string {
	fatal := ""
	if e.Fatal {
		fatal = " (fatal: the pipeline stopped)"
	}
	return "adapters: " + e.Adapter + ": bot error: " + e.Message + fatal
}

// ClientMessage returns the JSON of the RTVI client message typ with id
// "voicetest-<id>".
func ClientMessage(id int, typ string, data any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"label": Label, "type": typ, "id": "voicetest-" + strconv.Itoa(id), "data": data})
	if err != nil {
		return nil, fmt.Errorf("encoding RTVI %s: %w", typ, err)
	}
	return b, nil
}

// ClientReady returns the data of client-ready.
func ClientReady() map[string]any {
	return map[string]any{"version": Version, "about": map[string]any{"library": "voicetest"}}
}

// SendText returns the data of send-text: the bot answers text as if it
// were heard, with audio.
func SendText(text string) map[string]any {
	return map[string]any{"content": text, "options": map[string]any{"run_immediately": true, "audio_response": true}}
}

// DTMF returns the data of the dtmf message for digits (already checked
// with wire.CheckDTMF), or an error for keys RTVI does not take.
func DTMF(digits string) (map[string]any, error) {
	buttons := strings.Split(digits, "")
	for _, b := range buttons {
		if b >= "A" && b <= "D" {
			return nil, fmt.Errorf("SendDTMF: %q: RTVI dtmf takes 0-9, * and # only", b)
		}
	}
	return map[string]any{"buttons": buttons}, nil
}

// FunctionCallResult returns the data of llm-function-call-result for
// call, answered with res (from wire.RunTool).
func FunctionCallResult(call, res voicetest.ToolCall) map[string]any {
	var args, result any
	json.Unmarshal(call.Arguments, &args)
	json.Unmarshal(res.Result, &result)
	return map[string]any{"function_name": call.Name, "tool_call_id": call.ID, "arguments": args, "result": result}
}

// Decoder turns an RTVI bot's messages into events. It keeps the state of
// the bot's turn: its text so far, whether it was interrupted, the
// function calls reported. It is not safe for concurrent use: adapters
// call it from their reader goroutine.
type Decoder struct {
	// Adapter names the adapter, in errors and logs.
	Adapter string
	// Down is the adapter's converter of the bot's audio: flushed before
	// the turn's end, reset at an interruption. Nil for none.
	Down *wire.Downstream
	// Logf logs (once per unknown message type).
	Logf func(format string, args ...any)
	// Answer, when set, is handed each function the bot asks the client
	// to run (llm-function-call); it must not block.
	Answer func(call voicetest.ToolCall)

	interrupted bool // an AgentInterrupted was reported and no audio followed
	text        strings.Builder
	calls       map[string]bool // tool call ids reported
	unknown     map[string]bool
}

// Audio tells the decoder that the bot's audio arrived: a new utterance,
// after an interruption, may be interrupted again.
func (d *Decoder) Audio() { d.interrupted = false }

// AddText adds to the turn's text, with a space between words.
func (d *Decoder) AddText(s string) {
	if d.text.Len() > 0 && !strings.HasSuffix(d.text.String(), " ") && !strings.HasPrefix(s, " ") {
		d.text.WriteByte(' ')
	}
	d.text.WriteString(s)
}

// Interruption reports a barge-in once, however many of the bot's signals
// (an InterruptionFrame, a clear, bot-interrupted) tell of it: the turn's
// text so far, then AgentInterrupted naming what.
func (d *Decoder) Interruption(what string) []voicetest.AgentEvent {
	if d.Down != nil {
		d.Down.Reset()
	}
	evs := d.finalText(nil)
	if d.interrupted {
		return evs
	}
	d.interrupted = true
	return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentInterrupted, Text: what})
}

// finalText appends the turn's whole text, if any, with Final set.
func (d *Decoder) finalText(evs []voicetest.AgentEvent) []voicetest.AgentEvent {
	if d.text.Len() == 0 {
		return evs
	}
	text := strings.TrimSpace(d.text.String())
	d.text.Reset()
	return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: text, Final: true})
}

// message is an RTVI server message.
type message struct {
	Label string          `json:"label"`
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Data  json.RawMessage `json:"data"`
}

// quiet reports whether typ is an RTVI message that carries nothing a
// test needs.
func quiet(typ string) bool {
	switch typ {
	case "bot-ready", "bot-llm-started", "bot-llm-stopped", "bot-llm-text", "bot-tts-started", "bot-tts-stopped",
		"bot-output", "bot-transcription", "bot-tts-audio", "bot-llm-search-response", "metrics",
		"user-started-speaking", "user-stopped-speaking", "vad-user-started-speaking", "vad-user-stopped-speaking",
		"user-llm-text", "user-mute-started", "user-mute-stopped", "user-audio-level", "bot-audio-level",
		"llm-function-call-started", "server-response":
		return true
	}
	return false
}

// Message decodes one transport message: RTVI, or anything else as data.
func (d *Decoder) Message(data []byte) ([]voicetest.AgentEvent, error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("a transport message that is not JSON: %w", err)
	}
	if m.Label != Label {
		return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "message", Data: append(json.RawMessage(nil), data...)}}, nil
	}
	var v struct {
		Text         string          `json:"text"`
		Final        *bool           `json:"final"`
		Error        string          `json:"error"`
		Message      string          `json:"message"`
		Fatal        bool            `json:"fatal"`
		ToolCallID   string          `json:"tool_call_id"`
		FunctionName string          `json:"function_name"`
		Arguments    json.RawMessage `json:"arguments"`
		Args         json.RawMessage `json:"args"`
		Cancelled    bool            `json:"cancelled"`
		Result       json.RawMessage `json:"result"`
	}
	if len(m.Data) > 0 && string(m.Data) != "null" {
		if err := json.Unmarshal(m.Data, &v); err != nil && m.Type != "server-message" {
			return nil, fmt.Errorf("RTVI %s: data: %w", m.Type, err)
		}
	}
	switch m.Type {
	case "bot-tts-text":
		d.AddText(v.Text)
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: v.Text}}, nil
	case "user-transcription":
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: v.Text, Final: v.Final == nil || *v.Final}}, nil
	case "bot-started-speaking":
		return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: m.Type}}, nil
	case "bot-stopped-speaking":
		var evs []voicetest.AgentEvent
		if d.Down != nil {
			evs = d.Down.Flush(evs)
		}
		evs = d.finalText(evs)
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentData, Text: m.Type})
		if !d.interrupted {
			evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
		}
		return evs, nil
	case "bot-interrupted":
		return d.Interruption("bot-interrupted"), nil
	case "llm-function-call-in-progress", "llm-function-call":
		args := v.Arguments
		if m.Type == "llm-function-call" {
			args = v.Args
		}
		if v.ToolCallID == "" {
			return nil, fmt.Errorf("RTVI %s without tool_call_id", m.Type)
		}
		if d.calls[v.ToolCallID] {
			return nil, nil
		}
		if len(d.calls) >= wire.MaxResponseCalls {
			return nil, &voicetest.LimitError{What: "the function calls of one " + d.Adapter + " call", Limit: wire.MaxResponseCalls, Unit: "calls", Name: "wire.MaxResponseCalls"}
		}
		if d.calls == nil {
			d.calls = map[string]bool{}
		}
		d.calls[v.ToolCallID] = true
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		call := voicetest.ToolCall{ID: v.ToolCallID, Name: v.FunctionName, Arguments: append(json.RawMessage(nil), args...)}
		if m.Type == "llm-function-call" && d.Answer != nil {
			d.Answer(call)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentToolCall, Tool: &call}}, nil
	case "llm-function-call-stopped":
		res := voicetest.ToolCall{ID: v.ToolCallID, Name: v.FunctionName, Result: append(json.RawMessage(nil), v.Result...), IsError: v.Cancelled}
		if v.Cancelled && len(res.Result) == 0 {
			res.Result = json.RawMessage(`"cancelled"`)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentToolResult, Tool: &res}}, nil
	case "server-message":
		return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: m.Type, Data: append(json.RawMessage(nil), m.Data...)}}, nil
	case "error", "error-response":
		msg := v.Error
		if msg == "" {
			msg = v.Message
		}
		return nil, wire.AgentError{Err: &Error{Adapter: d.Adapter, Message: msg, Fatal: v.Fatal}}
	}
	if d.unknown == nil {
		d.unknown = map[string]bool{}
	}
	if !quiet(m.Type) && wire.LogOnce(d.unknown, m.Type) && d.Logf != nil {
		d.Logf("%s: ignoring RTVI message %q, which this adapter does not know (logged once)", d.Adapter, m.Type)
	}
	return nil, nil
}
