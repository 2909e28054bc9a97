// Package lkagent is a TEST DOUBLE of a LiveKit Agents voice agent: a Go
// worker that registers with a real LiveKit server, accepts the jobs it
// dispatches and joins their rooms through LiveKit's Go SDK
// (github.com/livekit/server-sdk-go/v2), where it talks with the first
// standard participant (the caller) the way LiveKit Agents' RoomIO does.
//
// THIS IS NOT LIVEKIT AGENTS. What it follows exactly:
//
//   - The worker protocol (livekit/protocol livekit_agent.proto; agents-js
//     src/worker.ts): a WebSocket to the server's /agent endpoint
//     authorized by a token with the agent grant, binary WorkerMessage /
//     ServerMessage protobufs: register (type JT_ROOM, agent_name,
//     allowed_permissions), then for each job an AvailabilityRequest
//     answered by an AvailabilityResponse (available, participant
//     identity, name, and the lk.agent.name attribute), and the
//     JobAssignment whose token joins the room; its load stays 0.
//   - The room conventions of LiveKit Agents (agents-js
//     src/voice/room_io, src/constants.ts): the lk.agent.state attribute
//     (initializing, listening, thinking, speaking); the agent's speech
//     transcribed as a text stream on lk.transcription per segment,
//     opened with lk.transcription_final "false", lk.segment_id and
//     lk.transcribed_track_id (its own track), written word by word as
//     the audio plays and closed when the segment ends; the user's speech
//     as one stream with lk.transcription_final "true" and the user's
//     track id; typed input read from lk.chat text streams; SIP DTMF data
//     packets read as key presses.
//   - The agent session protocol (livekit/protocol agent_session.proto;
//     agents-js src/voice/remote_session.ts): AgentSessionMessage events
//     sent as lk.agent.session byte streams to the caller:
//     function_tools_executed for a turn's tool call, conversation items
//     for an interrupted reply (a message with interrupted set) and for
//     handoffs.
//
// Behaviour: the agent hears the caller by energy (an utterance ends
// after EndSilence of silence), transcribes it with voicetest/fixtures'
// fake STT, and answers each utterance with the next Turn, spoken with
// fixtures.FakeTTS at 24 kHz on an audio track (the SDK encodes Opus).
// Voiced audio from the caller while it speaks cuts its reply (a
// barge-in). After HangUpAfter replies it leaves the room. Config.Send
// holds messages it sends right after it subscribed to the caller, for
// tests of malformed and hostile input.
package lkagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/livekit/media-sdk"
	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	lkproto "github.com/livekit/protocol/livekit/agent"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	lkmedia "github.com/livekit/server-sdk-go/v2/pkg/media"
	"github.com/pion/webrtc/v4"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// rate is the sample rate the agent hears and speaks at (the SDK
// resamples to and from Opus's 48 kHz).
const rate = 24000

// Fault is a way the agent misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the agent behaves.
	NoFault Fault = iota
	// Mute: the agent joins and listens but never answers.
	Mute
	// NeverJoin: the worker accepts jobs but never joins their rooms.
	NeverJoin
)

// Tool is a tool call the agent makes in a turn, before it replies.
type Tool struct {
	// Name and Args are the call; Result is its output; IsError marks a
	// failed call.
	Name    string
	Args    map[string]any
	Result  any
	IsError bool
}

// Turn is the agent's answer to one user turn.
type Turn struct {
	// Reply is what the agent says; "{heard}" is replaced by what it
	// heard and "{n}" by the turn's number. Empty means "Reply {n}:
	// {heard}".
	Reply string
	// Tool is called first, when set.
	Tool *Tool
	// Handoff, when set, hands the conversation to the agent of that id
	// (a conversation item) before the reply.
	Handoff string
}

// Message is one message the agent sends verbatim (Config.Send).
// Exactly one field is set.
type Message struct {
	// Session is an AgentSessionMessage (or bytes that claim to be one),
	// sent as one lk.agent.session byte stream to the caller.
	Session []byte `json:"session,omitempty"`
	// Text is a text stream.
	Text *TextStream `json:"text,omitempty"`
	// Packet is a livekit.DataPacket, marshalled, published reliably.
	Packet []byte `json:"packet,omitempty"`
	// Attributes are set on the agent participant.
	Attributes map[string]string `json:"attributes,omitempty"`
}

