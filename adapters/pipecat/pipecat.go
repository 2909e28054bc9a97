// Package pipecat reaches a Pipecat bot (github.com/pipecat-ai/pipecat)
// over its WebSocket transport (FastAPIWebsocketTransport,
// WebsocketServerTransport), speaking the serializer the bot chose:
//
//   - Protobuf, Pipecat's ProtobufFrameSerializer: binary frames holding a
//     pipecat.Frame (the generated types are in pipecatpb). voicetest sends
//     the user's speech as AudioRawFrame (PCM16 mono at Agent.InputRate,
//     16 kHz by default: Pipecat's Silero VAD takes 8 or 16 kHz), RTVI
//     client messages as MessageFrame and a barge-in as InterruptionFrame;
//     it takes the bot's AudioRawFrame (at whatever rate each frame
//     states, resampled to Session.Rate), InterruptionFrame, MessageFrame
//     (RTVI or other transport messages), TextFrame and TranscriptionFrame.
//   - Twilio, Pipecat's TwilioFrameSerializer: Twilio Media Streams JSON.
//     voicetest plays Twilio: it sends "connected" and "start" (with
//     stream, call and account SIDs, as Pipecat's runner expects to read
//     them first), the user's speech as 20 ms "media" frames of µ-law
//     8 kHz, "dtmf" events, an "utterance_end" mark after each utterance
//     and "stop" at the end; it takes the bot's "media", its "clear" and
//     its transport messages (bare JSON text; RTVI ones when the bot's
//     serializer has ignore_rtvi_messages off).
//
// RTVI (Pipecat's RTVI processor and observer, protocol 2.1.0: messages
// {"label":"rtvi-ai","type","id","data"}): with Agent.RTVI set the
// adapter sends client-ready when it connects (Protobuf), and declares the
// capabilities RTVI gives. What it does with the bot's RTVI messages:
//
//   - bot-tts-text: AgentTranscript deltas (the text the bot's TTS speaks,
//     ahead of the audio), and the turn's whole text with Final set at
//     bot-stopped-speaking or at an interruption.
//   - user-transcription: UserTranscript (Final as the message says).
//   - bot-started-speaking, bot-stopped-speaking: AgentData named after the
//     message (the bot's speaking state); with RTVI, bot-stopped-speaking is
//     also AgentTurnEnd (Capabilities.TurnEnd). Pipecat sends it when its
//     output has been quiet for a moment, so a bot that pauses long in
//     the middle of a reply ends its turn there.
//   - bot-interrupted: AgentInterrupted (once per barge-in, with the
//     InterruptionFrame or clear that comes with it).
//   - llm-function-call-in-progress and llm-function-call-stopped: the
//     bot's own function calls and their results, as AgentToolCall and
//     AgentToolResult. The deprecated llm-function-call asks the client
//     to run a function: AgentToolCall, answered with
//     llm-function-call-result by OnToolCall when set (Protobuf only: the
//     Twilio serializer reads nothing but media and dtmf).
//   - server-message: AgentData named "server-message".
//   - error, error-response: an *Error from Recv; the Conn stays usable.
//   - the rest (bot-ready, bot-llm-*, bot-output, metrics, user speaking
//     state, …) is consumed silently; an unknown type is logged once.
//
// A transport message that is not RTVI is AgentData named "message". The
// bot closing the WebSocket normally (Pipecat's EndFrame) is AgentHangUp.
//
// End of the user's turn: Pipecat bots detect it with their own VAD
// (Capabilities.NativeVAD), which needs to hear the silence after speech,
// as a phone line or a microphone carries it. EndUtterance therefore
// sends EndSilence of silence (default 1 s) after the last of the speech,
// as fast as the socket takes it; under the Twilio serializer it then
// sends the "utterance_end" mark (Pipecat's Twilio serializer ignores
// marks; a bot with its own serializer may take it as the end of the
// turn).
//
// Barge-in: under Protobuf, Interrupt sends an InterruptionFrame, which
// the serializer turns into an InterruptionFrame pushed into the
// pipeline (Capabilities.NativeInterrupt); under Twilio there is no
// caller-side cancel, and barge-in is overlapping audio that the bot's VAD
// hears. DTMF: "dtmf" events under Twilio, the RTVI dtmf message
// (buttons 0-9, * and #) under Protobuf with RTVI.
package pipecat

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/rtvi"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Serializer is the frame serializer the bot's transport uses.
type Serializer int

