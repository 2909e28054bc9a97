package livekit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/livekit/media-sdk"
	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	lkmedia "github.com/livekit/server-sdk-go/v2/pkg/media"
	"github.com/pion/webrtc/v4"
	"github.com/twitchtv/twirp"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// sendLead is how far ahead of the track's playout SendAudio may queue
// the user's audio.
const sendLead = 60 * time.Millisecond

// cushion is the audio an utterance holds back before it starts to play.
// The SDK's track takes a 20 ms frame from its queue every 20 ms and pads
// a frame it finds short with zeros: audio that arrives in real time,
// from a caller the scheduler is late to run (a busy machine), would be
// cut by gaps of silence. Starting each utterance this late keeps that
// much queued ahead while the rest arrives. EndUtterance waits until the
// utterance has played, so the end of the user's speech is still when it
// left.
const cushion = 120 * time.Millisecond

// conn is one conversation in a LiveKit room.
type conn struct {
	st      *settings
	rate    int
	scrub   *scrub.Scrubber
	logf    func(string, ...any)
	capture *wire.CaptureWriter
	capt    bool
	q       *inbox
	stats   *wire.Stats
	http    *http.Client
	caps    voicetest.Capabilities
	started time.Time

	room *lksdk.Room
	mic  *lkmedia.PCMLocalTrack

	// ready is closed when the agent has joined and subscribed to the
	// microphone; joined when the agent has joined.
	ready, joined chan struct{}

	// sendMu serializes the Send methods; it guards up, playEnd and
	// held (the start of an utterance held back, see cushion).
	sendMu  sync.Mutex
	up      wire.Upstream
	playEnd time.Time
	held    []int16

	// mu guards everything below, and orders what is added to q.
	mu          sync.Mutex
	agent       string // the agent participant's identity, once known
	micSID      string // the microphone track's SID
	subscribed  bool
	closing     bool
	ended       bool
	endCause    error
	limit       *voicetest.LimitError // the queue overflow that ended the conversation, which Close reports
	recv        *receiver
	remotes     []*lkmedia.PCMRemoteTrack
	readyOnce   sync.Once
	joinedOnce  sync.Once
	closeOnce   sync.Once
	done        chan struct{} // closed by Close
	wg          sync.WaitGroup
	openStreams int
	joinedRoom  bool // the caller joined the room (so there is one to delete)
}

func newConn(st *settings, s voicetest.Session, sc *scrub.Scrubber) (*conn, error) {
	logf := wire.ScrubLogf(sc, s.Logf)
	c := &conn{
		st:      st,
		rate:    s.Rate,
		scrub:   sc,
		logf:    logf,
		capture: wire.NewCaptureWriter(s.Capture, logf),
		capt:    s.Capture != nil,
		q:       newInbox(st.MaxQueueBytes),
		stats:   &wire.Stats{},
		http:    &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: st.DialTimeout},
		ready:   make(chan struct{}),
		joined:  make(chan struct{}),
		done:    make(chan struct{}),
		started: time.Now(),
		caps: voicetest.Capabilities{
			Adapter:              adapterName,
			Audio:                true,
			Text:                 true,
			InputFormat:          voicetest.AudioFormat{Encoding: "opus", Rate: wireRate},
			OutputFormat:         voicetest.AudioFormat{Encoding: "opus", Rate: wireRate},
			StreamingTranscripts: !st.NoTranscripts,
			TranscriptAhead:      st.TranscriptAhead,
			NativeVAD:            true,
			DTMF:                 true,
			TurnEnd:              !st.NoAgentState,
			ToolEvents:           true,
		},
	}
	c.capture.SetScrubber(sc)
	c.recv = newReceiver(c)
	if s.Rate != wireRate {
		r, err := pcm.NewResampler(s.Rate, wireRate)
		if err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
		c.up.Resampler = r
	}
	return c, nil
}