// TextStream is a text stream the agent sends.
type TextStream struct {
	Topic      string            `json:"topic"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Text is the stream's text; Raw, when set, is sent instead, as it
	// is (bytes that need not be UTF-8).
	Text string `json:"text,omitempty"`
	Raw  []byte `json:"raw,omitempty"`
}

// Config sets the agent's behaviour.
type Config struct {
	// URL, APIKey and APISecret reach the LiveKit server.
	URL, APIKey, APISecret string
	// AgentName is the name the worker registers under: only explicit
	// dispatches of that name reach it. Empty registers for automatic
	// dispatch (every new room).
	AgentName string
	// Greeting, when set, is said when the caller's microphone is
	// subscribed.
	Greeting string
	// Turns are the answers to the user's turns, in order; past the last
	// the agent says "Reply {n}: {heard}".
	Turns []Turn
	// HangUpAfter, when positive, makes the agent leave the room after
	// that many replies (the greeting not counted).
	HangUpAfter int
	// Fault is how the agent misbehaves.
	Fault Fault
	// Send are messages sent right after the caller's microphone is
	// subscribed, SendGap apart (default 30 ms; negative for none: the
	// SDK orders separate streams by nothing).
	Send    []Message
	SendGap time.Duration
	// EndSilence ends an utterance (default 250 ms); Threshold is the RMS
	// above which audio is voiced (default 400).
	EndSilence time.Duration
	Threshold  float64
	// LegacyTranscriptions also publishes each reply's transcript as a
	// legacy Transcription data packet (final, under a segment id of its
	// own), as LiveKit Agents 1.x do besides their lk.transcription
	// streams (agents-js ParticipantLegacyTranscriptionOutput).
	LegacyTranscriptions bool
	// SessionStates also reports each change of lk.agent.state as an
	// agent_state_changed session event stamped with its created_at, as
	// LiveKit Agents' session host does besides the attribute.
	SessionStates bool
	// LateToolEvents, when positive, holds back a tool turn's session
	// events (its function_tools_executed, stamped when the tool ran, and
	// with SessionStates the agent_state_changed to speaking that follows
	// it) until that long after the reply's first audio frame: the order
	// in which a framework's events reach the caller when its data
	// channel lags its audio track.
	LateToolEvents time.Duration
}

// Job is what one job of the agent did.
type Job struct {
	// Room is the room's name; Identity the agent's.
	Room, Identity string
	// Heard is what the agent heard, per utterance or text message.
	Heard []string
	// DTMF is the key presses it received.
	DTMF string
	// Replies counts the replies it finished or began; Interrupted those
	// cut by a barge-in.
	Replies, Interrupted int
	// Errors are what went wrong.
	Errors []string
	// Ended reports that the job is over: the agent left the room and
	// sends nothing more.
	Ended bool
	// PeakBuffered is the most bytes its data channels held unsent right
	// after it sent one of Config.Send: below MaxBuffered plus that
	// message (see MaxBuffered).
	PeakBuffered int
	// Reconnects counts the times the SDK began to reconnect the
	// agent's signal connection, and LeftState is the room's connection
	// state ("connected", "reconnecting", ...) when the agent left it:
	// a leave sent while the signal connection is down may never reach
	// the server, which then keeps the agent in the room for a while.
	// They explain an agent seen "still on the line" after it left.
	Reconnects int
	LeftState  string
}

// Worker is a running agent worker.
type Worker struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	jobs   []*Job
	regd   chan struct{}
	err    error
	// hold, set by the package's tests, runs on a goroutine of each
	// session once it has joined its room and met the participants
	// already there: one the session waits
	// for before its job ends but cannot stop, as an SDK call that
	// ignores the session's end (PublishDataPacket waits up to its
	// connect timeout for a publisher connection).
	hold func()
}

// New starts a worker for tb, stopped when tb ends, and waits until the
// server has registered it.
func New(tb testing.TB, cfg Config) *Worker {
	tb.Helper()
	w := Start(cfg)
	tb.Cleanup(w.Close)
	select {
	case <-w.regd:
	case <-time.After(30 * time.Second):
		tb.Fatalf("lkagent: the worker did not register with %s within 30 s: %v", cfg.URL, w.Err())
	}
	if err := w.Err(); err != nil {
		tb.Fatalf("lkagent: %v", err)
	}
	return w
}

// Start starts a worker; Close stops it.
func Start(cfg Config) *Worker { return start(cfg, nil) }

// start starts a worker whose sessions each run hold (see Worker.hold).
func start(cfg Config, hold func()) *Worker {
	if cfg.EndSilence == 0 {
		cfg.EndSilence = 250 * time.Millisecond
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 400
	}
	if cfg.SendGap == 0 {
		cfg.SendGap = 30 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Worker{cfg: cfg, ctx: ctx, cancel: cancel, regd: make(chan struct{}), hold: hold}
	w.wg.Add(1)
	go w.run()
	return w
}

// Close stops the worker and every job, and waits for them.
func (w *Worker) Close() {
	w.cancel()
	w.wg.Wait()
}

// Err returns why the worker stopped, if it did.
func (w *Worker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Jobs returns a copy of what each job did so far.
func (w *Worker) Jobs() []Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Job, len(w.jobs))
	for i, j := range w.jobs {
		out[i] = *j
		out[i].Heard = append([]string(nil), j.Heard...)
		out[i].Errors = append([]string(nil), j.Errors...)
	}
	return out
}

func (w *Worker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// update changes a job's record under the worker's lock.
func (w *Worker) update(j *Job, f func(*Job)) {
	w.mu.Lock()
	f(j)
	w.mu.Unlock()
}

// run holds the worker's WebSocket.
func (w *Worker) run() {
	defer w.wg.Done()
	at := auth.NewAccessToken(w.cfg.APIKey, w.cfg.APISecret)
	at.SetVideoGrant(&auth.VideoGrant{Agent: true}).SetValidFor(time.Hour)
	jwt, err := at.ToJWT()
	if err != nil {
		w.fail(err)
		return
	}
	url := strings.TrimRight(w.cfg.URL, "/") + "/agent"
	dctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	ws, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + jwt}}})
	cancel()
	if err != nil {
		w.fail(fmt.Errorf("dialing %s: %w", url, err))
		close(w.regd)
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	var sendMu sync.Mutex
	send := func(m *livekit.WorkerMessage) error {
		b, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		sendMu.Lock()
		defer sendMu.Unlock()
		return ws.Write(w.ctx, websocket.MessageBinary, b)
	}
	t := true
	err = send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_Register{Register: &livekit.RegisterWorkerRequest{
		Type: livekit.JobType_JT_ROOM, AgentName: w.cfg.AgentName, Version: "voicetest-lkagent",
		AllowedPermissions: &livekit.ParticipantPermission{CanPublish: t, CanSubscribe: t, CanPublishData: t, CanUpdateMetadata: t},
	}}})
	if err != nil {
		w.fail(fmt.Errorf("registering: %w", err))
		close(w.regd)
		return
	}
	registered := false
	for {
		typ, data, err := ws.Read(w.ctx)
		if err != nil {
			if !registered {
				w.fail(fmt.Errorf("waiting for the registration: %w", err))
				close(w.regd)
			}
			return
		}
		if typ != websocket.MessageBinary {
			continue
		}
		var msg livekit.ServerMessage
		if err := proto.Unmarshal(data, &msg); err != nil {
			w.fail(fmt.Errorf("a server message that is not a ServerMessage: %w", err))
			continue
		}
		switch m := msg.Message.(type) {
		case *livekit.ServerMessage_Register:
			if !registered {
				registered = true
				close(w.regd)
			}
		case *livekit.ServerMessage_Availability:
			job := m.Availability.GetJob()
			id := "agent-" + job.GetId()
			err = send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_Availability{Availability: &livekit.AvailabilityResponse{
				JobId: job.GetId(), Available: true, ParticipantIdentity: id, ParticipantName: "lkagent",
				ParticipantAttributes: map[string]string{"lk.agent.name": w.cfg.AgentName},
			}}})
		case *livekit.ServerMessage_Assignment:
			a := m.Assignment
			url := w.cfg.URL
			if a.Url != nil && *a.Url != "" {
				url = *a.Url
			}
			if w.cfg.Fault == NeverJoin {
				continue
			}
			j := &Job{Room: a.GetJob().GetRoom().GetName(), Identity: "agent-" + a.GetJob().GetId()}
			w.mu.Lock()
			w.jobs = append(w.jobs, j)
			w.mu.Unlock()
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				s := &session{w: w, job: j, jobID: a.GetJob().GetId()}
				err := s.run(url, a.GetToken())
				w.update(j, func(j *Job) {
					if err != nil {
						j.Errors = append(j.Errors, err.Error())
					}
					j.Ended = true
				})
				_ = send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_UpdateJob{UpdateJob: &livekit.UpdateJobStatus{JobId: a.GetJob().GetId(), Status: livekit.JobStatus_JS_SUCCESS}}})
			}()
		case *livekit.ServerMessage_Termination:
		}
		if err != nil {
			w.fail(err)
			return
		}
	}
}

// session is the agent in one room.
type session struct {
	w     *Worker
	job   *Job
	jobID string
	room  *lksdk.Room
	out   *lkmedia.PCMLocalTrack
	ctx   context.Context
	stop  context.CancelFunc

	mu        sync.Mutex
	caller    string // the caller's identity
	callerSID string // the caller's microphone track
	outSID    string
	ready     bool
	turn      int
	replies   int
	speaking  *speech
	userOn    bool
	voiced    time.Duration
	silent    time.Duration
	utterance []int16
	dtmf      string
	dtmfTimer *time.Timer
	state     string // the last lk.agent.state set
	busy      sync.WaitGroup
	streams   atomic.Int64
}

// speech is a reply being spoken.
type speech struct {
	cancel context.CancelFunc
	done   chan struct{}
	said   strings.Builder
}

// errEnded is what sending returns once the session is over (the caller
// left, the room closed, the worker stopped): nothing is published any
// more. The SDK would otherwise wait for a publisher that is not coming
// back: PublishDataPacket waits up to its connect timeout (5 s) for the
// publisher connection, and a reply cut by the caller's departure sent
// two packets (its transcript's trailer, the interrupted item) into the
// room the caller's Close had just deleted, which held the worker's
// Close, and the test, 10 s.
var errEnded = errors.New("lkagent: the session has ended")

// ended returns errEnded for an error of a send that the session's end
// overtook (run leaves the room while its goroutines may be sending),
// and err otherwise.
func (s *session) ended(err error) error {
	if err != nil && s.ctx.Err() != nil {
		return errEnded
	}
	return err
}

// errorf records an error of the job.
func (s *session) errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.w.update(s.job, func(j *Job) { j.Errors = append(j.Errors, msg) })
}

// run joins the room and stays until the job ends.
func (s *session) run(url, token string) error {
	s.ctx, s.stop = context.WithCancel(s.w.ctx)
	defer s.stop()
	cb := &lksdk.RoomCallback{
		OnParticipantConnected: func(rp *lksdk.RemoteParticipant) { s.link(rp) },
		OnParticipantDisconnected: func(rp *lksdk.RemoteParticipant) {
			s.mu.Lock()
			gone := rp.Identity() == s.caller
			s.mu.Unlock()
			if gone {
				s.stop()
			}
		},
		OnDisconnected: func() { s.stop() },
		OnReconnecting: func() { s.w.update(s.job, func(j *Job) { j.Reconnects++ }) },
		ParticipantCallback: lksdk.ParticipantCallback{
			OnTrackSubscribed: s.trackSubscribed,
			OnDataPacket:      s.dataPacket,
		},
	}
	// The agent's track exists before the room is joined: the greeting
	// (trackSubscribed, as soon as the caller's microphone is there) may
	// speak on it before run has published it.
	out, err := lkmedia.NewPCMLocalTrack(rate, 1, protologger.GetDiscardLogger())
	if err != nil {
		return err
	}
	s.out = out
	defer out.Close()
	room := lksdk.NewRoom(cb)
	s.room = room
	if err := room.RegisterTextStreamHandler("lk.chat", s.chat); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	err = room.JoinWithContextAndToken(ctx, url, token, lksdk.WithLogger(protologger.GetDiscardLogger()))
	cancel()
	if err != nil {
		return fmt.Errorf("joining the room: %w", err)
	}
	s.setState("initializing")
	pub, err := room.LocalParticipant.PublishTrack(out, &lksdk.TrackPublicationOptions{Name: "agent", Source: livekit.TrackSource_MICROPHONE})
	if err != nil {
		room.Disconnect()
		return fmt.Errorf("publishing the agent's track: %w", err)
	}
	s.mu.Lock()
	s.outSID = pub.SID()
	s.mu.Unlock()
	for _, rp := range room.GetRemoteParticipants() {
		s.link(rp)
	}
	if s.w.hold != nil {
		s.go_(s.w.hold)
	}
	<-s.ctx.Done()
	s.mu.Lock()
	if s.speaking != nil {
		s.speaking.cancel()
	}
	if s.dtmfTimer != nil && s.dtmfTimer.Stop() {
		s.busy.Done() // its func will not run
	}
	s.mu.Unlock()
	// Leave first, then wait for the session's goroutines: one may be in
	// an SDK call that does not heed the session's end (PublishDataPacket
	// waits up to its connect timeout for the publisher connection), and
	// until the agent leaves, the caller sees it on the line (a hang-up
	// that did not happen). What they send after this fails (errEnded).
	state := string(room.ConnectionState())
	s.w.update(s.job, func(j *Job) { j.LeftState = state })
	room.Disconnect()
	s.busy.Wait()
	return nil
}

// link makes rp the caller, when it is the first standard participant.
func (s *session) link(rp *lksdk.RemoteParticipant) {
	if rp.Kind() != lksdk.ParticipantStandard {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caller == "" {
		s.caller = rp.Identity()
	}
}

// setState sets lk.agent.state, and with Config.SessionStates reports
// the change as a session event.
func (s *session) setState(state string) {
	if ev := s.stateEvent(state); ev != nil {
		s.session(ev)
	}
}

// stateEvent sets lk.agent.state and returns the agent_state_changed
// session event that reports it, nil without Config.SessionStates.
func (s *session) stateEvent(state string) *lkproto.AgentSessionEvent {
	s.room.LocalParticipant.SetAttributes(map[string]string{"lk.agent.state": state})
	s.mu.Lock()
	old := s.state
	s.state = state
	caller := s.caller
	s.mu.Unlock()
	if !s.w.cfg.SessionStates || caller == "" {
		// Session messages go to the caller; before there is one (the
		// state "initializing" as run joins), a data packet would only
		// wait for the publisher connection.
		return nil
	}
	return &lkproto.AgentSessionEvent{CreatedAt: timestamppb.Now(), Event: &lkproto.AgentSessionEvent_AgentStateChanged_{AgentStateChanged: &lkproto.AgentSessionEvent_AgentStateChanged{
		OldState: agentStates[old], NewState: agentStates[state],
	}}}
}

// agentStates are the session protocol's agent states by their
// lk.agent.state names.
var agentStates = map[string]lkproto.AgentState{
	"initializing": lkproto.AgentState_AS_INITIALIZING, "idle": lkproto.AgentState_AS_IDLE, "listening": lkproto.AgentState_AS_LISTENING,
	"thinking": lkproto.AgentState_AS_THINKING, "speaking": lkproto.AgentState_AS_SPEAKING,
}

// trackSubscribed listens to the caller's microphone.
func (s *session) trackSubscribed(track *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
	s.link(rp)
	s.mu.Lock()
	mine := rp.Identity() == s.caller && s.callerSID == "" && track.Kind() == webrtc.RTPCodecTypeAudio
	if mine {
		s.callerSID = pub.SID()
	}
	s.mu.Unlock()
	if !mine {
		return
	}
	// No jitter buffer: on loopback nothing arrives out of order, and a
	// packet late only because this shared process was busy is decoded
	// rather than dropped (a lost 20 ms cuts a symbol of the fake speech).
	if _, err := lkmedia.NewPCMRemoteTrack(track, &ear{s: s}, lkmedia.WithTargetSampleRate(rate), lkmedia.WithHandleJitter(false),
		lkmedia.WithLogger(protologger.GetDiscardLogger())); err != nil {
		s.errorf("decoding the caller's track: %v", err)
		return
	}
	s.go_(func() {
		s.setState("listening")
		s.mu.Lock()
		s.ready = true
		s.mu.Unlock()
		s.sendVerbatim()
		if g := s.w.cfg.Greeting; g != "" {
			s.say(g, nil, nil)
		}
	})
}

// go_ runs f on a goroutine the session waits for.
func (s *session) go_(f func()) {
	s.busy.Add(1)
	go func() {
		defer s.busy.Done()
		f()
	}()
}

// MaxBuffered bounds what the agent leaves waiting in its own data
// channels (their SCTP association's buffer, in this process) while it
// sends Config.Send: before each message it waits until less than this
// is buffered.
const MaxBuffered = 256 << 10

// sendVerbatim sends Config.Send, each message once the agent's data
// channels hold less than MaxBuffered unsent: a flood then leaves this
// process about as fast as the server takes it, whatever the CPU left
// to either, and what the suite's heap check counts of it (it measures
// the whole process, this double included) stays bounded.
func (s *session) sendVerbatim() {
	for i, m := range s.w.cfg.Send {
		if i > 0 && s.w.cfg.SendGap > 0 {
			select {
			case <-time.After(s.w.cfg.SendGap):
			case <-s.ctx.Done():
				return
			}
		}
		for s.buffered() >= MaxBuffered {
			select {
			case <-time.After(5 * time.Millisecond):
			case <-s.ctx.Done():
				return
			}
		}
		if err := s.send(m); err != nil && !errors.Is(err, errEnded) {
			s.errorf("sending message %d: %v", i, err)
		}
		b := s.buffered()
		s.w.update(s.job, func(j *Job) { j.PeakBuffered = max(j.PeakBuffered, b) })
	}
}

// buffered returns the bytes the agent's data channels hold unsent.
func (s *session) buffered() int {
	pc := s.room.LocalParticipant.GetPublisherPeerConnection()
	if pc == nil || pc.SCTP() == nil {
		return 0
	}
	return pc.SCTP().BufferedAmount()
}

// rawPacket publishes a DataPacket as it is.
type rawPacket struct{ p *livekit.DataPacket }

func (r rawPacket) ToProto() *livekit.DataPacket { return r.p }

// send sends one message.
func (s *session) send(m Message) error {
	lp := s.room.LocalParticipant
	s.mu.Lock()
	caller := s.caller
	s.mu.Unlock()
	switch {
	case m.Session != nil:
		o, err := s.openStream("lk.agent.session", nil, false, []string{caller})
		if err == nil {
			err = o.write(m.Session)
		}
		if err == nil {
			err = o.close()
		}
		return err
	case m.Text != nil:
		o, err := s.openStream(m.Text.Topic, m.Text.Attributes, true, nil)
		content := []byte(m.Text.Text)
		if m.Text.Raw != nil {
			content = m.Text.Raw
		}
		if err == nil {
			err = o.write(content)
		}
		if err == nil {
			err = o.close()
		}
		return err
	case m.Packet != nil:
		if s.ctx.Err() != nil {
			return errEnded
		}
		var p livekit.DataPacket
		if err := proto.Unmarshal(m.Packet, &p); err != nil {
			return err
		}
		return s.ended(lp.PublishDataPacket(rawPacket{&p}, lksdk.WithDataPublishReliable(true)))
	case m.Attributes != nil:
		lp.SetAttributes(m.Attributes)
		return nil
	}
	return errors.New("an empty message")
}

// outStream is a data stream being sent as raw reliable packets. The
// SDK's stream writers are not used: their goroutine spins forever when
// the room closes under a write, which deletes the room at the end of
// every test.
type outStream struct {
	s    *session
	id   string
	to   []string
	next uint64
}

// openStream sends the header of a new stream on topic, of text or of
// bytes, to the participants to (nil for all).
func (s *session) openStream(topic string, attrs map[string]string, text bool, to []string) (*outStream, error) {
	o := &outStream{s: s, id: fmt.Sprintf("ST_%s_%d", s.jobID, s.streams.Add(1)), to: to}
	h := &livekit.DataStream_Header{StreamId: o.id, Timestamp: time.Now().UnixMilli(), Topic: topic, Attributes: attrs}
	if text {
		h.MimeType = "text/plain"
		h.ContentHeader = &livekit.DataStream_Header_TextHeader{TextHeader: &livekit.DataStream_TextHeader{}}
	} else {
		h.MimeType = "application/octet-stream"
		h.ContentHeader = &livekit.DataStream_Header_ByteHeader{ByteHeader: &livekit.DataStream_ByteHeader{Name: o.id}}
	}
	return o, o.publish(&livekit.DataPacket{Value: &livekit.DataPacket_StreamHeader{StreamHeader: h}})
}

func (o *outStream) publish(p *livekit.DataPacket) error {
	if o.s.ctx.Err() != nil {
		return errEnded
	}
	opts := []lksdk.DataPublishOption{lksdk.WithDataPublishReliable(true)}
	if o.to != nil {
		opts = append(opts, lksdk.WithDataPublishDestination(o.to))
	}
	return o.s.ended(o.s.room.LocalParticipant.PublishDataPacket(rawPacket{p}, opts...))
}

// write sends b in chunks of at most 15000 bytes (the SDK's chunk size;
// text is sent as it is, even cut inside a rune: it is the receiver's job
// to join chunks).
func (o *outStream) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), lksdk.STREAM_CHUNK_SIZE)
		err := o.publish(&livekit.DataPacket{Value: &livekit.DataPacket_StreamChunk{StreamChunk: &livekit.DataStream_Chunk{StreamId: o.id, ChunkIndex: o.next, Content: b[:n]}}})
		if err != nil {
			return err
		}
		o.next++
		b = b[n:]
	}
	return nil
}

// close sends the stream's trailer.
func (o *outStream) close() error {
	return o.publish(&livekit.DataPacket{Value: &livekit.DataPacket_StreamTrailer{StreamTrailer: &livekit.DataStream_Trailer{StreamId: o.id}}})
}

// ear hears the caller's microphone at rate.
type ear struct{ s *session }

func (e *ear) WriteSample(p media.PCM16Sample) error {
	e.s.hear(p)
	return nil
}

func (e *ear) Close() error { return nil }

// hear runs the agent's VAD on the caller's audio.
func (s *session) hear(p []int16) {
	if len(p) == 0 {
		return
	}
	var sum float64
	for _, v := range p {
		sum += float64(v) * float64(v)
	}
	voiced := math.Sqrt(sum/float64(len(p))) > s.w.cfg.Threshold
	d := pcm.DurationOf(len(p), rate)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		return
	}
	switch {
	case voiced && !s.userOn:
		s.userOn, s.voiced, s.silent = true, 0, 0
		s.utterance = s.utterance[:0]
	case voiced:
		s.silent = 0
	case s.userOn:
		s.silent += d
	}
	if !s.userOn {
		return
	}
	if voiced {
		s.voiced += d
	}
	if len(s.utterance) < 60*rate {
		s.utterance = append(s.utterance, p...)
	}
	if s.voiced >= 40*time.Millisecond && s.speaking != nil {
		// A barge-in: stop talking.
		s.speaking.cancel()
	}
	if s.silent >= s.w.cfg.EndSilence {
		s.userOn = false
		audio := pcm.Chunk{Rate: rate, Samples: append([]int16(nil), s.utterance...)}
		s.go_(func() { s.userTurn(audio) })
	}
}

// userTurn transcribes an utterance and answers it.
func (s *session) userTurn(audio pcm.Chunk) {
	tr, err := fixtures.FakeSTT().Transcribe(s.ctx, voicetest.TranscriptionRequest{Audio: audio})
	heard := strings.TrimSpace(tr.Text)
	if err != nil {
		s.errorf("transcribing %v of the caller's audio: %v", audio.Duration(), err)
	}
	if heard == "" {
		return
	}
	s.mu.Lock()
	trackSID := s.callerSID
	s.mu.Unlock()
	s.transcript(heard, trackSID, true)
	s.answer(heard)
}

// answer records what was heard and says the next reply.
func (s *session) answer(heard string) {
	s.w.update(s.job, func(j *Job) { j.Heard = append(j.Heard, heard) })
	if s.w.cfg.Fault == Mute {
		return
	}
	s.mu.Lock()
	// One reply at a time: a new turn waits for the one being said (it
	// was cut by the barge-in that made this turn).
	prev := s.speaking
	s.turn++
	n := s.turn
	s.mu.Unlock()
	if prev != nil {
		<-prev.done
	}
	var t Turn
	if n <= len(s.w.cfg.Turns) {
		t = s.w.cfg.Turns[n-1]
	}
	s.setState("thinking")
	var late []*lkproto.AgentSessionEvent // sent during the reply (Config.LateToolEvents)
	if t.Tool != nil {
		ev := toolEvent(n, *t.Tool)
		if s.w.cfg.LateToolEvents > 0 {
			late = append(late, ev)
		} else {
			s.session(ev)
		}
	}
	if t.Handoff != "" {
		s.session(&lkproto.AgentSessionEvent{Event: &lkproto.AgentSessionEvent_ConversationItemAdded_{ConversationItemAdded: &lkproto.AgentSessionEvent_ConversationItemAdded{
			Item: &lkproto.ChatContext_ChatItem{Item: &lkproto.ChatContext_ChatItem_AgentHandoff{AgentHandoff: &lkproto.AgentHandoff{Id: fmt.Sprintf("item_handoff_%d", n), NewAgentId: t.Handoff}}},
		}}})
	}
	reply := t.Reply
	if reply == "" {
		reply = "Reply {n}: {heard}"
	}
	reply = strings.NewReplacer("{heard}", heard, "{n}", strconv.Itoa(n)).Replace(reply)
	s.say(reply, late, func(finished bool) {
		s.mu.Lock()
		s.replies++
		replies := s.replies
		s.mu.Unlock()
		s.w.update(s.job, func(j *Job) {
			j.Replies++
			if !finished {
				j.Interrupted++
			}
		})
		if h := s.w.cfg.HangUpAfter; h > 0 && replies >= h && finished {
			s.stop()
		}
	})
}

// toolEvent returns the session event that reports a tool call and its
// result, as LiveKit Agents send it once the tools ran, stamped now.
func toolEvent(n int, t Tool) *lkproto.AgentSessionEvent {
	args, _ := json.Marshal(t.Args)
	out, _ := json.Marshal(t.Result)
	id := fmt.Sprintf("call_%d", n)
	return &lkproto.AgentSessionEvent{CreatedAt: timestamppb.Now(), Event: &lkproto.AgentSessionEvent_FunctionToolsExecuted_{FunctionToolsExecuted: &lkproto.AgentSessionEvent_FunctionToolsExecuted{
		FunctionCalls:       []*lkproto.FunctionCall{{Id: "item_" + id, CallId: id, Name: t.Name, Arguments: string(args)}},
		FunctionCallOutputs: []*lkproto.FunctionCallOutput{{Id: "item_out_" + id, CallId: id, Name: t.Name, Output: string(out), IsError: t.IsError}},
	}}}
}

// session sends an AgentSessionEvent to the caller.
func (s *session) session(ev *lkproto.AgentSessionEvent) {
	b, err := proto.Marshal(&lkproto.AgentSessionMessage{Message: &lkproto.AgentSessionMessage_Event{Event: ev}})
	if err == nil {
		err = s.send(Message{Session: b})
	}
	if err != nil && !errors.Is(err, errEnded) {
		s.errorf("sending a session event: %v", err)
	}
}

// transcript publishes a whole transcript of the track trackSID.
func (s *session) transcript(text, trackSID string, final bool) {
	o, err := s.openStream("lk.transcription", map[string]string{
		"lk.transcription_final": strconv.FormatBool(final), "lk.segment_id": fmt.Sprintf("SG_%s_user_%d", s.jobID, s.streams.Load()), "lk.transcribed_track_id": trackSID,
	}, true, nil)
	if err == nil {
		err = o.write([]byte(text))
	}
	if err == nil {
		err = o.close()
	}
	if err != nil && !errors.Is(err, errEnded) {
		s.errorf("publishing a transcript: %v", err)
	}
}

// legacyTranscript publishes text as a final legacy transcription
// segment of the agent's track, under a segment id unlike the stream's.
func (s *session) legacyTranscript(seg, trackSID, text string) {
	p := &livekit.DataPacket{Value: &livekit.DataPacket_Transcription{Transcription: &livekit.Transcription{
		TranscribedParticipantIdentity: s.room.LocalParticipant.Identity(), TrackId: trackSID,
		Segments: []*livekit.TranscriptionSegment{{Id: "LG_" + seg, Text: text, Final: true}},
	}}}
	if s.ctx.Err() != nil {
		return // see errEnded
	}
	if err := s.ended(s.room.LocalParticipant.PublishDataPacket(rawPacket{p}, lksdk.WithDataPublishReliable(true))); err != nil && !errors.Is(err, errEnded) {
		s.errorf("publishing a legacy transcript: %v", err)
	}
}

// say speaks text; after it ends, done (if set) learns whether it was
// said to the end. The session events late, and then the state change to
// speaking, are sent Config.LateToolEvents after its first audio frame.
func (s *session) say(text string, late []*lkproto.AgentSessionEvent, done func(finished bool)) {
	audio, err := fixtures.FakeTTS().Synthesize(s.ctx, voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		s.errorf("synthesizing %q: %v", text, err)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	sp := &speech{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.speaking = sp
	seg := fmt.Sprintf("SG_%s_%d", s.jobID, s.replies+s.turn)
	outSID := s.outSID
	s.mu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		if s.speaking == sp {
			s.speaking = nil
		}
		s.mu.Unlock()
		close(sp.done)
	}()
	if ev := s.stateEvent("speaking"); ev != nil {
		if late != nil {
			late = append(late, ev)
		} else {
			s.session(ev)
		}
	}
	w, err := s.openStream("lk.transcription", map[string]string{
		"lk.transcription_final": "false", "lk.segment_id": seg, "lk.transcribed_track_id": outSID,
	}, true, nil)
	if err != nil {
		if !errors.Is(err, errEnded) {
			s.errorf("opening the transcript of %q: %v", text, err)
		}
		return
	}
	words := wordTimes(text)
	start := time.Now()
	frames := audio.Frames(20 * time.Millisecond)
	finished := true
	next := 0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i, f := range frames {
		if ctx.Err() != nil {
			finished = false
			break
		}
		if err := s.out.WriteSample(media.PCM16Sample(f.Samples)); err != nil {
			finished = false
			break
		}
		if late != nil && time.Since(start) >= s.w.cfg.LateToolEvents {
			for _, ev := range late {
				s.session(ev)
			}
			late = nil
		}
		for next < len(words) && words[next].at <= time.Since(start) {
			sp.said.WriteString(words[next].text)
			_ = w.write([]byte(words[next].text))
			next++
		}
		if i < len(frames)-1 {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}
	for _, ev := range late { // a reply shorter than LateToolEvents
		s.session(ev)
	}
	if finished {
		// The audio queued in the track plays out.
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			finished = false
		}
	}
	if finished {
		for ; next < len(words); next++ {
			_ = w.write([]byte(words[next].text))
		}
	} else {
		s.out.ClearQueue()
	}
	_ = w.close()
	if s.w.cfg.LegacyTranscriptions {
		s.legacyTranscript(seg, outSID, sp.said.String())
	}
	if !finished {
		s.session(&lkproto.AgentSessionEvent{Event: &lkproto.AgentSessionEvent_ConversationItemAdded_{ConversationItemAdded: &lkproto.AgentSessionEvent_ConversationItemAdded{
			Item: &lkproto.ChatContext_ChatItem{Item: &lkproto.ChatContext_ChatItem_Message{Message: &lkproto.ChatMessage{
				Id: "item_" + seg, Role: lkproto.ChatRole_ASSISTANT, Interrupted: true,
				Content: []*lkproto.ChatMessage_ChatContent{{Payload: &lkproto.ChatMessage_ChatContent_Text{Text: sp.said.String()}}},
			}}},
		}}})
	}
	if s.ctx.Err() == nil {
		s.setState("listening")
	}
	if done != nil {
		done(finished)
	}
}

// word is a word of a reply and when, into its audio, it is said.
type word struct {
	text string
	at   time.Duration
}

// wordTimes places the words of text as fixtures.FakeTTS times them: 100
// ms of silence, then per word 65 ms a character less 15 ms, words 150
// ms apart.
func wordTimes(text string) []word {
	var out []word
	at := 100 * time.Millisecond
	for i, f := range strings.Fields(text) {
		w := f
		if i > 0 {
			w = " " + f
		}
		out = append(out, word{text: w, at: at})
		at += time.Duration(65*len(f)-15)*time.Millisecond + 150*time.Millisecond
	}
	return out
}

// chat takes typed input on lk.chat.
func (s *session) chat(r *lksdk.TextStreamReader, from string) {
	text := r.ReadAll()
	s.mu.Lock()
	ok := from == s.caller
	s.mu.Unlock()
	if !ok || strings.TrimSpace(text) == "" {
		return
	}
	s.go_(func() { s.answer(strings.TrimSpace(text)) })
}

// dataPacket takes SIP DTMF key presses: after 300 ms without another,
// the keys so far are one user turn ("DTMF 123").
func (s *session) dataPacket(p lksdk.DataPacket, params lksdk.DataReceiveParams) {
	d, ok := p.(*livekit.SipDTMF)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if params.SenderIdentity != s.caller {
		return
	}
	s.dtmf += d.Digit
	s.w.update(s.job, func(j *Job) { j.DTMF += d.Digit })
	if s.dtmfTimer != nil && s.dtmfTimer.Stop() {
		s.busy.Done() // its func will not run
	}
	s.busy.Add(1)
	s.dtmfTimer = time.AfterFunc(300*time.Millisecond, func() {
		defer s.busy.Done()
		s.mu.Lock()
		keys := s.dtmf
		s.dtmf = ""
		s.mu.Unlock()
		if keys != "" && s.ctx.Err() == nil {
			s.answer("DTMF " + keys)
		}
	})
}