// The serializers.
const (
	// Protobuf is Pipecat's ProtobufFrameSerializer.
	Protobuf Serializer = iota
	// Twilio is Pipecat's TwilioFrameSerializer.
	Twilio
)

// String returns "protobuf" or "twilio".
func (s Serializer) String() string {
	switch s {
	case Protobuf:
		return "protobuf"
	case Twilio:
		return "twilio"
	}
	return "Serializer(" + strconv.Itoa(int(s)) + ")"
}

// Defaults of Agent.
const (
	// DefaultInputRate is the rate of the audio sent under Protobuf.
	DefaultInputRate = pcm.Rate16k
	// DefaultOutputRate is the rate Capabilities reports for the bot's
	// audio under Protobuf (each frame states its own).
	DefaultOutputRate = pcm.Rate24k
	// DefaultEndSilence is the silence EndUtterance sends.
	DefaultEndSilence = time.Second
)

// adapterName names the adapter in errors and capabilities.
const adapterName = "pipecat"

// Agent is a Pipecat bot reached over its WebSocket transport. Set the
// fields before the first Connect; an Agent may then serve parallel
// scenarios.
type Agent struct {
	// URL is the bot's WebSocket, e.g. "ws://127.0.0.1:7860/ws".
	URL string
	// Serializer is the serializer the bot's transport uses.
	Serializer Serializer
	// RTVI reports that the bot runs Pipecat's RTVI processor and
	// observer, so that it sends transcripts, speaking state and function
	// calls (under Twilio, only if its serializer passes RTVI messages).
	RTVI bool
	// InputRate is the rate of the audio sent under Protobuf (default
	// DefaultInputRate). OutputRate is the rate Capabilities reports for
	// the bot's audio under Protobuf (default DefaultOutputRate).
	InputRate, OutputRate int
	// EndSilence is the silence EndUtterance sends after the user's
	// speech (default DefaultEndSilence; negative sends none).
	EndSilence time.Duration
	// StreamSid, CallSid and AccountSid are those of the Twilio start
	// message ("MZ", "CA", "AC" and 32 hex digits); empty ones are drawn
	// at random. CustomParameters are sent in start.customParameters.
	StreamSid, CallSid, AccountSid string
	CustomParameters               map[string]string
	// OnToolCall, when set, answers the functions an RTVI bot asks the
	// client to run (llm-function-call), under Protobuf.
	OnToolCall wire.ToolHandler
	// WSOptions are the transport settings (headers, keepalive, limits).
	wire.WSOptions
}

// New returns an agent that reaches the Pipecat bot at url, which uses
// serializer.
func New(url string, serializer Serializer) *Agent {
	return &Agent{URL: url, Serializer: serializer}
}

// Error is an error an RTVI bot reported (error or error-response). Recv
// returns it; the conversation can go on unless Fatal.
type Error = rtvi.Error