// open joins the room and waits for the agent.
func (c *conn) open(ctx context.Context, token string) error {
	st := c.st
	c.room = lksdk.NewRoom(c.callbacks())
	transcriptions := c.recv.onTranscription
	if c.st.LegacyTranscriptions {
		transcriptions = c.recv.ignoreTranscription
	}
	if err := c.room.RegisterTextStreamHandler(TopicTranscription, transcriptions); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	if err := c.room.RegisterByteStreamHandler(TopicSession, c.recv.onSession); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	joinCtx, cancel := context.WithTimeout(ctx, st.DialTimeout)
	defer cancel()
	t0 := time.Now()
	err := c.room.JoinWithContextAndToken(joinCtx, st.wsURL, token,
		lksdk.WithAutoSubscribe(true), lksdk.WithConnectTimeout(st.DialTimeout), lksdk.WithLogger(protologger.GetDiscardLogger()))
	if err != nil {
		c.capture.Note("error", fmt.Sprintf("join %s: %v", st.wsURL, c.scrub.String(err.Error())))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if joinCtx.Err() != nil || time.Since(t0) >= st.DialTimeout {
			return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: st.DialTimeout,
				Hint: fmt.Sprintf("joining room %q on the LiveKit server at %s did not complete; check that the server is up and reachable (UDP too), or raise livekit.Agent.DialTimeout", st.Room, st.wsURL)}
		}
		return fmt.Errorf("adapters: %s: joining room %q on %s: %w", adapterName, st.Room, st.wsURL, err)
	}
	joinTook := time.Since(t0)
	c.mu.Lock()
	c.joinedRoom = true
	c.mu.Unlock()
	c.capture.Note("open", fmt.Sprintf("%s room %s as %s", st.wsURL, c.room.Name(), st.Identity))
	mic, err := lkmedia.NewPCMLocalTrack(wireRate, 1, protologger.GetDiscardLogger())
	if err != nil {
		return fmt.Errorf("adapters: %s: creating the microphone track: %w", adapterName, err)
	}
	c.mic = mic
	pub, err := c.room.LocalParticipant.PublishTrack(mic, &lksdk.TrackPublicationOptions{Name: "microphone", Source: livekit.TrackSource_MICROPHONE})
	if err != nil {
		return fmt.Errorf("adapters: %s: publishing the microphone track: %w", adapterName, err)
	}
	c.mu.Lock()
	c.micSID = pub.SID()
	c.mu.Unlock()
	if st.AgentName != "" {
		if err := c.dispatch(ctx); err != nil {
			return err
		}
	}
	// Agents already in the room.
	for _, rp := range c.room.GetRemoteParticipants() {
		c.participantJoined(rp)
	}
	wait := time.NewTimer(st.AgentTimeout)
	defer wait.Stop()
	select {
	case <-c.ready:
	case <-wait.C:
		what := "no agent participant joined"
		select {
		case <-c.joined:
			what = "the agent joined but did not subscribe to the caller's microphone"
		default:
		}
		hint := fmt.Sprintf("%s room %q within livekit.Agent.AgentTimeout", what, st.Room)
		if st.AgentName != "" {
			hint += fmt.Sprintf("; the agent %q was dispatched: check that its worker is running and registered under that name with this server, and that it is not at full load", st.AgentName)
		} else {
			hint += "; set livekit.Agent.AgentName to dispatch an agent explicitly, or check that automatic dispatch is configured"
		}
		c.capture.Note("error", hint)
		return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: st.AgentTimeout, Hint: hint}
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return errors.New("adapters: " + adapterName + ": closed while waiting for the agent")
	}
	if err := c.q.finished(); err != nil {
		return fmt.Errorf("adapters: %s: the room ended before the conversation began: %w", adapterName, err)
	}
	c.mu.Lock()
	agent := c.agent
	c.mu.Unlock()
	c.logf("%s: joined room %s as %s in %v; agent %s joined and subscribed %v later", adapterName, c.room.Name(), st.Identity,
		joinTook.Round(time.Millisecond), agent, (time.Since(t0) - joinTook).Round(time.Millisecond))
	return nil
}

