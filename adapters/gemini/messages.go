package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"google.golang.org/genai"
)

// The client's messages that never change.
var (
	msgActivityStart = []byte(`{"realtimeInput":{"activityStart":{}}}`)
	msgActivityEnd   = []byte(`{"realtimeInput":{"activityEnd":{}}}`)
)

// The audio message's text around its base64 data, members in the order
// encoding/json gives a map (the SDK's): data, then mimeType.
const (
	audioHead = `{"realtimeInput":{"audio":{"data":"`
	audioTail = `","mimeType":"` + inputMIME + `"}}}`
)

// appendAudioMessage appends the realtimeInput message of the PCM16 audio
// pcm16 (at 16 kHz) to b.
func appendAudioMessage(b, pcm16 []byte) []byte {
	b = append(b, audioHead...)
	b = wire.AppendBase64(b, pcm16)
	return append(b, audioTail...)
}

// textMessage returns the realtimeInput message of text.
func textMessage(text string) ([]byte, error) {
	return json.Marshal(map[string]any{"realtimeInput": map[string]string{"text": text}})
}

// toolResponseMessage returns the toolResponse message of resps.
func toolResponseMessage(resps []*genai.FunctionResponse) ([]byte, error) {
	return json.Marshal(map[string]any{"toolResponse": map[string]any{"functionResponses": resps}})
}

// serverMessage is what the adapter reads of a BidiGenerateContentServerMessage
// (ai.google.dev/api/live). Its fields are named as genai.LiveServerMessage's
// (TestEquivalentDecoding compares them field by field); members the
// adapter only notes are empty structs, and members it does not know are
// ignored, as genai does.
type serverMessage struct {
	SetupComplete                *struct{}             `json:"setupComplete"`
	ServerContent                *serverContent        `json:"serverContent"`
	ToolCall                     *serverToolCall       `json:"toolCall"`
	ToolCallCancellation         *toolCallCancellation `json:"toolCallCancellation"`
	UsageMetadata                *struct{}             `json:"usageMetadata"`
	GoAway                       *goAway               `json:"goAway"`
	SessionResumptionUpdate      *struct{}             `json:"sessionResumptionUpdate"`
	VoiceActivityDetectionSignal *struct{}             `json:"voiceActivityDetectionSignal"`
	VoiceActivity                *struct{}             `json:"voiceActivity"`
	// Error is the member that makes the message an error report (the
	// SDK's Receive fails on any message that has it).
	Error json.RawMessage `json:"error"`
}

// serverContent is BidiGenerateContentServerContent.
type serverContent struct {
	ModelTurn           *content       `json:"modelTurn"`
	TurnComplete        bool           `json:"turnComplete"`
	GenerationComplete  bool           `json:"generationComplete"`
	Interrupted         bool           `json:"interrupted"`
	InputTranscription  *transcription `json:"inputTranscription"`
	OutputTranscription *transcription `json:"outputTranscription"`
}

// content is a Content of the model's turn.
type content struct {
	Parts []*part `json:"parts"`
}

// part is one Part: audio, text or a thought.
type part struct {
	Text       string `json:"text"`
	Thought    bool   `json:"thought"`
	InlineData *blob  `json:"inlineData"`
}

// blob is inline data; Data is base64 in JSON.
type blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// transcription is a Transcription.
type transcription struct {
	Text     string `json:"text"`
	Finished bool   `json:"finished"`
}

// serverToolCall is a LiveServerToolCall.
type serverToolCall struct {
	FunctionCalls []*functionCall `json:"functionCalls"`
}

// functionCall is one FunctionCall.
type functionCall struct {
	ID   string         `json:"id"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// toolCallCancellation is a LiveServerToolCallCancellation.
type toolCallCancellation struct {
	IDs []string `json:"ids"`
}

// goAway is a LiveServerGoAway; TimeLeft is a protobuf Duration in JSON
// ("5s", "0.5s").
type goAway struct {
	TimeLeft duration `json:"timeLeft"`
}

// duration is a protobuf Duration in JSON: a string of seconds with the
// suffix s. An empty string is zero.
type duration time.Duration

// UnmarshalJSON parses a Duration.
func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration: %w", err)
	}
	if s == "" {
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration: %w", err)
	}
	*d = duration(v)
	return nil
}

// parseServerMessage decodes one server message into m (which it resets).
// It reports a message that is not JSON, or whose members have the wrong
// types, as an error; an error report ({"error":…}) is an *Error with the
// message's text.
func parseServerMessage(data []byte, m *serverMessage) error {
	*m = serverMessage{}
	// A member of the wrong type does not stop the decoding of the others
	// (encoding/json reports it at the end): an error report is one
	// whatever else it holds, as in the SDK, which looks for "error"
	// before it converts the message.
	err := json.Unmarshal(data, m)
	if len(m.Error) > 0 && !bytes.Equal(m.Error, []byte("null")) {
		return &Error{Message: string(data)}
	}
	return err
}