// Connect opens the WebSocket; under Twilio it sends "connected" and
// "start", under Protobuf with RTVI the client-ready message.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	c := &conn{ser: a.Serializer, rtvi: a.RTVI, rate: s.Rate, onTool: a.OnToolCall, down: wire.Downstream{Rate: s.Rate}}
	switch a.Serializer {
	case Protobuf:
		c.wireRate = a.InputRate
		if c.wireRate == 0 {
			c.wireRate = DefaultInputRate
		}
		if err := wire.CheckRate(adapterName, "Agent.InputRate", c.wireRate, wire.StandardRates(), ""); err != nil {
			return nil, err
		}
		c.outRate = a.OutputRate
		if c.outRate == 0 {
			c.outRate = DefaultOutputRate
		}
		if err := wire.CheckRate(adapterName, "Agent.OutputRate", c.outRate, wire.StandardRates(), ""); err != nil {
			return nil, err
		}
	case Twilio:
		c.wireRate, c.outRate = pcm.Rate8k, pcm.Rate8k
		var err error
		if c.streamSid, err = sid("StreamSid", a.StreamSid, "MZ"); err != nil {
			return nil, err
		}
		if c.callSid, err = sid("CallSid", a.CallSid, "CA"); err != nil {
			return nil, err
		}
		if c.accountSid, err = sid("AccountSid", a.AccountSid, "AC"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("adapters: %s: unknown serializer %v; use pipecat.Protobuf or pipecat.Twilio", adapterName, a.Serializer)
	}
	switch {
	case a.EndSilence < 0:
	case a.EndSilence == 0:
		c.endSilence = pcm.SamplesFor(c.wireRate, DefaultEndSilence)
	default:
		c.endSilence = pcm.SamplesFor(c.wireRate, a.EndSilence)
	}
	var err error
	if s.Rate != c.wireRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, c.wireRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	ws, err := wire.Dial(ctx, adapterName, a.URL, a.WSOptions, s, nil)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	c.rtv = rtvi.Decoder{Adapter: adapterName, Down: &c.down, Logf: ws.Logf}
	if c.onTool != nil {
		c.rtv.Answer = func(call voicetest.ToolCall) { ws.Go(func() { c.answerTool(call) }) }
	}
	fail := func(err error) (voicetest.Conn, error) {
		ws.Close(nil)
		return nil, fmt.Errorf("adapters: %s: opening the call: %w", adapterName, err)
	}
	if a.Serializer == Twilio {
		params := a.CustomParameters
		if params == nil {
			params = map[string]string{}
		}
		connected := []byte(`{"event":"connected","protocol":"Call","version":"1.0.0"}`)
		start, _ := json.Marshal(map[string]any{
			"event": "start", "sequenceNumber": "1", "streamSid": c.streamSid,
			"start": map[string]any{
				"streamSid": c.streamSid, "accountSid": c.accountSid, "callSid": c.callSid,
				"tracks": []string{"inbound"}, "customParameters": params,
				"mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
			},
		})
		c.seq = 1
		for _, m := range [][]byte{connected, start} {
			if err := ws.Write(ctx, websocket.MessageText, m); err != nil {
				return fail(err)
			}
		}
	}
	ws.Start(c.decode)
	if a.Serializer == Protobuf && a.RTVI {
		if err := c.sendRTVI(ctx, "client-ready", rtvi.ClientReady()); err != nil {
			return fail(err)
		}
	}
	ws.Logf("%s: call open at %s (%v serializer, RTVI %v)", adapterName, wire.RedactURL(a.URL), a.Serializer, a.RTVI)
	return c, nil
}

// sid returns val, checked, or a random SID with prefix.
func sid(field, val, prefix string) (string, error) {
	if val == "" {
		var b [16]byte
		rand.Read(b[:])
		return prefix + hex.EncodeToString(b[:]), nil
	}
	if len(val) != 34 || val[:2] != prefix {
		return "", fmt.Errorf("adapters: %s: %s %q is not a Twilio SID; use %q and 32 hex digits, or leave it empty", adapterName, field, val, prefix)
	}
	if _, err := hex.DecodeString(val[2:]); err != nil {
		return "", fmt.Errorf("adapters: %s: %s %q is not a Twilio SID; use %q and 32 hex digits, or leave it empty", adapterName, field, val, prefix)
	}
	return val, nil
}

// conn is one call.
type conn struct {
	ws         *wire.Conn
	ser        Serializer
	rtvi       bool
	rate       int // the session's
	wireRate   int // of the audio sent
	outRate    int // reported for the bot's audio
	endSilence int // samples at wireRate
	onTool     wire.ToolHandler
	streamSid  string
	callSid    string
	accountSid string

	// Send side, under sendMu.
	sendMu  sync.Mutex
	up      wire.Upstream
	pending []int16 // audio at wireRate not yet sent (less than a frame)
	seq     int     // Twilio sequenceNumber
	chunk   int     // Twilio media chunk
	spoke   bool    // audio was sent since the last EndUtterance
	msgID   int     // RTVI message ids
	buf     []byte  // the last message sent
	pcmBuf  []byte  // the last frame's audio in µ-law (Twilio)
	// zeros is a frame of silence at the wire rate, and zeroFrame its
	// AudioRawFrame (Protobuf), made on first use.
	zeros     []int16
	zeroFrame []byte

	// Reader goroutine only.
	down wire.Downstream
	rtv  rtvi.Decoder // RTVI messages and the bot's turn
}

