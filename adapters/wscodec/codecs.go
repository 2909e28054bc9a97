package wscodec

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// RawPCM returns the Codec of the barest audio WebSocket: every binary
// frame, both ways, is PCM16 little-endian mono audio at rate, with no
// header. User audio is resampled from the session rate to rate (each
// SendAudio is one frame) and agent audio back to the session rate.
//
// The rate must be one of wire.StandardRates (8 kHz to 48 kHz); Open
// refuses another with a *wire.FormatError.
//
// The protocol has nothing but audio, so the agent must detect the end of
// the user's speech itself (Capabilities.NativeVAD) and EndUtterance sends
// nothing; there is no text input, DTMF, native interrupt or turn end. Text
// frames from the agent (servers often send status messages) become
// AgentLog events. A binary frame with an odd number of bytes is a frame
// error.
func RawPCM(rate int) Codec { return rawPCMCodec{rate: rate} }

type rawPCMCodec struct{ rate int }

func (r rawPCMCodec) Open(s voicetest.Session) (CodecSession, []Frame, error) {
	if err := wire.CheckRate("", "RawPCM rate", r.rate, wire.StandardRates(), ""); err != nil {
		return nil, nil, err
	}
	rs := &rawPCMSession{wire: r.rate, rate: s.Rate}
	if r.rate != s.Rate {
		var err error
		if rs.up, err = pcm.NewResampler(s.Rate, r.rate); err != nil {
			return nil, nil, err
		}
		if rs.down, err = pcm.NewResampler(r.rate, s.Rate); err != nil {
			return nil, nil, err
		}
	}
	return rs, nil, nil
}

type rawPCMSession struct {
	wire, rate int
	up, down   *pcm.Resampler // nil when the rates match
	upBuf      []int16
	downBuf    []int16
}

func (r *rawPCMSession) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: r.wire}
	return voicetest.Capabilities{Adapter: "websocket", Audio: true, InputFormat: f, OutputFormat: f, NativeVAD: true}
}

func (r *rawPCMSession) EncodeAudio(dst []Frame, c pcm.Chunk) ([]Frame, error) {
	samples := c.Samples
	if r.up != nil {
		r.upBuf = r.up.Process(r.upBuf[:0], samples)
		samples = r.upBuf
	}
	if len(samples) == 0 {
		return dst, nil
	}
	return append(dst, Frame{Binary: true, Data: wire.AppendPCM16(nil, samples)}), nil
}

func (r *rawPCMSession) EncodeEndUtterance(dst []Frame) ([]Frame, error) {
	if r.up == nil {
		return dst, nil
	}
	// Complete the resampler's window so the end of the speech is sent.
	r.upBuf = r.up.Flush(r.upBuf[:0])
	if len(r.upBuf) == 0 {
		return dst, nil
	}
	return append(dst, Frame{Binary: true, Data: wire.AppendPCM16(nil, r.upBuf)}), nil
}

var errRawPCMOnlyAudio = errors.New("the raw PCM protocol carries only audio")

func (r *rawPCMSession) EncodeText(dst []Frame, _ string) ([]Frame, error) {
	return dst, errRawPCMOnlyAudio
}

func (r *rawPCMSession) EncodeDTMF(dst []Frame, _ string) ([]Frame, error) {
	return dst, errRawPCMOnlyAudio
}

func (r *rawPCMSession) EncodeInterrupt(dst []Frame) ([]Frame, error) {
	return dst, errRawPCMOnlyAudio
}

func (r *rawPCMSession) Decode(dst []voicetest.AgentEvent, f Frame) ([]voicetest.AgentEvent, error) {
	if !f.Binary {
		return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: string(f.Data)}), nil
	}
	var err error
	r.downBuf, err = pcm.DecodePCM16(r.downBuf[:0], f.Data)
	if err != nil {
		return dst, fmt.Errorf("raw PCM16 frame: %w", err)
	}
	out := r.downBuf
	if r.down != nil {
		out = r.down.Process(nil, out)
	} else {
		out = append([]int16(nil), out...)
	}
	if len(out) == 0 {
		return dst, nil
	}
	return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: r.rate, Samples: out}}), nil
}