// apiToken returns a token for the server API with the video grant g.
func (c *conn) apiHeader(g *auth.VideoGrant) (http.Header, error) {
	at := auth.NewAccessToken(c.st.APIKey, c.st.APISecret)
	at.SetVideoGrant(g).SetValidFor(time.Minute)
	jwt, err := at.ToJWT()
	if err != nil {
		return nil, err
	}
	c.scrub.Add(jwt)
	return http.Header{"Authorization": {"Bearer " + jwt}}, nil
}

// dispatch creates the explicit dispatch of the named agent.
func (c *conn) dispatch(ctx context.Context) error {
	h, err := c.apiHeader(&auth.VideoGrant{RoomAdmin: true, Room: c.st.Room})
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	ctx, err = twirp.WithHTTPRequestHeaders(ctx, h)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	client := livekit.NewAgentDispatchServiceProtobufClient(c.st.httpURL, c.http)
	d, err := client.CreateDispatch(ctx, &livekit.CreateAgentDispatchRequest{AgentName: c.st.AgentName, Room: c.st.Room, Metadata: c.st.DispatchMetadata})
	if err != nil {
		return fmt.Errorf("adapters: %s: dispatching agent %q to room %q: %w", adapterName, c.st.AgentName, c.st.Room, err)
	}
	c.capture.Note("dispatch", fmt.Sprintf("agent %s dispatched to room %s (dispatch %s)", c.st.AgentName, c.st.Room, d.GetId()))
	return nil
}

// deleteRoom deletes the room the conn created.
func (c *conn) deleteRoom() {
	c.mu.Lock()
	joined := c.joinedRoom
	c.mu.Unlock()
	if !joined || !c.st.createdRoom || c.st.KeepRoom || c.st.APIKey == "" {
		return
	}
	h, err := c.apiHeader(&auth.VideoGrant{RoomCreate: true})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctx, err = twirp.WithHTTPRequestHeaders(ctx, h)
	if err != nil {
		return
	}
	client := livekit.NewRoomServiceProtobufClient(c.st.httpURL, c.http)
	if _, err := client.DeleteRoom(ctx, &livekit.DeleteRoomRequest{Room: c.st.Room}); err != nil {
		var te twirp.Error
		if !errors.As(err, &te) || te.Code() != twirp.NotFound {
			c.logf("%s: deleting room %s: %v", adapterName, c.st.Room, c.scrub.String(err.Error()))
		}
	}
}

// callbacks returns the room's callbacks.
func (c *conn) callbacks() *lksdk.RoomCallback {
	return &lksdk.RoomCallback{
		OnParticipantConnected:    c.participantJoined,
		OnParticipantDisconnected: c.participantLeft,
		OnDisconnectedWithReason:  c.disconnected,
		OnLocalTrackSubscribed: func(pub *lksdk.LocalTrackPublication, _ *lksdk.LocalParticipant) {
			c.mu.Lock()
			mine := pub.SID() == c.micSID
			if mine {
				c.subscribed = true
			}
			c.mu.Unlock()
			if mine {
				c.capture.Note("subscribed", "the agent subscribed to the caller's microphone")
				c.checkReady()
			}
		},
		OnReconnecting: func() { c.logf("%s: the connection to the server dropped; the SDK is reconnecting", adapterName) },
		OnReconnected:  func() { c.logf("%s: reconnected to the server", adapterName) },
		ParticipantCallback: lksdk.ParticipantCallback{
			OnTrackSubscribed:   c.trackSubscribed,
			OnAttributesChanged: c.recv.onAttributes,
			OnDataPacket:        c.recv.onDataPacket,
			OnTranscriptionReceived: func(segs []*lksdk.TranscriptionSegment, p lksdk.Participant, _ lksdk.TrackPublication) {
				if c.st.LegacyTranscriptions {
					c.recv.onLegacyTranscription(segs, p)
				}
			},
		},
	}
}

