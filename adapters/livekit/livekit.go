// Package livekit reaches a voice agent through a LiveKit room, the way a
// caller reaches a deployed LiveKit agent, with LiveKit's official Go
// SDK (github.com/livekit/server-sdk-go/v2, whose pkg/media encodes and
// decodes Opus through cgo: it needs libopus, libopusfile and libsoxr).
//
// voicetest joins the room as an ordinary participant (the caller), with
// a join token it makes from an API key and secret or one it is given;
// it dispatches the agent by name through the agent dispatch API
// (Agent.AgentName) or waits for an agent participant to join
// (automatic dispatch, or an agent the test starts itself); it publishes
// the user's speech as a microphone track and subscribes to the agent
// participant's audio. Connect returns once the agent has joined and
// subscribed to that track, so that no word of the user's is lost.
//
// What the adapter makes of the room (LiveKit Agents' conventions, as
// its Python and Node frameworks publish them):
//
//   - The agent's audio tracks: AgentAudio, Opus decoded at 48 kHz and
//     resampled to Session.Rate. Frames of digital silence (an idle track
//     keeps sending them) are dropped, so that the runner times the
//     agent's speech from its first audible frame.
//   - The agent's lk.agent.state attribute (initializing, idle,
//     listening, thinking, speaking): each change is an AgentLog event
//     ("agent state: thinking → speaking") on the timeline; a change to
//     listening or idle after thinking or speaking ends the agent's turn
//     (AgentTurnEnd, Capabilities.TurnEnd), once its audio and its
//     transcript of the turn have arrived (see below).
//   - Text streams on the lk.transcription topic: the agent's own speech
//     (a stream per segment, written as the audio plays, lk.segment_id
//     and lk.transcribed_track_id in its attributes) becomes
//     AgentTranscript deltas and, when the stream closes (or a stream
//     with lk.transcription_final "true" arrives), the segment's whole
//     text with Final set; a stream that transcribes the user's
//     microphone track becomes UserTranscript, Final as
//     lk.transcription_final says. With Agent.LegacyTranscriptions, the
//     legacy Transcription data packets of agents older than 1.0 are
//     read instead (final segments only).
//   - Byte streams on the lk.agent.session topic (LiveKit Agents' session
//     protocol, AgentSessionMessage of livekit/protocol's agent package,
//     which the framework sends to the participant it talks to): tool
//     calls and their results (function_tools_started,
//     function_tools_executed, and function_call / function_call_output
//     conversation items) become AgentToolCall and AgentToolResult; an
//     agent message added as interrupted becomes AgentInterrupted; a
//     handoff to another agent becomes AgentHandoff (Text the new agent's
//     id, voicetest.HandoffEvent); errors, overlapping speech and false
//     interruptions become AgentLog. The protocol's console audio (audio_output, and
//     audio_playback_clear) is taken as agent audio and an interruption.
//     Nothing orders these streams against the audio track: a tool event
//     that comes after the first audio of the reply it led to is marked
//     voicetest.AgentEvent.BeforeSpeech (recorded ahead of the reply's
//     message) when its created_at shows the agent made it before that
//     audio came, judged against the least lag of the session events so
//     far. A reply whose speech starts sooner after its tool ran than the
//     data channel lags the audio track (a model that answers in a few
//     milliseconds) leaves no such evidence: its tool event is recorded
//     where it came, after the message.
//   - SIP DTMF data packets from the agent: AgentData named "dtmf"
//     ({"digit","code"}); other data packets: AgentData named by their
//     topic, with the payload as JSON (as a JSON string when it is not).
//   - The agent leaving the room, or the room being closed or deleted:
//     AgentHangUp with the reason LiveKit gives; then Recv returns a
//     *voicetest.TransportClosedError. A connection that fails otherwise
//     ends with a *voicetest.TransportClosedError that says why.
//   - A message the adapter cannot use (an lk.transcription_final that is
//     neither "true" nor "false", text that is not UTF-8, a session
//     message that is not an AgentSessionMessage, audio at a rate no
//     voice protocol uses, an invalid DTMF key, an unknown agent state):
//     one *wire.FrameError from Recv; the conversation goes on.
//
// What voicetest sends: SendAudio writes the user's speech to the
// microphone track (resampled to 48 kHz), paced as it plays out: each
// utterance starts to play once 120 ms of it has arrived (the SDK's track
// fills a frame it finds short with silence, so audio that arrives just
// in time from a busy machine would have gaps), a SendAudio returns once
// what is queued is at most 60 ms ahead of the track, and EndUtterance
// waits until the utterance has left, so that the runner's end of the
// user's speech is when its last audio crossed into the room. The agent detects the end of speech itself
// (Capabilities.NativeVAD). SendText sends a text stream on lk.chat, the
// topic LiveKit Agents take typed user input from; SendDTMF publishes
// SIP DTMF data packets (RFC 4733 event codes), as a phone caller's key
// presses reach a LiveKit agent. LiveKit has no message that stops an
// agent's speech: Interrupt is unsupported, and voicetest.Interrupt
// barges in with overlapping speech, which the agent's own VAD hears.
//
// Separate streams are not ordered with respect to each other: the SDK
// hands each stream to its own goroutine, so two streams sent back to
// back may be seen in either order (messages of one stream, and data
// packets, keep their order).
//
// Bounds: the events queued while the runner is not reading
// (Agent.MaxQueueBytes), each message, text stream and session message
// (Agent.MaxFrameBytes), the streams open at once (256) and the tool
// calls remembered to match results to calls (wire.MaxResponseCalls):
// past one, the conversation ends with a *voicetest.LimitError naming
// it. The API secret and the token are blanked, also where the agent
// echoes them, from the capture, the log, errors and events.
//
// The wire capture (Session.Capture) records what crosses the SDK: the
// user's audio as the adapter wrote it to the track and the agent's as
// it was decoded (binary PCM16 at 48 kHz), and every message as JSON;
// the Opus packets themselves are the SDK's.
package livekit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// adapterName names the adapter in errors and capabilities.
const adapterName = "livekit"