// Capabilities reports what the Pipecat adapter supports.
func (c *conn) Capabilities() voicetest.Capabilities {
	caps := voicetest.Capabilities{
		Adapter: adapterName, Audio: true, NativeVAD: true,
		StreamingTranscripts: c.rtvi, TranscriptAhead: c.rtvi, TurnEnd: c.rtvi, ToolEvents: c.rtvi,
	}
	if c.ser == Twilio {
		caps.InputFormat = voicetest.AudioFormat{Encoding: "mulaw", Rate: pcm.Rate8k}
		caps.OutputFormat = caps.InputFormat
		caps.DTMF = true
		return caps
	}
	caps.InputFormat = voicetest.AudioFormat{Encoding: "pcm16", Rate: c.wireRate}
	caps.OutputFormat = voicetest.AudioFormat{Encoding: "pcm16", Rate: c.outRate}
	caps.Text, caps.DTMF, caps.NativeInterrupt = c.rtvi, c.rtvi, true
	return caps
}

// frameSamples is the size of one 20 ms frame at the wire rate.
func (c *conn) frameSamples() int { return c.wireRate / 50 }

// SendAudio sends user speech in 20 ms frames.
func (c *conn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = append(c.pending, c.up.Process(ch.Samples)...)
	c.spoke = true
	return c.sendFramesLocked(ctx, false)
}

// sendFramesLocked sends every whole frame pending; with flush, also the
// partial last one padded with silence. Call with sendMu held.
func (c *conn) sendFramesLocked(ctx context.Context, flush bool) error {
	n, size := 0, c.frameSamples()
	defer func() { c.pending = c.pending[:copy(c.pending, c.pending[n:])] }()
	for len(c.pending)-n >= size {
		if err := c.sendFrameLocked(ctx, c.pending[n:n+size]); err != nil {
			return err
		}
		n += size
	}
	if flush && len(c.pending) > n {
		c.pending = append(c.pending, make([]int16, size-(len(c.pending)-n))...)
		if err := c.sendFrameLocked(ctx, c.pending[n:]); err != nil {
			return err
		}
		n = len(c.pending)
	}
	return nil
}

// sendFrameLocked sends one frame of audio at the wire rate. Call with
// sendMu held.
func (c *conn) sendFrameLocked(ctx context.Context, samples []int16) error {
	if c.ser == Protobuf {
		c.buf = appendAudioFrame(c.buf[:0], samples, c.wireRate)
		return c.ws.Write(ctx, websocket.MessageBinary, c.buf)
	}
	c.seq++
	c.chunk++
	b := append(c.buf[:0], `{"event":"media","sequenceNumber":"`...)
	b = strconv.AppendInt(b, int64(c.seq), 10)
	b = append(b, `","streamSid":"`...)
	b = append(b, c.streamSid...)
	b = append(b, `","media":{"track":"inbound","chunk":"`...)
	b = strconv.AppendInt(b, int64(c.chunk), 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, int64(c.chunk-1)*20, 10)
	b = append(b, `","payload":"`...)
	c.pcmBuf = pcm.EncodeMulaw(c.pcmBuf[:0], samples)
	b = wire.AppendBase64(b, c.pcmBuf)
	b = append(b, `"}}`...)
	c.buf = b
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// sendSilenceLocked sends n frames of silence at the wire rate: under
// Protobuf the same encoded AudioRawFrame each time, built once. Call with
// sendMu held.
func (c *conn) sendSilenceLocked(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	if c.zeros == nil {
		c.zeros = make([]int16, c.frameSamples())
	}
	if c.ser != Protobuf {
		for range n {
			if err := c.sendFrameLocked(ctx, c.zeros); err != nil {
				return err
			}
		}
		return nil
	}
	if c.zeroFrame == nil {
		c.zeroFrame = appendAudioFrame(nil, c.zeros, c.wireRate)
	}
	for range n {
		if err := c.ws.Write(ctx, websocket.MessageBinary, c.zeroFrame); err != nil {
			return err
		}
	}
	return nil
}

// appendAudioFrame appends a Frame holding an AudioRawFrame of samples
// (PCM16, mono, at rate) to b: the bytes proto.Marshal gives for
// &pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio:
// &pipecatpb.AudioRawFrame{Audio: pcm16, SampleRate: rate, NumChannels:
// 1}}}, written directly (fields in number order, zero ones left out), as
// the per-frame reflection of proto.Marshal costs more than the rest of
// the frame's encoding.
func appendAudioFrame(b []byte, samples []int16, rate int) []byte {
	audio := 2 * len(samples)
	inner := protowire.SizeTag(5) + protowire.SizeVarint(1) // num_channels
	if audio > 0 {
		inner += protowire.SizeTag(3) + protowire.SizeBytes(audio)
	}
	if rate != 0 {
		inner += protowire.SizeTag(4) + protowire.SizeVarint(uint64(rate))
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType) // Frame.audio
	b = protowire.AppendVarint(b, uint64(inner))
	if audio > 0 {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(audio))
		b = wire.AppendPCM16(b, samples)
	}
	if rate != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(rate))
	}
	b = protowire.AppendTag(b, 5, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

// sendJSONLocked sends a Twilio message built for the next sequence
// number. Call with sendMu held.
func (c *conn) sendJSONLocked(ctx context.Context, build func(seq string) map[string]any) error {
	c.seq++
	b, err := json.Marshal(build(strconv.Itoa(c.seq)))
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// EndUtterance sends the rest of the speech, EndSilence of silence and
// (Twilio) the utterance_end mark.
func (c *conn) EndUtterance(ctx context.Context) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = append(c.pending, c.up.Flush()...)
	if !c.spoke && len(c.pending) == 0 {
		return nil
	}
	c.spoke = false
	// The silence tops up the last partial frame of speech, and the rest
	// of it is whole frames of zeros (the last one padded, as any last
	// frame is), sent without being built in pending.
	silence, size := c.endSilence, c.frameSamples()
	if p := len(c.pending) % size; p > 0 && silence > 0 {
		k := min(size-p, silence)
		c.pending = append(c.pending, make([]int16, k)...)
		silence -= k
	}
	if err := c.sendFramesLocked(ctx, true); err != nil {
		return err
	}
	if err := c.sendSilenceLocked(ctx, (silence+size-1)/size); err != nil {
		return err
	}
	if c.ser != Twilio {
		return nil
	}
	if err := c.sendJSONLocked(ctx, func(seq string) map[string]any {
		return map[string]any{"event": "mark", "sequenceNumber": seq, "streamSid": c.streamSid, "mark": map[string]string{"name": "utterance_end"}}
	}); err != nil {
		return err
	}
	c.ws.Stats().MarkSent()
	return nil
}

// sendRTVI sends an RTVI client message in a MessageFrame.
func (c *conn) sendRTVI(ctx context.Context, typ string, data any) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.sendRTVILocked(ctx, typ, data)
}