// isAgent reports whether rp is the agent under test.
func (c *conn) isAgent(rp *lksdk.RemoteParticipant) bool {
	if rp == nil {
		return false
	}
	if c.st.AgentIdentity != "" {
		return rp.Identity() == c.st.AgentIdentity
	}
	if rp.Kind() != lksdk.ParticipantAgent {
		return false
	}
	if name, ok := rp.Attributes()[AttributeAgentName]; ok && c.st.AgentName != "" && name != c.st.AgentName {
		return false
	}
	return true
}

// agentIdentity returns the agent's identity ("" until it joins).
func (c *conn) agentIdentity() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agent
}

// isAgentNow reports whether rp is the agent: the one identified, or,
// before that, one isAgent accepts. It asks nothing of the room, whose
// lock the SDK may hold.
func (c *conn) isAgentNow(rp *lksdk.RemoteParticipant) bool {
	if rp == nil {
		return false
	}
	if a := c.agentIdentity(); a != "" {
		return rp.Identity() == a
	}
	return c.isAgent(rp)
}

// fromAgent reports whether the participant with identity id is the
// agent, as isAgentNow does. It looks the participant up in the room:
// never call it from a callback the SDK may run with the room's lock held.
func (c *conn) fromAgent(id string) bool {
	if a := c.agentIdentity(); a != "" {
		return id == a
	}
	return c.isAgent(c.room.GetParticipantByIdentity(id))
}

func (c *conn) participantJoined(rp *lksdk.RemoteParticipant) {
	if !c.isAgent(rp) {
		c.capture.Note("participant", fmt.Sprintf("%s joined (kind %d); not the agent", rp.Identity(), rp.Kind()))
		return
	}
	c.mu.Lock()
	first := c.agent == ""
	if first {
		c.agent = rp.Identity()
	}
	c.mu.Unlock()
	if !first {
		return
	}
	c.capture.Note("agent", fmt.Sprintf("agent %s joined", rp.Identity()))
	c.joinedOnce.Do(func() { close(c.joined) })
	if state, ok := rp.Attributes()[AttributeAgentState]; ok {
		c.recv.joinedAttributes(map[string]string{AttributeAgentState: state}, rp)
	}
	c.checkReady()
}