// The topics and attributes of LiveKit Agents that the adapter reads and
// writes.
const (
	// TopicTranscription is the text stream topic of transcriptions.
	TopicTranscription = "lk.transcription"
	// TopicChat is the text stream topic of typed user input.
	TopicChat = "lk.chat"
	// TopicSession is the byte stream topic of the agent session protocol.
	TopicSession = "lk.agent.session"
	// AttributeAgentState is the agent participant's state attribute.
	AttributeAgentState = "lk.agent.state"
	// AttributeAgentName is the agent participant's name attribute, set
	// by the worker that accepted the dispatch.
	AttributeAgentName   = "lk.agent.name"
	attrFinal            = "lk.transcription_final"
	attrSegmentID        = "lk.segment_id"
	attrTranscribedTrack = "lk.transcribed_track_id"
)

// Defaults of Agent.
const (
	// DefaultIdentity is the caller's participant identity.
	DefaultIdentity = "voicetest-caller"
	// DefaultDialTimeout bounds joining the room.
	DefaultDialTimeout = 10 * time.Second
	// DefaultAgentTimeout bounds the wait for the agent to join the room
	// and subscribe to the caller's microphone.
	DefaultAgentTimeout = 30 * time.Second
	// DefaultMaxFrameBytes bounds one message, text stream or session
	// message from the agent.
	DefaultMaxFrameBytes = wire.DefaultMaxFrameBytes
	// DefaultMaxQueueBytes bounds what is queued while the runner is busy.
	DefaultMaxQueueBytes = wire.DefaultMaxQueueBytes
)

// The wire audio: Opus at 48 kHz, mono, both ways.
const wireRate = 48000