// sendRTVILocked is sendRTVI with sendMu held.
func (c *conn) sendRTVILocked(ctx context.Context, typ string, data any) error {
	c.msgID++
	msg, err := rtvi.ClientMessage(c.msgID, typ, data)
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding %s: %w", adapterName, typ, err)
	}
	b, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: string(msg)}}})
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding %s: %w", adapterName, typ, err)
	}
	return c.ws.Write(ctx, websocket.MessageBinary, b)
}

// SendText sends an RTVI send-text message (Protobuf with RTVI).
func (c *conn) SendText(ctx context.Context, text string) error {
	if c.ser != Protobuf || !c.rtvi {
		return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "text input",
			Alternative: "text reaches a Pipecat bot only as RTVI send-text over the protobuf serializer (set Agent.RTVI for a bot that runs RTVI); use spoken steps (voicetest.UserSays)"}
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendText with empty text", adapterName)
	}
	return c.sendRTVI(ctx, "send-text", rtvi.SendText(text))
}

// SendDTMF sends key presses: one dtmf event per key (Twilio), or the
// RTVI dtmf message (Protobuf with RTVI).
func (c *conn) SendDTMF(ctx context.Context, digits string) error {
	if err := wire.CheckDTMF(digits); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendFramesLocked(ctx, true); err != nil {
		return err
	}
	if c.ser == Twilio {
		for _, d := range digits {
			if err := c.sendJSONLocked(ctx, func(seq string) map[string]any {
				return map[string]any{"event": "dtmf", "streamSid": c.streamSid, "sequenceNumber": seq, "dtmf": map[string]string{"track": "inbound_track", "digit": string(d)}}
			}); err != nil {
				return err
			}
		}
		return nil
	}
	if !c.rtvi {
		return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "DTMF events",
			Alternative: "key presses reach a Pipecat bot over the protobuf serializer only as the RTVI dtmf message (set Agent.RTVI for a bot that runs RTVI); voicetest.DTMF sends in-band tones otherwise"}
	}
	data, err := rtvi.DTMF(digits)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	return c.sendRTVILocked(ctx, "dtmf", data)
}