// checkReady closes ready once the agent has joined and subscribed.
func (c *conn) checkReady() {
	c.mu.Lock()
	ok := c.agent != "" && c.subscribed
	c.mu.Unlock()
	if ok {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

// trackSubscribed decodes the agent's audio tracks.
func (c *conn) trackSubscribed(track *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
	if track.Kind() != webrtc.RTPCodecTypeAudio || !c.isAgent(rp) {
		return
	}
	c.participantJoined(rp)
	remote, err := lkmedia.NewPCMRemoteTrack(track, &agentAudio{c: c}, lkmedia.WithTargetSampleRate(wireRate), lkmedia.WithTargetChannels(1),
		lkmedia.WithLogger(protologger.GetDiscardLogger()))
	if err != nil {
		c.recv.frameError(fmt.Sprintf("track %s of %s", pub.SID(), rp.Identity()), fmt.Errorf("cannot decode the agent's audio track: %w", err))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		remote.Close()
		return
	}
	c.remotes = append(c.remotes, remote)
	c.capture.Note("track", fmt.Sprintf("subscribed to %s's audio track %s (%s)", rp.Identity(), pub.SID(), track.Codec().MimeType))
}

// participantLeft is the agent's hang-up when it is the agent.
func (c *conn) participantLeft(rp *lksdk.RemoteParticipant) {
	if rp == nil || rp.Identity() != c.agentIdentity() {
		return
	}
	reason := "the agent left the room"
	if r := rp.DisconnectReason(); r != livekit.DisconnectReason_UNKNOWN_REASON {
		reason += " (" + r.String() + ")"
	}
	c.hangUp(reason)
}

// disconnected ends the conversation when the room ends it.
func (c *conn) disconnected(lksdk.DisconnectionReason) {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return
	}
	r := c.room.DisconnectReason()
	switch r {
	case livekit.DisconnectReason_ROOM_DELETED, livekit.DisconnectReason_ROOM_CLOSED:
		c.hangUp("the room was closed (" + r.String() + ")")
	case livekit.DisconnectReason_PARTICIPANT_REMOVED:
		c.hangUp("the caller was removed from the room (" + r.String() + ")")
	default:
		c.end(fmt.Errorf("the server disconnected the caller (%s)", r))
	}
}

// hangUp queues the agent's hang-up and ends the conversation.
func (c *conn) hangUp(reason string) {
	c.mu.Lock()
	if c.ended || c.closing {
		c.mu.Unlock()
		return
	}
	c.recv.flushLocked()
	c.recv.queueLocked([]voicetest.AgentEvent{{Kind: voicetest.AgentHangUp, Text: reason}}, nil)
	// Nothing is queued after the hang-up, whatever the room's
	// goroutines deliver before end (below) ends the conversation.
	c.recv.stopLocked()
	c.mu.Unlock()
	c.logf("%s: the agent hung up: %s", adapterName, reason)
	c.end(nil)
}

// end ends the conversation: Recv returns a *TransportClosedError with
// cause after what is queued, and the caller leaves the room.
func (c *conn) end(cause error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.endCause = true, cause
	closing := c.closing
	if !closing {
		// Added under c.mu, where Close sets closing before it waits:
		// the goroutine below is one Close waits for.
		c.wg.Add(1)
	}
	c.recv.stopLocked()
	c.mu.Unlock()
	tc := &voicetest.TransportClosedError{Adapter: adapterName, Err: cause}
	if cause != nil && !closing {
		c.logf("%s: %v", adapterName, c.scrub.String(tc.Error()))
	}
	c.capture.Note("close", c.scrub.String(tc.Error()))
	c.q.finish(wire.ScrubError(c.scrub, tc))
	if !closing {
		// Leave the room off the SDK's goroutine that reported the end.
		go func() {
			defer c.wg.Done()
			c.room.Disconnect()
		}()
	}
}

// kill ends the conversation for a bound the agent broke.
func (c *conn) kill(le *voicetest.LimitError) { c.end(le) }

// overflowed ends the conversation: the runner did not read and the
// inbox passed MaxQueueBytes. Close reports it, so the limit hit is never
// silent even when nothing read it from Recv (as wire.Conn does).
func (c *conn) overflowed() {
	le := &voicetest.LimitError{What: "the agent's events queued by the " + adapterName + " adapter while the runner was not reading",
		Limit: c.st.MaxQueueBytes, Unit: "bytes", Name: "livekit.Agent.MaxQueueBytes", Setting: "livekit.Agent.MaxQueueBytes"}
	c.mu.Lock()
	if !c.ended && c.limit == nil {
		c.limit = le
	}
	c.mu.Unlock()
	c.kill(le)
}

// Capabilities reports what the adapter supports.
func (c *conn) Capabilities() voicetest.Capabilities { return c.caps }

// sendable returns why nothing can be sent now, or nil.
func (c *conn) sendable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errClosed}
	case c.ended:
		return wire.ScrubError(c.scrub, &voicetest.TransportClosedError{Adapter: adapterName, Err: c.endCause})
	}
	return nil
}

// SendAudio writes the user's speech to the microphone track, paced as
// it plays out.
func (c *conn) SendAudio(ctx context.Context, chunk pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, chunk.Rate, c.rate); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendable(ctx); err != nil {
		return err
	}
	return c.write(ctx, c.up.Process(chunk.Samples))
}