// Agent is a voice agent reached through a LiveKit room. Set the fields
// before the first Connect; an Agent may then serve parallel scenarios
// (each Connect joins a room of its own unless Room is set).
type Agent struct {
	// URL is the LiveKit server, ws:// or wss:// (http(s):// is taken as
	// the same address); empty means the LIVEKIT_URL environment
	// variable.
	URL string
	// APIKey and APISecret sign the caller's join token and authorize
	// the server API calls (agent dispatch, deleting the room); empty
	// means LIVEKIT_API_KEY and LIVEKIT_API_SECRET. Not needed with
	// Token.
	APIKey, APISecret string
	// Token is a join token made elsewhere, for a room and an identity
	// it names; with it the adapter signs nothing. Without a key and
	// secret it can neither dispatch an agent nor delete the room: put
	// the dispatch in the token's room configuration instead.
	Token string

	// Room is the room to join; empty makes a new room for each Connect,
	// named after the scenario, and deletes it at Close (KeepRoom keeps
	// it).
	Room string
	// KeepRoom leaves the room to LiveKit's empty timeout instead of
	// deleting it at Close.
	KeepRoom bool
	// Identity is the caller's participant identity (default
	// DefaultIdentity); Name its display name.
	Identity, Name string
	// Metadata and Attributes are the caller's participant metadata and
	// attributes, as the agent sees them (e.g. sip.phoneNumber).
	Metadata   string
	Attributes map[string]string

	// AgentName dispatches the named agent into the room through the
	// agent dispatch API, with DispatchMetadata as the job's metadata.
	// Empty waits for an agent participant to join by itself.
	AgentName, DispatchMetadata string
	// AgentIdentity, when set, is the agent participant's identity;
	// otherwise the agent is the first participant of kind AGENT (whose
	// lk.agent.name attribute, when AgentName is set and it has one,
	// matches).
	AgentIdentity string

	// NoAgentState says that the agent does not publish lk.agent.state:
	// its turns end by the runner's tail silence, not by a state change
	// (Capabilities.TurnEnd is false).
	NoAgentState bool
	// NoTranscripts says that the agent publishes no lk.transcription
	// streams of its speech (Capabilities.StreamingTranscripts is false):
	// set voicetest.Config.AgentSTT to transcribe it.
	NoTranscripts bool
	// LegacyTranscriptions says that the agent predates text streams
	// (LiveKit Agents before 1.0): its transcripts are read from the
	// legacy Transcription data packets instead of lk.transcription text
	// streams. Agents from 1.0 on publish both, each segment under a
	// different id in each, so the adapter reads one or the other, never
	// both (which would double every line).
	LegacyTranscriptions bool
	// TranscriptAhead says that the agent's transcript runs ahead of its
	// audio (an agent whose transcription is not synchronized with its
	// speech); see voicetest.Capabilities.TranscriptAhead.
	TranscriptAhead bool

	// DialTimeout bounds joining the room (default DefaultDialTimeout);
	// AgentTimeout bounds the wait for the agent to join and subscribe
	// (default DefaultAgentTimeout). Both end with a
	// *voicetest.TimeoutError in phase voicetest.PhaseConnect.
	DialTimeout, AgentTimeout time.Duration
	// MaxFrameBytes and MaxQueueBytes bound what the adapter holds of the
	// agent's output (defaults DefaultMaxFrameBytes and
	// DefaultMaxQueueBytes); see the package comment.
	MaxFrameBytes, MaxQueueBytes int64
	// RequireTLS refuses a ws:// URL to a host that is not loopback.
	RequireTLS bool
	// Scrub, when set, is the scrubber the connection learns its secrets
	// into (see wire.WSOptions.Scrub).
	Scrub *scrub.Scrubber
}

// New returns an agent in a room of the LiveKit server at url, reached
// with the API key pair, that dispatches the agent named agentName (empty
// waits for an agent to join by itself).
func New(url, apiKey, apiSecret, agentName string) *Agent {
	return &Agent{URL: url, APIKey: apiKey, APISecret: apiSecret, AgentName: agentName}
}

// settings is an Agent with its defaults and environment applied.
type settings struct {
	Agent
	wsURL, httpURL string
	createdRoom    bool
}