// JSONOptions configure the JSONBase64 codec. The booleans declare what the
// agent does, for Capabilities; the codec itself understands every message
// either way.
type JSONOptions struct {
	// Rate is the sample rate of user audio on the wire, and of agent audio
	// messages that state no sample_rate. Zero means 24000; otherwise it
	// must be one of wire.StandardRates.
	Rate int
	// AgentRates are the sample rates the agent may state in an audio
	// message's sample_rate. Empty means wire.StandardRates (8 kHz to
	// 48 kHz). A message at another rate is a frame error naming the rate
	// and this set: an agent that claims a tiny rate would otherwise have
	// a few KB of audio resampled into tens of MiB.
	AgentRates []int
	// NativeVAD declares that the agent detects the end of user speech
	// itself; EndUtterance then sends nothing.
	NativeVAD bool
	// TurnEnd declares that the agent sends turn_end after each turn.
	TurnEnd bool
	// Transcripts declares that the agent sends transcript messages for
	// its own speech.
	Transcripts bool
	// ToolEvents declares that the agent sends tool_call and tool_result.
	ToolEvents bool
	// UnknownAsData turns messages of an unknown type into AgentData
	// events (named by their type, with the whole message as data)
	// instead of frame errors.
	UnknownAsData bool
}

// JSONBase64 returns the Codec of a JSON WebSocket protocol with base64
// audio: every frame is a text frame holding one JSON object whose "type"
// says what it is. Audio is PCM16 little-endian mono, base64-encoded
// (standard alphabet, with padding).
//
// voicetest sends:
//
//	{"type":"audio","audio":"<base64 PCM16>","sample_rate":24000}
//	{"type":"audio_end"}                      (EndUtterance; not sent with NativeVAD)
//	{"type":"text","text":"…"}                (SendText)
//	{"type":"dtmf","digits":"12#"}            (SendDTMF)
//	{"type":"interrupt"}                      (Interrupt)
//
// and understands from the agent:
//
//	{"type":"audio","audio":"<base64 PCM16>","sample_rate":16000}  → AgentAudio (sample_rate defaults to Rate)
//	{"type":"transcript","text":"…","final":true}                 → AgentTranscript
//	{"type":"user_transcript","text":"…","final":true}            → UserTranscript
//	{"type":"tool_call","id":"…","name":"…","arguments":{…}}      → AgentToolCall
//	{"type":"tool_result","id":"…","name":"…","result":…,"is_error":false} → AgentToolResult
//	{"type":"data","name":"…","data":…}                           → AgentData
//	{"type":"turn_end"}                                           → AgentTurnEnd
//	{"type":"interrupted"}                                        → AgentInterrupted
//	{"type":"hangup","reason":"…"}                                → AgentHangUp
//	{"type":"log","text":"…"}                                     → AgentLog
//
// Anything else (a binary frame, invalid JSON, a missing or unknown type,
// bad base64, an odd number of PCM16 bytes, a missing required field) is a
// frame error naming the problem, unless UnknownAsData is set for unknown
// types.
func JSONBase64(opts JSONOptions) Codec { return jsonCodec{opts: opts} }

type jsonCodec struct{ opts JSONOptions }

func (j jsonCodec) Open(s voicetest.Session) (CodecSession, []Frame, error) {
	o := j.opts
	if o.Rate == 0 {
		o.Rate = pcm.Rate24k
	}
	if err := wire.CheckRate("", "JSONOptions.Rate", o.Rate, wire.StandardRates(), ""); err != nil {
		return nil, nil, err
	}
	if len(o.AgentRates) == 0 {
		o.AgentRates = wire.StandardRates()
	} else {
		o.AgentRates = slices.Clone(o.AgentRates)
		for _, r := range o.AgentRates {
			if err := wire.CheckRate("", "JSONOptions.AgentRates rate", r, wire.StandardRates(), ""); err != nil {
				return nil, nil, err
			}
		}
	}
	js := &jsonSession{opts: o, rate: s.Rate}
	if o.Rate != s.Rate {
		var err error
		if js.up, err = pcm.NewResampler(s.Rate, o.Rate); err != nil {
			return nil, nil, err
		}
	}
	return js, nil, nil
}

