package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

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

// decoder decodes the server's messages on the reader goroutine. The
// most frequent ones in the compact form the service sends them (the
// model's audio, a transcription, turnComplete, generationComplete,
// interrupted, setupComplete) are read without encoding/json, into
// structures it reuses; every other message, and any of these that is not
// exactly in that form, goes through encoding/json. Both give the same
// serverMessage (TestFastPathAsEncodingJSON, TestEquivalentDecoding).
type decoder struct {
	m     serverMessage
	sc    serverContent
	ct    content
	parts [1]*part
	p     part
	b     blob
	tr    transcription
	raw   []byte // the audio of the last fast audio message
}

// The fast path's message forms.
const (
	fastAudioHead  = `{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"`
	fastAudioMid   = `","data":"`
	fastAudioTail  = `"}}]}}}`
	fastOutputHead = `{"serverContent":{"outputTranscription":{"text":"`
	fastInputHead  = `{"serverContent":{"inputTranscription":{"text":"`
	fastTextTail   = `"}}}`
)

// parse decodes one server message. The message it returns, and what it
// points to, are valid until the next call.
func (d *decoder) parse(data []byte) (*serverMessage, error) {
	if d.fast(data) {
		return &d.m, nil
	}
	return &d.m, parseServerMessage(data, &d.m)
}

// fast decodes data if it is one of the fast path's forms, and reports
// whether it was.
func (d *decoder) fast(data []byte) bool {
	switch string(data) {
	case `{"serverContent":{"turnComplete":true}}`:
		d.content()
		d.sc.TurnComplete = true
		return true
	case `{"serverContent":{"generationComplete":true}}`:
		d.content()
		d.sc.GenerationComplete = true
		return true
	case `{"serverContent":{"interrupted":true}}`:
		d.content()
		d.sc.Interrupted = true
		return true
	case `{"setupComplete":{}}`:
		d.m = serverMessage{SetupComplete: &struct{}{}}
		return true
	}
	if rest, ok := bytes.CutPrefix(data, []byte(fastAudioHead)); ok {
		mt, rest, ok := plainString(rest)
		if !ok || !bytes.HasPrefix(rest, []byte(fastAudioMid)) {
			return false
		}
		b64, rest, ok := plainString(rest[len(fastAudioMid):])
		if !ok || string(rest) != fastAudioTail {
			return false
		}
		n := base64.StdEncoding.DecodedLen(len(b64))
		if d.raw == nil || cap(d.raw) < n || cap(d.raw) > 4*n+(64<<10) {
			d.raw = make([]byte, n) // never nil, as encoding/json's
		}
		n, err := base64.StdEncoding.Decode(d.raw[:n], b64)
		if err != nil {
			return false // encoding/json says why
		}
		d.b = blob{MIMEType: string(mt), Data: d.raw[:n]}
		d.p = part{InlineData: &d.b}
		d.parts[0] = &d.p
		d.ct = content{Parts: d.parts[:]}
		d.content()
		d.sc.ModelTurn = &d.ct
		return true
	}
	for _, head := range []string{fastOutputHead, fastInputHead} {
		rest, ok := bytes.CutPrefix(data, []byte(head))
		if !ok {
			continue
		}
		text, rest, ok := plainString(rest)
		if !ok || string(rest) != fastTextTail {
			return false
		}
		d.tr = transcription{Text: string(text)}
		d.content()
		if head == fastOutputHead {
			d.sc.OutputTranscription = &d.tr
		} else {
			d.sc.InputTranscription = &d.tr
		}
		return true
	}
	return false
}

// content makes d.m a serverContent message with nothing set.
func (d *decoder) content() {
	d.sc = serverContent{}
	d.m = serverMessage{ServerContent: &d.sc}
}

// plainString reads a JSON string's contents from b, which starts just
// after its opening quote, up to its closing quote, and returns them and
// what follows the closing quote (which it leaves on: rest starts with
// '"'). It reports false for a string that needs decoding or that
// encoding/json would change or refuse: one with an escape, a control
// character or invalid UTF-8, or no closing quote.
func plainString(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '"')
	if i < 0 {
		return nil, nil, false
	}
	s = b[:i]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return nil, nil, false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(s) {
		return nil, nil, false
	}
	return s, b[i:], true
}