// Interrupt sends an InterruptionFrame (Protobuf).
func (c *conn) Interrupt(ctx context.Context) error {
	if c.ser != Protobuf {
		return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
			Alternative: "the Twilio serializer reads only media and dtmf from the caller; barge in by sending user audio while the bot speaks (its VAD hears it and it answers with clear)"}
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	b, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Interruption{Interruption: &pipecatpb.InterruptionFrame{}}})
	if err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		return err
	}
	c.ws.Stats().Cancel()
	return nil
}

// Recv returns the bot's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.ws.Recv(ctx) }

// WireStats reports what crossed the wire (voicetest.WireStatsReporter):
// frames and bytes each way, utterance_end marks sent and the bot's
// clears (Twilio serializer).
func (c *conn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot(adapterName) }

// Close sends "stop" (Twilio) and closes the WebSocket.
func (c *conn) Close() error {
	return c.ws.Close(func() {
		if c.ser != Twilio || c.ws.ClosedErr() != nil {
			return
		}
		c.sendMu.Lock()
		defer c.sendMu.Unlock()
		err := c.sendJSONLocked(context.Background(), func(seq string) map[string]any {
			return map[string]any{"event": "stop", "sequenceNumber": seq, "streamSid": c.streamSid, "stop": map[string]string{"accountSid": c.accountSid, "callSid": c.callSid}}
		})
		if err != nil {
			c.ws.Logf("%s: sending stop: %v", adapterName, err)
		}
	})
}

// decode turns one frame from the bot into events. It runs on the reader
// goroutine.
func (c *conn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if c.ser == Twilio {
		if typ != websocket.MessageText {
			return nil, fmt.Errorf("got a binary frame of %d bytes; Pipecat's Twilio serializer sends JSON text frames", len(data))
		}
		return c.decodeTwilio(data)
	}
	if typ != websocket.MessageBinary {
		return nil, fmt.Errorf("got a text frame; Pipecat's protobuf serializer sends binary frames (is the bot's serializer another one?)")
	}
	if f, ok := parseCommonFrame(data); ok {
		if f.message {
			return c.rtv.Message(f.data)
		}
		return c.audioFrame(f.channels, f.rate, f.data)
	}
	f := new(pipecatpb.Frame)
	if err := proto.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("not a pipecat.Frame: %w", err)
	}
	switch v := f.Frame.(type) {
	case *pipecatpb.Frame_Audio:
		return c.audioFrame(v.Audio.NumChannels, v.Audio.SampleRate, v.Audio.Audio)
	case *pipecatpb.Frame_Text:
		c.rtv.AddText(v.Text.Text)
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: v.Text.Text}}, nil
	case *pipecatpb.Frame_Transcription:
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: v.Transcription.Text, Final: true}}, nil
	case *pipecatpb.Frame_Message:
		return c.rtv.Message([]byte(v.Message.Data))
	case *pipecatpb.Frame_Interruption:
		return c.rtv.Interruption("InterruptionFrame"), nil
	}
	return nil, errors.New("a pipecat.Frame with no frame set")
}

// audioFrame decodes an AudioRawFrame's audio (PCM16) of channels at rate.
func (c *conn) audioFrame(channels, rate uint32, audio []byte) ([]voicetest.AgentEvent, error) {
	if channels != 1 {
		return nil, fmt.Errorf("an AudioRawFrame of %d channels; voicetest takes mono (configure the bot's output for 1 channel)", channels)
	}
	if err := wire.CheckRate("", "sample_rate of an AudioRawFrame", int(rate), wire.StandardRates(), ""); err != nil {
		return nil, err
	}
	samples, err := pcm.DecodePCM16(nil, audio)
	if err != nil {
		return nil, fmt.Errorf("an AudioRawFrame of %d bytes: %w (PCM16 has 2 bytes a sample)", len(audio), err)
	}
	return c.audio(int(rate), samples)
}

// commonFrame is a frame parseCommonFrame parsed: a MessageFrame (its data)
// or an AudioRawFrame (its fields; data is the audio). data and name alias
// the frame's bytes.
type commonFrame struct {
	message        bool
	data           []byte
	id             uint64
	name           []byte
	rate, channels uint32
	pts            *uint64
}