// write queues samples at the wire rate on the microphone and waits until
// what is queued is at most sendLead ahead. When the track is idle, the
// start of an utterance is held back until cushion of it has arrived.
// Call with sendMu held.
func (c *conn) write(ctx context.Context, samples []int16) error {
	if len(samples) == 0 {
		return nil
	}
	if c.capt {
		c.capture.Frame("send", websocket.MessageBinary, pcm.EncodePCM16(nil, samples))
	}
	now := time.Now()
	if c.playEnd.Before(now) {
		c.held = append(c.held, samples...)
		if len(c.held) < pcm.SamplesFor(wireRate, cushion) {
			return nil
		}
		samples, c.held = c.held, nil
	}
	return c.play(ctx, samples, now)
}

// play writes samples to the microphone track, paced. Call with sendMu
// held.
func (c *conn) play(ctx context.Context, samples []int16, now time.Time) error {
	if len(samples) == 0 {
		return nil
	}
	if err := c.mic.WriteSample(media.PCM16Sample(samples)); err != nil {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: err}
	}
	c.stats.FrameOut(2 * len(samples))
	if c.playEnd.Before(now) {
		c.playEnd = now
	}
	c.playEnd = c.playEnd.Add(pcm.DurationOf(len(samples), wireRate))
	return c.sleepUntil(ctx, c.playEnd.Add(-sendLead))
}

// sleepUntil waits until t, ctx is done or the conversation ends.
func (c *conn) sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errClosed}
	}
}

// EndUtterance sends the resampler's tail and waits until the utterance
// has left the track; the agent detects the end of speech itself.
func (c *conn) EndUtterance(ctx context.Context) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendable(ctx); err != nil {
		return err
	}
	if err := c.write(ctx, c.up.Flush()); err != nil {
		return err
	}
	held := c.held
	c.held = nil
	if err := c.play(ctx, held, time.Now()); err != nil {
		return err
	}
	return c.sleepUntil(ctx, c.playEnd)
}

// SendText sends a text message on the lk.chat topic.
func (c *conn) SendText(ctx context.Context, text string) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendable(ctx); err != nil {
		return err
	}
	if text == "" {
		return fmt.Errorf("adapters: %s: SendText with no text", adapterName)
	}
	c.capture.Frame("send", websocket.MessageText, jsonLine(map[string]any{"type": "text_stream", "topic": TopicChat, "to": c.agentIdentity(), "text": text}))
	if err := c.publishText(TopicChat, text, c.agentIdentity()); err != nil {
		return wire.ScrubError(c.scrub, &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("sending text on %s: %w", TopicChat, err)})
	}
	return nil
}

// packet is a DataPacket the SDK publishes as it is.
type packet struct{ p *livekit.DataPacket }

func (p packet) ToProto() *livekit.DataPacket { return p.p }

// publishText sends text as one text stream to the participant to: its
// header, its chunks (at most lksdk.STREAM_CHUNK_SIZE bytes, cut between
// runes) and its trailer, each a reliable data packet. The SDK's own
// stream writers are not used: their writing goroutine waits forever for
// a data channel that closed under it.
func (c *conn) publishText(topic, text, to string) error {
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	streamID := "VT_" + hex.EncodeToString(id)
	size := uint64(len(text))
	send := func(p *livekit.DataPacket) error {
		return c.room.LocalParticipant.PublishDataPacket(packet{p}, lksdk.WithDataPublishReliable(true), lksdk.WithDataPublishDestination([]string{to}))
	}
	err := send(&livekit.DataPacket{Value: &livekit.DataPacket_StreamHeader{StreamHeader: &livekit.DataStream_Header{
		StreamId: streamID, Timestamp: time.Now().UnixMilli(), Topic: topic, MimeType: "text/plain", TotalLength: &size,
		ContentHeader: &livekit.DataStream_Header_TextHeader{TextHeader: &livekit.DataStream_TextHeader{OperationType: livekit.DataStream_CREATE}},
	}}})
	for i := uint64(0); err == nil && text != ""; i++ {
		n := min(len(text), lksdk.STREAM_CHUNK_SIZE)
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n--
		}
		err = send(&livekit.DataPacket{Value: &livekit.DataPacket_StreamChunk{StreamChunk: &livekit.DataStream_Chunk{StreamId: streamID, ChunkIndex: i, Content: []byte(text[:n])}}})
		text = text[n:]
	}
	if err == nil {
		err = send(&livekit.DataPacket{Value: &livekit.DataPacket_StreamTrailer{StreamTrailer: &livekit.DataStream_Trailer{StreamId: streamID}}})
	}
	if err == nil {
		c.stats.FrameOut(int(size))
	}
	return err
}