// resolve applies the defaults and checks the settings.
func (a *Agent) resolve(sessionName string) (*settings, error) {
	s := &settings{Agent: *a}
	if s.URL == "" {
		s.URL = os.Getenv("LIVEKIT_URL")
	}
	if s.URL == "" {
		return nil, fmt.Errorf("adapters: %s: no server URL; set livekit.Agent.URL or the LIVEKIT_URL environment variable (ws://127.0.0.1:7880 for a local livekit-server --dev)", adapterName)
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("adapters: %s: server URL %q is not a URL like ws://host:port or wss://project.livekit.cloud", adapterName, wire.RedactURL(s.URL))
	}
	switch strings.ToLower(u.Scheme) {
	case "ws", "http":
		u.Scheme = "ws"
	case "wss", "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("adapters: %s: server URL scheme %q: use ws://, wss://, http:// or https://", adapterName, u.Scheme)
	}
	u.Path, u.RawQuery, u.Fragment = strings.TrimRight(u.Path, "/"), "", ""
	s.wsURL = u.String()
	hu := *u
	hu.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	s.httpURL = hu.String()
	if err := wire.CheckPlaintext(adapterName, s.wsURL, wire.WSOptions{RequireTLS: s.RequireTLS}); err != nil {
		return nil, err
	}
	if s.Token == "" {
		if s.APIKey == "" {
			s.APIKey = os.Getenv("LIVEKIT_API_KEY")
		}
		if s.APISecret == "" {
			s.APISecret = os.Getenv("LIVEKIT_API_SECRET")
		}
		if s.APIKey == "" || s.APISecret == "" {
			return nil, fmt.Errorf("adapters: %s: no credentials; set livekit.Agent.APIKey and APISecret (or LIVEKIT_API_KEY and LIVEKIT_API_SECRET), or give a join Token", adapterName)
		}
		if s.Room == "" {
			s.Room = roomName(sessionName)
			s.createdRoom = true
		}
	} else if s.AgentName != "" && (s.APIKey == "" || s.APISecret == "") {
		return nil, fmt.Errorf("adapters: %s: AgentName %q needs APIKey and APISecret to dispatch the agent through the API; with a Token alone, put the dispatch in the token's room configuration (RoomConfiguration.Agents) and leave AgentName empty", adapterName, s.AgentName)
	}
	if s.Identity == "" {
		s.Identity = DefaultIdentity
	}
	if s.Name == "" {
		s.Name = "voicetest"
	}
	if s.DialTimeout <= 0 {
		s.DialTimeout = DefaultDialTimeout
	}
	if s.AgentTimeout <= 0 {
		s.AgentTimeout = DefaultAgentTimeout
	}
	if s.MaxFrameBytes <= 0 {
		s.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if s.MaxQueueBytes <= 0 {
		s.MaxQueueBytes = DefaultMaxQueueBytes
	}
	return s, nil
}

// roomName returns a new room name for a scenario: its name, made safe,
// and a random suffix.
func roomName(session string) string {
	var b strings.Builder
	b.WriteString("voicetest-")
	for _, r := range session {
		if b.Len() >= 48 {
			break
		}
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	b.WriteByte('-')
	b.WriteString(hex.EncodeToString(suffix[:]))
	return b.String()
}

// token returns the caller's join token.
func (s *settings) token() (string, error) {
	if s.Token != "" {
		return s.Token, nil
	}
	t := true
	at := auth.NewAccessToken(s.APIKey, s.APISecret)
	at.SetVideoGrant(&auth.VideoGrant{
		RoomJoin: true, Room: s.Room,
		CanPublish: &t, CanSubscribe: &t, CanPublishData: &t, CanUpdateOwnMetadata: &t,
	}).
		SetIdentity(s.Identity).
		SetName(s.Name).
		SetKind(livekit.ParticipantInfo_STANDARD).
		SetValidFor(6 * time.Hour)
	if s.Metadata != "" {
		at.SetMetadata(s.Metadata)
	}
	if len(s.Attributes) > 0 {
		at.SetAttributes(s.Attributes)
	}
	jwt, err := at.ToJWT()
	if err != nil {
		return "", fmt.Errorf("adapters: %s: signing the join token: %w", adapterName, err)
	}
	return jwt, nil
}

// Connect joins the room, publishes the caller's microphone, dispatches
// the agent (or waits for it) and returns once the agent has joined and
// subscribed to the microphone.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	st, err := a.resolve(s.Name)
	if err != nil {
		return nil, err
	}
	sc := st.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.Add(st.APISecret)
	sc.AddURL(st.URL)
	tok, err := st.token()
	if err != nil {
		return nil, err
	}
	sc.Add(tok)
	c, err := newConn(st, s, sc)
	if err != nil {
		return nil, err
	}
	if err := c.open(ctx, tok); err != nil {
		c.abort()
		return nil, wire.ScrubError(sc, err)
	}
	return c, nil
}

// errClosed reports a Conn used after Close.
var errClosed = errors.New("the conversation is closed")