// parseCommonFrame parses the frames a bot sends most, an AudioRawFrame
// (fields id, name, audio, sample_rate, num_channels and pts, each at most
// once) or a MessageFrame (one data field), as proto.Unmarshal would
// (the tests check it) without its reflection and without
// allocating. Anything else, or anything unusual in them (a repeated or
// unknown field, a value out of range, invalid UTF-8, a malformed field),
// reports false and is left to proto.Unmarshal.
func parseCommonFrame(data []byte) (commonFrame, bool) {
	num, typ, n := protowire.ConsumeTag(data)
	if n < 0 || typ != protowire.BytesType || (num != 2 && num != 4) {
		return commonFrame{}, false
	}
	body, m := protowire.ConsumeBytes(data[n:])
	if m < 0 || n+m != len(data) {
		return commonFrame{}, false
	}
	if num == 4 { // MessageFrame: data = 1
		if len(body) == 0 {
			return commonFrame{message: true, data: body}, true
		}
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return commonFrame{}, false
		}
		v, m := protowire.ConsumeBytes(body[n:])
		if m < 0 || n+m != len(body) || !utf8.Valid(v) {
			return commonFrame{}, false
		}
		return commonFrame{message: true, data: v}, true
	}
	var f commonFrame
	var seen [7]bool
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 || num < 1 || num > 6 || seen[num] {
			return commonFrame{}, false
		}
		seen[num] = true
		body = body[n:]
		switch num {
		case 2, 3: // name, audio
			if typ != protowire.BytesType {
				return commonFrame{}, false
			}
			v, m := protowire.ConsumeBytes(body)
			if m < 0 {
				return commonFrame{}, false
			}
			if num == 2 {
				if !utf8.Valid(v) {
					return commonFrame{}, false
				}
				f.name = v
			} else {
				f.data = v
			}
			body = body[m:]
		default: // id, sample_rate, num_channels, pts
			if typ != protowire.VarintType {
				return commonFrame{}, false
			}
			v, m := protowire.ConsumeVarint(body)
			if m < 0 {
				return commonFrame{}, false
			}
			switch num {
			case 1:
				f.id = v
			case 4, 5:
				if v > math.MaxUint32 {
					return commonFrame{}, false
				}
				if num == 4 {
					f.rate = uint32(v)
				} else {
					f.channels = uint32(v)
				}
			case 6:
				pts := v // only pts is moved to the heap, not every varint
				f.pts = &pts
			}
			body = body[m:]
		}
	}
	return f, true
}

// decodeTwilio decodes one Media Streams message or transport message.
func (c *conn) decodeTwilio(data []byte) ([]voicetest.AgentEvent, error) {
	var m struct {
		Event     string `json:"event"`
		StreamSid string `json:"streamSid"`
		Label     string `json:"label"`
		Media     *struct {
			Payload string `json:"payload"`
		} `json:"media"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	switch m.Event {
	case "media", "clear":
		if m.StreamSid != c.streamSid {
			return nil, fmt.Errorf("%s for streamSid %q, but this stream is %q", m.Event, m.StreamSid, c.streamSid)
		}
		if m.Event == "clear" {
			c.ws.Stats().Clear()
			return c.rtv.Interruption("clear"), nil
		}
		if m.Media == nil || m.Media.Payload == "" {
			return nil, errors.New("media message without media.payload")
		}
		raw, err := base64.StdEncoding.DecodeString(m.Media.Payload)
		if err != nil {
			return nil, fmt.Errorf("media.payload is not base64: %w", err)
		}
		return c.audio(pcm.Rate8k, pcm.DecodeMulaw(nil, raw))
	case "":
		return c.rtv.Message(data)
	}
	return nil, fmt.Errorf("unknown event %q; Pipecat's Twilio serializer sends media and clear, and transport messages without an event", m.Event)
}

// audio converts the bot's audio to the session rate.
func (c *conn) audio(rate int, samples []int16) ([]voicetest.AgentEvent, error) {
	c.rtv.Audio()
	return c.down.Append(nil, rate, samples)
}

// answerTool runs OnToolCall for a client-run function and sends
// llm-function-call-result. It runs on a goroutine Close waits for.
func (c *conn) answerTool(call voicetest.ToolCall) {
	ctx := c.ws.Context()
	res, _ := wire.RunTool(ctx, c.onTool, call)
	c.ws.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &res})
	if c.ser != Protobuf {
		c.ws.Logf("%s: cannot answer %s: the Twilio serializer reads nothing but media and dtmf", adapterName, call.Name)
		return
	}
	err := c.sendRTVI(ctx, "llm-function-call-result", rtvi.FunctionCallResult(call, res))
	if err != nil && ctx.Err() == nil {
		c.ws.Logf("%s: sending the result of %s: %v", adapterName, call.Name, err)
	}
}