type jsonSession struct {
	opts JSONOptions
	rate int

	up    *pcm.Resampler // encoder side
	upBuf []int16

	down     *pcm.Resampler // decoder side; from the last sample_rate seen
	downRate int
	samples  []int16
}

func (j *jsonSession) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{
		Adapter:              "websocket",
		Audio:                true,
		Text:                 true,
		InputFormat:          voicetest.AudioFormat{Encoding: "pcm16", Rate: j.opts.Rate},
		OutputFormat:         voicetest.AudioFormat{Encoding: "pcm16", Rate: j.opts.Rate},
		StreamingTranscripts: j.opts.Transcripts,
		NativeVAD:            j.opts.NativeVAD,
		DTMF:                 true,
		NativeInterrupt:      true,
		TurnEnd:              j.opts.TurnEnd,
		ToolEvents:           j.opts.ToolEvents,
	}
}

// jsonOut is a message voicetest sends.
type jsonOut struct {
	Type       string `json:"type"`
	Audio      string `json:"audio,omitempty"`
	SampleRate int    `json:"sample_rate,omitempty"`
	Text       string `json:"text,omitempty"`
	Digits     string `json:"digits,omitempty"`
}

func jsonFrame(dst []Frame, m jsonOut) ([]Frame, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return dst, err
	}
	return append(dst, Frame{Data: b}), nil
}

func (j *jsonSession) audioFrame(dst []Frame, samples []int16) ([]Frame, error) {
	if len(samples) == 0 {
		return dst, nil
	}
	raw := wire.AppendPCM16(nil, samples)
	return jsonFrame(dst, jsonOut{Type: "audio", Audio: base64.StdEncoding.EncodeToString(raw), SampleRate: j.opts.Rate})
}

func (j *jsonSession) EncodeAudio(dst []Frame, c pcm.Chunk) ([]Frame, error) {
	if j.up == nil {
		return j.audioFrame(dst, c.Samples)
	}
	j.upBuf = j.up.Process(j.upBuf[:0], c.Samples)
	return j.audioFrame(dst, j.upBuf)
}

func (j *jsonSession) EncodeEndUtterance(dst []Frame) ([]Frame, error) {
	var err error
	if j.up != nil {
		j.upBuf = j.up.Flush(j.upBuf[:0])
		if dst, err = j.audioFrame(dst, j.upBuf); err != nil {
			return dst, err
		}
	}
	if j.opts.NativeVAD {
		return dst, nil
	}
	return jsonFrame(dst, jsonOut{Type: "audio_end"})
}

func (j *jsonSession) EncodeText(dst []Frame, text string) ([]Frame, error) {
	return jsonFrame(dst, jsonOut{Type: "text", Text: text})
}

func (j *jsonSession) EncodeDTMF(dst []Frame, digits string) ([]Frame, error) {
	return jsonFrame(dst, jsonOut{Type: "dtmf", Digits: digits})
}

func (j *jsonSession) EncodeInterrupt(dst []Frame) ([]Frame, error) {
	return jsonFrame(dst, jsonOut{Type: "interrupt"})
}

// jsonIn is a message the agent sends.
type jsonIn struct {
	Type       *string         `json:"type"`
	Audio      *string         `json:"audio"`
	SampleRate *int            `json:"sample_rate"`
	Text       *string         `json:"text"`
	Final      bool            `json:"final"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"is_error"`
	Data       json.RawMessage `json:"data"`
	Reason     string          `json:"reason"`
}