// dtmfCodes are the RFC 4733 event codes of the DTMF keys.
var dtmfCodes = map[rune]uint32{'*': 10, '#': 11, 'A': 12, 'B': 13, 'C': 14, 'D': 15}

// SendDTMF publishes one SIP DTMF data packet per key.
func (c *conn) SendDTMF(ctx context.Context, digits string) error {
	if err := wire.CheckDTMF(digits); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendable(ctx); err != nil {
		return err
	}
	for _, d := range digits {
		code, ok := dtmfCodes[d]
		if !ok {
			code = uint32(d - '0')
		}
		c.capture.Frame("send", websocket.MessageText, jsonLine(map[string]any{"type": "sip_dtmf", "code": code, "digit": string(d)}))
		if err := c.room.LocalParticipant.PublishDTMF(code, string(d)); err != nil {
			return wire.ScrubError(c.scrub, &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("publishing DTMF %q: %w", d, err)})
		}
		c.stats.FrameOut(1)
	}
	return nil
}

// Interrupt is unsupported: LiveKit has no message that stops an agent.
func (c *conn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
		Alternative: "LiveKit has no message that stops an agent's speech: barge in by speaking over it (voicetest.Interrupt sends the user's speech, which the agent's VAD hears)"}
}

// WireStats reports what crossed the room (voicetest.WireStatsReporter):
// as frames, the caller's microphone writes, text streams and DTMF
// packets out, and the agent's decoded audio frames, state changes, text
// and byte streams and data packets in; the agent's audio_playback_clear
// messages as clears, and its audio after the conversation ended as
// dropped.
func (c *conn) WireStats() voicetest.WireStats { return c.stats.Snapshot(adapterName) }

// Recv returns the agent's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.q.take(ctx) }

// Close leaves the room, deletes it if the adapter made it, and waits for
// the adapter's goroutines. It returns an error only when the agent went
// past MaxQueueBytes (the *voicetest.LimitError that also ended the
// conversation), every time it is called: a limit hit is never silent.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.recv.stopLocked()
		remotes := c.remotes
		c.remotes = nil
		c.mu.Unlock()
		close(c.done)
		if c.room != nil {
			c.room.Disconnect()
		}
		for _, r := range remotes {
			r.Close()
		}
		if c.mic != nil {
			c.mic.Close()
		}
		c.wg.Wait()
		c.deleteRoom()
		c.http.CloseIdleConnections()
		c.end(nil)
		c.capture.Note("closed", "closed by voicetest")
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit != nil {
		return c.limit
	}
	return nil
}

// abort releases what a failed Connect holds.
func (c *conn) abort() {
	_ = c.Close()
}

// agentAudio receives the decoded audio of one of the agent's tracks,
// from the one goroutine that decodes it.
type agentAudio struct {
	c       *conn
	decoded int // samples decoded so far, up to the end of warmUp
}

// WriteSample takes a decoded frame: within the track's warmUp, up to
// warmUpPeak is silence (the decoder's start), after it up to
// silencePeak.
func (a *agentAudio) WriteSample(s media.PCM16Sample) error {
	peak := int16(silencePeak)
	if n := pcm.SamplesFor(wireRate, warmUp); a.decoded < n {
		peak = warmUpPeak
		a.decoded = min(n, a.decoded+len(s))
	}
	a.c.recv.onAudio(wireRate, s, peak)
	return nil
}

func (a *agentAudio) Close() error { return nil }