func (j *jsonSession) Decode(dst []voicetest.AgentEvent, f Frame) ([]voicetest.AgentEvent, error) {
	if f.Binary {
		return dst, fmt.Errorf("binary frame of %d bytes; the JSON protocol sends text frames", len(f.Data))
	}
	var m jsonIn
	if err := json.Unmarshal(f.Data, &m); err != nil {
		return dst, fmt.Errorf("not a JSON message: %w", err)
	}
	if m.Type == nil {
		return dst, errors.New(`no "type" field`)
	}
	text := func() (string, error) {
		if m.Text == nil {
			return "", fmt.Errorf(`%s message without "text"`, *m.Type)
		}
		return *m.Text, nil
	}
	switch typ := *m.Type; typ {
	case "audio":
		return j.decodeAudio(dst, m)
	case "transcript", "user_transcript", "log":
		t, err := text()
		if err != nil {
			return dst, err
		}
		kind := map[string]voicetest.EventKind{"transcript": voicetest.AgentTranscript, "user_transcript": voicetest.UserTranscript, "log": voicetest.AgentLog}[typ]
		return append(dst, voicetest.AgentEvent{Kind: kind, Text: t, Final: m.Final && kind != voicetest.AgentLog}), nil
	case "tool_call", "tool_result":
		if m.Name == "" {
			return dst, fmt.Errorf(`%s message without "name"`, typ)
		}
		tc := &voicetest.ToolCall{ID: m.ID, Name: m.Name, Arguments: m.Arguments}
		kind := voicetest.AgentToolCall
		if typ == "tool_result" {
			tc.Arguments, tc.Result, tc.IsError, kind = nil, m.Result, m.IsError, voicetest.AgentToolResult
		}
		return append(dst, voicetest.AgentEvent{Kind: kind, Tool: tc}), nil
	case "data":
		return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentData, Text: m.Name, Data: m.Data}), nil
	case "turn_end":
		dst = j.flushDown(dst)
		return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}), nil
	case "interrupted":
		if j.down != nil {
			j.down.Reset()
		}
		return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentInterrupted}), nil
	case "hangup":
		dst = j.flushDown(dst)
		return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: m.Reason}), nil
	default:
		if j.opts.UnknownAsData {
			return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentData, Text: typ, Data: append(json.RawMessage(nil), f.Data...)}), nil
		}
		return dst, fmt.Errorf("unknown message type %q (set JSONOptions.UnknownAsData to receive such messages as AgentData)", typ)
	}
}

func (j *jsonSession) decodeAudio(dst []voicetest.AgentEvent, m jsonIn) ([]voicetest.AgentEvent, error) {
	if m.Audio == nil {
		return dst, errors.New(`audio message without "audio"`)
	}
	rate := j.opts.Rate
	if m.SampleRate != nil {
		rate = *m.SampleRate
		if err := wire.CheckRate("", "audio message with sample_rate", rate, j.opts.AgentRates, "set JSONOptions.AgentRates to the rates your agent sends"); err != nil {
			return dst, err
		}
	}
	raw, err := base64.StdEncoding.DecodeString(*m.Audio)
	if err != nil {
		return dst, fmt.Errorf("audio is not base64: %w", err)
	}
	if j.samples, err = pcm.DecodePCM16(j.samples[:0], raw); err != nil {
		return dst, fmt.Errorf("audio: %w", err)
	}
	if rate == j.rate {
		if len(j.samples) == 0 {
			return dst, nil
		}
		return append(dst, wire.AudioEvent(j.rate, j.samples)), nil
	}
	if j.down == nil || j.downRate != rate {
		dst = j.flushDown(dst)
		if j.down, err = pcm.NewResampler(rate, j.rate); err != nil {
			return dst, fmt.Errorf("audio at %d Hz: %w", rate, err)
		}
		j.downRate = rate
	}
	out := j.down.Process(nil, j.samples)
	if len(out) == 0 {
		return dst, nil
	}
	return append(dst, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: j.rate, Samples: out}}), nil
}

// flushDown appends the audio the decoder's resampler still holds.
func (j *jsonSession) flushDown(dst []voicetest.AgentEvent) []voicetest.AgentEvent {
	if j.down == nil {
		return dst
	}
	if tail := j.down.Flush(nil); len(tail) > 0 {
		dst = append(dst, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: j.rate, Samples: tail}})
	}
	return dst
}
