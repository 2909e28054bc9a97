package livekit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/livekit/media-sdk"
	"github.com/livekit/protocol/livekit"
	lkagent "github.com/livekit/protocol/livekit/agent"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Bounds of the receiver's bookkeeping.
const (
	// maxOpenStreams bounds the text and byte streams open at once.
	maxOpenStreams = 256
	// maxRemembered bounds the segment ids and tool call ids remembered
	// to drop duplicates; past it the oldest are forgotten.
	maxRemembered = 4096
	// silencePeak is the largest sample of a decoded frame taken as
	// digital silence (Opus decodes silence to ±3 once its decoder has
	// settled).
	silencePeak = 16
	// warmUp is the start of each agent track's decoded audio in which
	// warmUpPeak replaces silencePeak. The caller's decoder is new when
	// it subscribes to a track that the agent has been sending on for a
	// while (silence, in the SDKs, from the moment it is published):
	// joining the encoder's stream mid-way, it decodes that silence as a
	// decaying noise for its first two 10 ms frames, peaks of 11 to 33
	// (TestTrackStartIsNotSpeech measures them, and they vary from run
	// to run: 23 to 27 in 20 quiet runs, 33 once under load; 16 and 19
	// were seen through a real livekit-server) where a settled decoder
	// gives ±3. Taken for speech, that noise made the agent speak before
	// the caller said anything. warmUpPeak keeps a factor 2 over the
	// loudest start seen. Speech is far louder than warmUpPeak (-51
	// dBFS): a reply that starts with the track loses nothing audible
	// (TestQuietSpeechIsSpeech: speech peaking at -40 dBFS).
	warmUp     = 40 * time.Millisecond
	warmUpPeak = 96
	// turnEndQuiet is how long the agent's audio must have been quiet
	// before a state change to listening ends its turn; turnEndMax bounds
	// the wait for its audio and transcript.
	turnEndQuiet = 150 * time.Millisecond
	turnEndMax   = 2 * time.Second
	// speechGap is the quiet after which the agent's audio begins a new
	// speech (speechAt) even without a turn end between (an agent that
	// reports no states).
	speechGap = 2 * time.Second
)

// The agent states of lk.agent.state.
var agentStates = map[string]bool{"initializing": true, "idle": true, "listening": true, "thinking": true, "speaking": true}

// receiver turns what the room delivers into events. Its state is
// guarded by conn.mu; the events it makes are queued under that lock, so
// they keep the order in which the room's goroutines delivered them.
type receiver struct {
	c    *conn
	down wire.Downstream

	state     string
	stopped   bool
	lastAudio time.Time
	// speechAt is when the first audio of the agent's speech in progress
	// came (zero after a turn end, or before the agent speaks): a tool
	// event that the agent made before it, but that came after it (the
	// data channel lags the audio track), is marked BeforeSpeech.
	speechAt time.Time
	// offset estimates the agent's clock against ours: the least delay
	// from a session event's created_at to its arrival (the agent's clock
	// offset plus the data channel's least lag), over the session events
	// so far; haveOffset reports one has been seen.
	offset     time.Duration
	haveOffset bool
	// A turn end waits for the agent's audio to go quiet and its
	// transcript streams to close, at most until endBy.
	endPending bool
	endBy      time.Time
	endTimer   *time.Timer

	agentStreams int                 // open lk.transcription streams of the agent
	segments     map[string]*segment // the agent's open transcript segments
	finals       *seen               // segments whose final text was queued
	calls        *seen               // tool call ids reported
	results      *seen               // tool result ids reported
	unknown      map[string]bool     // logged-once keys
}

// segment is the text of one transcript segment received so far.
type segment struct {
	text    strings.Builder
	streams int
}

func newReceiver(c *conn) *receiver {
	return &receiver{
		c:        c,
		down:     wire.Downstream{Rate: c.rate},
		segments: map[string]*segment{},
		finals:   newSeen(),
		calls:    newSeen(),
		results:  newSeen(),
		unknown:  map[string]bool{},
	}
}

// seen is a bounded set of ids.
type seen struct{ m map[string]bool }

func newSeen() *seen { return &seen{m: map[string]bool{}} }

// add adds id and reports whether it was new.
func (s *seen) add(id string) bool {
	if id == "" {
		return true
	}
	if s.m[id] {
		return false
	}
	if len(s.m) >= maxRemembered {
		clear(s.m)
	}
	s.m[id] = true
	return true
}

// queueLocked scrubs and queues events and an error, and reports whether
// the inbox overflowed. Call with c.mu held; after unlocking, call
// c.overflowed if it did.
func (r *receiver) queueLocked(evs []voicetest.AgentEvent, err error) bool {
	if r.stopped || r.c.ended {
		return false
	}
	es := make([]entry, 0, len(evs)+1)
	for i := range evs {
		wire.ScrubEvent(r.c.scrub, &evs[i])
		es = append(es, entry{ev: evs[i]})
	}
	if err != nil {
		es = append(es, entry{err: err})
	}
	if len(es) == 0 {
		return false
	}
	return !r.c.q.add(es...)
}

// deliver queues events and an error, ending the conversation on
// overflow. Call without c.mu.
func (r *receiver) deliver(evs []voicetest.AgentEvent, err error) {
	r.c.mu.Lock()
	over := r.queueLocked(evs, err)
	r.c.mu.Unlock()
	if over {
		r.c.overflowed()
	}
}

// frameError queues a *wire.FrameError about the message described by
// frame.
func (r *receiver) frameError(frame string, err error) {
	r.deliver(nil, &wire.FrameError{Adapter: adapterName, Frame: wire.Excerpt([]byte(r.c.scrub.String(frame))), Err: wire.ScrubError(r.c.scrub, err)})
}

// stopLocked stops the receiver: nothing more is queued. Call with c.mu
// held.
func (r *receiver) stopLocked() {
	r.stopped = true
	if r.endTimer != nil {
		r.endTimer.Stop()
	}
}

// flushLocked queues what is pending before a hang-up: the resampler's
// tail and a pending turn end. Call with c.mu held.
func (r *receiver) flushLocked() {
	if r.endPending {
		r.endTurnLocked()
		return
	}
	r.queueLocked(r.down.Flush(nil), nil)
}

// onAudio takes decoded agent audio at rate; a frame whose samples are
// all within ±peak is silence.
func (r *receiver) onAudio(rate int, s media.PCM16Sample, peak int16) {
	c := r.c
	c.stats.FrameIn(2 * len(s))
	if silent(s, peak) {
		return
	}
	samples := append([]int16(nil), s...)
	c.mu.Lock()
	if r.stopped {
		c.mu.Unlock()
		c.stats.Dropped(1)
		return
	}
	if c.capt {
		c.capture.Frame("recv", websocket.MessageBinary, pcm.EncodePCM16(nil, samples))
	}
	r.heardLocked(time.Now())
	evs, err := r.down.Append(nil, rate, samples)
	over := r.queueLocked(evs, err)
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
}

// heardLocked notes agent audio that came at now: the start of a speech
// when none is in progress. Call with c.mu held.
func (r *receiver) heardLocked(now time.Time) {
	if r.speechAt.IsZero() || now.Sub(r.lastAudio) >= speechGap {
		r.speechAt = now
	}
	r.lastAudio = now
}

// silent reports whether a decoded frame is silence: no sample beyond
// ±peak.
func silent(s []int16, peak int16) bool {
	for _, v := range s {
		if v > peak || v < -peak {
			return false
		}
	}
	return true
}

// onAttributes follows the agent's lk.agent.state.
func (r *receiver) onAttributes(changed map[string]string, p lksdk.Participant) {
	r.attributes(changed, p, false)
}

// joinedAttributes takes the agent's lk.agent.state as it was when the
// agent joined (the participant's attributes, read when the SDK reported
// the join). The SDK reports a join from a goroutine of its own and the
// attribute changes after it in order, so a change may come first: the
// state read at the join is then older than the one already followed,
// and is ignored (it made "listening → initializing" out of
// "initializing → listening" when the agent joined slowly, under load).
func (r *receiver) joinedAttributes(changed map[string]string, p lksdk.Participant) {
	r.attributes(changed, p, true)
}

// attributes is onAttributes, or with joined joinedAttributes.
func (r *receiver) attributes(changed map[string]string, p lksdk.Participant, joined bool) {
	c := r.c
	// The SDK may call this with the room's lock held: ask rp, not the
	// room.
	rp, ok := p.(*lksdk.RemoteParticipant)
	if !ok || !c.isAgentNow(rp) {
		return
	}
	c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "attributes", "from": rp.Identity(), "changed": changed}))
	n := 0
	for k, v := range changed {
		n += len(k) + len(v)
	}
	c.stats.FrameIn(n)
	state, ok := changed[AttributeAgentState]
	if !ok || state == "" {
		return
	}
	if !agentStates[state] {
		r.frameError(fmt.Sprintf("%s=%s", AttributeAgentState, state), fmt.Errorf("unknown agent state %q; LiveKit Agents use initializing, idle, listening, thinking and speaking", state))
		return
	}
	r.agentState(state, joined)
}

// agentState follows a valid lk.agent.state: an agent_log line for the
// change, and the turn's end when the agent goes back to listening. With
// joined, state is the one read when the agent joined, and is ignored if
// a state came already (see joinedAttributes).
func (r *receiver) agentState(state string, joined bool) {
	c := r.c
	c.mu.Lock()
	if r.stopped {
		c.mu.Unlock()
		return
	}
	old := r.state
	if old == state || (joined && old != "") {
		c.mu.Unlock()
		return
	}
	r.state = state
	over := false
	if r.endPending {
		// A new state: the turn that was ending is over now.
		over = r.endTurnLocked()
	}
	from := old
	if from == "" {
		from = "(none)"
	}
	over = r.queueLocked([]voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: fmt.Sprintf("agent state: %s → %s", from, state)}}, nil) || over
	if !c.st.NoAgentState && (state == "listening" || state == "idle") && (old == "thinking" || old == "speaking") {
		r.endPending = true
		r.endBy = time.Now().Add(turnEndMax)
		r.armLocked(turnEndQuiet)
	}
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
}

// armLocked (re)starts the turn end timer. Call with c.mu held.
func (r *receiver) armLocked(d time.Duration) {
	if r.endTimer == nil {
		r.endTimer = time.AfterFunc(d, r.turnEndTimer)
		return
	}
	r.endTimer.Reset(d)
}

// turnEndTimer ends the pending turn once the agent's audio has been
// quiet for turnEndQuiet and its transcript streams have closed, or at
// endBy.
func (r *receiver) turnEndTimer() {
	c := r.c
	c.mu.Lock()
	if !r.endPending || r.stopped {
		c.mu.Unlock()
		return
	}
	now := time.Now()
	quietAt := r.lastAudio.Add(turnEndQuiet)
	if now.Before(r.endBy) && (now.Before(quietAt) || r.agentStreams > 0) {
		wait := max(time.Until(quietAt), 20*time.Millisecond)
		r.armLocked(min(wait, time.Until(r.endBy)))
		c.mu.Unlock()
		return
	}
	over := r.endTurnLocked()
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
}

// endTurnLocked queues the end of the agent's turn. Call with c.mu held.
func (r *receiver) endTurnLocked() bool {
	r.endPending = false
	r.speechAt = time.Time{}
	if r.endTimer != nil {
		r.endTimer.Stop()
	}
	evs := r.down.Flush(nil)
	evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
	return r.queueLocked(evs, nil)
}

// enterStream counts an open stream; it reports false (and ends the
// conversation) past maxOpenStreams.
func (r *receiver) enterStream() bool {
	c := r.c
	c.mu.Lock()
	c.openStreams++
	n := c.openStreams
	c.mu.Unlock()
	if n > maxOpenStreams {
		c.kill(&voicetest.LimitError{What: "the text and byte streams the agent kept open at once", Limit: maxOpenStreams, Unit: "streams", Name: "livekit.maxOpenStreams"})
		return false
	}
	return true
}

func (r *receiver) leaveStream() {
	r.c.mu.Lock()
	r.c.openStreams--
	r.c.mu.Unlock()
}

// frameLimit returns the error that ends the conversation when a message
// of the agent's is larger than MaxFrameBytes.
func (r *receiver) frameLimit(what string, n int64) *voicetest.LimitError {
	return &voicetest.LimitError{What: fmt.Sprintf("%s from the agent (at least %d bytes)", what, n),
		Limit: r.c.st.MaxFrameBytes, Unit: "bytes", Name: "livekit.Agent.MaxFrameBytes", Setting: "livekit.Agent.MaxFrameBytes"}
}

// drain reads what is left of a stream the adapter does not use, so that
// the SDK does not hold it; it stops at MaxFrameBytes.
func (r *receiver) drain(read func([]byte) (int, error), what string) {
	buf := make([]byte, 16<<10)
	var total int64
	for {
		n, err := read(buf)
		total += int64(n)
		if total > r.c.st.MaxFrameBytes {
			r.c.kill(r.frameLimit(what, total))
			return
		}
		if err != nil {
			return
		}
	}
}

// onTranscription reads one lk.transcription text stream.
func (r *receiver) onTranscription(reader *lksdk.TextStreamReader, from string) {
	if !r.enterStream() {
		return
	}
	defer r.leaveStream()
	c := r.c
	attrs := maps.Clone(reader.Info.Attributes)
	what := fmt.Sprintf("an %s text stream", TopicTranscription)
	c.mu.Lock()
	mic := c.micSID
	c.mu.Unlock()
	user := attrs[attrTranscribedTrack] == mic && mic != "" || from == c.st.Identity
	if !user && !c.fromAgent(from) {
		c.capture.Note("ignored", fmt.Sprintf("%s text stream from %s, who is not the agent", TopicTranscription, from))
		r.drain(reader.Read, what)
		return
	}
	final, hasFinal := attrs[attrFinal]
	if hasFinal && final != "true" && final != "false" {
		r.drain(reader.Read, what)
		r.frameError(string(jsonLine(map[string]any{"type": "text_stream", "topic": TopicTranscription, "from": from, "attributes": attrs})),
			fmt.Errorf("%s is %q; it must be \"true\" or \"false\"", attrFinal, final))
		return
	}
	seg := attrs[attrSegmentID]
	if seg == "" {
		seg = reader.Info.Id
	}
	// The agent's own speech: a delta stream (deltas as they come, the
	// segment's text when it closes) unless it says it is final already.
	deltas := !user && final != "true"
	if !user {
		c.mu.Lock()
		r.agentStreams++
		s := r.segments[seg]
		if s == nil {
			s = &segment{}
			r.segments[seg] = s
		}
		s.streams++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			r.agentStreams--
			if s.streams--; s.streams == 0 {
				delete(r.segments, seg)
			}
			c.mu.Unlock()
		}()
	}
	var text []byte
	sent := 0 // bytes of text queued as deltas
	buf := make([]byte, 4<<10)
	for {
		n, err := reader.Read(buf)
		text = append(text, buf[:n]...)
		if int64(len(text)) > c.st.MaxFrameBytes {
			c.kill(r.frameLimit(what, int64(len(text))))
			return
		}
		if deltas && n > 0 {
			if end := validPrefix(text); end > sent {
				r.delta(seg, string(text[sent:end]))
				sent = end
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			break
		}
	}
	c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "text_stream", "topic": TopicTranscription, "from": from, "attributes": attrs, "text": string(text)}))
	c.stats.FrameIn(len(text))
	if !utf8.Valid(text) {
		r.frameError(string(jsonLine(map[string]any{"type": "text_stream", "topic": TopicTranscription, "from": from, "attributes": attrs})),
			errors.New("the stream's text is not UTF-8"))
		return
	}
	if user {
		if len(text) > 0 {
			r.deliver([]voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: string(text), Final: final == "true"}}, nil)
		}
		return
	}
	c.mu.Lock()
	whole := string(text)
	if deltas {
		whole = r.segments[seg].text.String()
	}
	var over bool
	if r.finals.add(seg) && strings.TrimSpace(whole) != "" {
		over = r.queueLocked([]voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: strings.TrimSpace(whole), Final: true}}, nil)
	}
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
}

// delta queues a delta of the agent's transcript of segment seg.
func (r *receiver) delta(seg, text string) {
	c := r.c
	c.mu.Lock()
	if s := r.segments[seg]; s != nil {
		s.text.WriteString(text)
	}
	over := r.queueLocked([]voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: text}}, nil)
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
}

// validPrefix returns the length of the longest prefix of b that does
// not end inside a UTF-8 sequence (a chunk may split one).
func validPrefix(b []byte) int {
	for cut := 0; cut < utf8.UTFMax && cut < len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return len(b) - cut
		}
	}
	return 0
}

// ignoreTranscription reads and drops an lk.transcription text stream,
// for an agent whose transcripts are read from legacy packets.
func (r *receiver) ignoreTranscription(reader *lksdk.TextStreamReader, from string) {
	if !r.enterStream() {
		return
	}
	defer r.leaveStream()
	r.drain(reader.Read, fmt.Sprintf("an %s text stream", TopicTranscription))
}

// onLegacyTranscription reads the Transcription data packets of agents
// that predate text streams: final segments of the agent become its
// transcript, segments of the caller the user's.
func (r *receiver) onLegacyTranscription(segs []*lksdk.TranscriptionSegment, p lksdk.Participant) {
	c := r.c
	if p == nil {
		return
	}
	user := p.Identity() == c.st.Identity
	rp, _ := p.(*lksdk.RemoteParticipant)
	if !user && !c.isAgentNow(rp) {
		return
	}
	var evs []voicetest.AgentEvent
	var bad error
	c.mu.Lock()
	for _, s := range segs {
		c.stats.FrameIn(len(s.Text))
		c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "transcription", "participant": p.Identity(), "id": s.ID, "text": s.Text, "final": s.Final}))
		if s.ID == "" {
			bad = fmt.Errorf("a transcription segment with no id (text %q); segments are identified by id", s.Text)
			continue
		}
		switch {
		case user:
			evs = append(evs, voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: s.Text, Final: s.Final})
		case s.Final && r.finals.add(s.ID) && strings.TrimSpace(s.Text) != "":
			evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: strings.TrimSpace(s.Text), Final: true})
		}
	}
	over := r.queueLocked(evs, nil)
	c.mu.Unlock()
	if over {
		c.overflowed()
	}
	if bad != nil {
		r.frameError("transcription packet from "+p.Identity(), bad)
	}
}

// onDataPacket reads the agent's data packets.
func (r *receiver) onDataPacket(pkt lksdk.DataPacket, params lksdk.DataReceiveParams) {
	c := r.c
	if params.Sender != nil && !c.isAgentNow(params.Sender) || params.Sender == nil && !c.fromAgent(params.SenderIdentity) {
		return
	}
	switch p := pkt.(type) {
	case *livekit.SipDTMF:
		c.stats.FrameIn(len(p.Digit))
		c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "sip_dtmf", "from": params.SenderIdentity, "code": p.Code, "digit": p.Digit}))
		d := []rune(p.Digit)
		if len(d) != 1 || !wire.ValidDTMF(d[0]) {
			r.frameError(fmt.Sprintf("sip_dtmf code %d digit %q", p.Code, p.Digit), fmt.Errorf("%q is not a DTMF key; SIP DTMF packets carry one of 0-9, *, # or A-D", p.Digit))
			return
		}
		data, _ := json.Marshal(map[string]any{"digit": p.Digit, "code": p.Code})
		r.deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "dtmf", Data: data}}, nil)
	case *lksdk.UserDataPacket:
		c.stats.FrameIn(len(p.Payload))
		if int64(len(p.Payload)) > c.st.MaxFrameBytes {
			c.kill(r.frameLimit("a data packet", int64(len(p.Payload))))
			return
		}
		c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "data", "from": params.SenderIdentity, "topic": p.Topic, "payload": string(p.Payload)}))
		data := json.RawMessage(p.Payload)
		if !json.Valid(data) {
			data, _ = json.Marshal(string(p.Payload))
		}
		name := p.Topic
		if name == "" {
			name = "data"
		}
		r.deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: name, Data: append(json.RawMessage(nil), data...)}}, nil)
	case *livekit.ChatMessage:
		c.stats.FrameIn(len(p.Message))
		c.capture.Frame("recv", websocket.MessageText, jsonLine(map[string]any{"type": "chat", "from": params.SenderIdentity, "message": p.Message}))
		data, _ := json.Marshal(map[string]any{"message": p.Message})
		r.deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "chat", Data: data}}, nil)
	}
}

// onSession reads one lk.agent.session byte stream: one message of the
// agent session protocol.
func (r *receiver) onSession(reader *lksdk.ByteStreamReader, from string) {
	if !r.enterStream() {
		return
	}
	defer r.leaveStream()
	c := r.c
	arrived := time.Now() // the stream's header, the message's earliest sign
	what := "an " + TopicSession + " message"
	if !c.fromAgent(from) {
		c.capture.Note("ignored", fmt.Sprintf("%s byte stream from %s, who is not the agent", TopicSession, from))
		r.drain(reader.Read, what)
		return
	}
	var data []byte
	buf := make([]byte, 16<<10)
	for {
		n, err := reader.Read(buf)
		data = append(data, buf[:n]...)
		if int64(len(data)) > c.st.MaxFrameBytes {
			c.kill(r.frameLimit(what, int64(len(data))))
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			break
		}
	}
	c.stats.FrameIn(len(data))
	var msg lkagent.AgentSessionMessage
	if err := proto.Unmarshal(data, &msg); err != nil {
		c.capture.Frame("recv", websocket.MessageBinary, data)
		r.frameError(string(data), fmt.Errorf("%s is not an AgentSessionMessage: %w", what, err))
		return
	}
	if c.capt {
		if b, err := protojson.Marshal(&msg); err == nil {
			c.capture.Frame("recv", websocket.MessageText, compact(b))
		}
	}
	evs, err := r.session(&msg, arrived)
	if errors.Is(err, errOverflow) {
		c.overflowed()
		return
	}
	if err != nil {
		b, _ := protojson.Marshal(&msg)
		r.deliver(evs, &wire.FrameError{Adapter: adapterName, Frame: wire.Excerpt(c.scrub.Bytes(b)), Err: err})
		return
	}
	r.deliver(evs, nil)
}

// session turns a session message into events.
// arrived is when its stream began to arrive.
func (r *receiver) session(msg *lkagent.AgentSessionMessage, arrived time.Time) ([]voicetest.AgentEvent, error) {
	switch m := msg.Message.(type) {
	case *lkagent.AgentSessionMessage_Event:
		return r.sessionEvent(m.Event, arrived), nil
	case *lkagent.AgentSessionMessage_AudioOutput:
		return r.sessionAudio(m.AudioOutput)
	case *lkagent.AgentSessionMessage_AudioPlaybackClear:
		r.c.stats.Clear()
		return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted, Text: "the agent cleared its audio playback"}}, nil
	}
	return nil, nil
}

// sessionAudio decodes the session protocol's audio frame.
func (r *receiver) sessionAudio(f *lkagent.AgentSessionMessage_ConsoleIO_AudioFrame) ([]voicetest.AgentEvent, error) {
	rate := int(f.GetSampleRate())
	if err := wire.CheckRate("", "the sample_rate of an audio_output frame", rate, wire.StandardRates(), ""); err != nil {
		return nil, err
	}
	if f.GetNumChannels() != 1 {
		return nil, fmt.Errorf("an audio_output frame of %d channels; voicetest takes mono agent audio", f.GetNumChannels())
	}
	samples, err := pcm.DecodePCM16(nil, f.GetData())
	if err != nil {
		return nil, fmt.Errorf("%d bytes of audio_output: %w (PCM16 has 2 bytes a sample)", len(f.GetData()), err)
	}
	if n := f.GetSamplesPerChannel(); n != 0 && int(n) != len(samples) {
		return nil, fmt.Errorf("an audio_output frame says %d samples but holds %d", n, len(samples))
	}
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	r.heardLocked(time.Now())
	// Queued here, under the lock, so that it is ordered with the track's
	// audio through the one resampler.
	evs, err := r.down.Append(nil, rate, samples)
	if err != nil {
		return nil, err
	}
	if r.queueLocked(evs, nil) {
		return nil, errOverflow
	}
	return nil, nil
}

// errOverflow reports that queueing overflowed the inbox.
var errOverflow = errors.New("the inbox overflowed")

// sessionEvent turns an AgentSessionEvent, whose stream began to arrive
// at arrived, into events.
//
// LiveKit Agents send each session event as a byte stream of its own on
// the data channel (agents-js 1.9.0 voice/remote_session.js), the speech
// on the audio track: nothing orders the two, and the SDK reads each
// stream in a goroutine of its own. A tool turn's function_tools_executed
// is made before the reply is generated, yet may come after the reply's
// first audio. Such a tool event is marked BeforeSpeech, so that the
// runner records it ahead of the reply's message, at the speech's start;
// nothing is held back, and the speech keeps the time it came. The
// evidence is the agent's own: the event's created_at, put on our clock
// by offset, is before the first audio of the speech in progress came.
func (r *receiver) sessionEvent(ev *lkagent.AgentSessionEvent, arrived time.Time) []voicetest.AgentEvent {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	evs := r.sessionEventLocked(ev)
	if r.madeBeforeSpeechLocked(ev, arrived) {
		for i := range evs {
			switch evs[i].Kind {
			case voicetest.AgentToolCall, voicetest.AgentToolResult:
				evs[i].BeforeSpeech = true
			}
		}
	}
	return evs
}

// madeBeforeSpeechLocked reports whether the agent made ev, which
// arrived at arrived, before the first audio of its speech in progress
// came (see sessionEvent), and learns the offset of the agent's clock
// from it. Call with c.mu held.
func (r *receiver) madeBeforeSpeechLocked(ev *lkagent.AgentSessionEvent, arrived time.Time) bool {
	ts := ev.GetCreatedAt()
	if ts == nil || !ts.IsValid() || ts.GetSeconds() == 0 && ts.GetNanos() == 0 {
		return false
	}
	created := ts.AsTime()
	if d := arrived.Round(0).Sub(created); !r.haveOffset || d < r.offset {
		r.offset, r.haveOffset = d, true
	}
	return !r.speechAt.IsZero() && arrived.After(r.speechAt) && created.Add(r.offset).Before(r.speechAt.Round(0))
}

// sessionEventLocked turns an AgentSessionEvent into events. Call with
// c.mu held.
func (r *receiver) sessionEventLocked(ev *lkagent.AgentSessionEvent) []voicetest.AgentEvent {
	switch e := ev.GetEvent().(type) {
	case *lkagent.AgentSessionEvent_FunctionToolsStarted_:
		return r.toolCallsLocked(nil, e.FunctionToolsStarted.GetFunctionCalls())
	case *lkagent.AgentSessionEvent_FunctionToolsExecuted_:
		evs := r.toolCallsLocked(nil, e.FunctionToolsExecuted.GetFunctionCalls())
		return r.toolResultsLocked(evs, e.FunctionToolsExecuted.GetFunctionCallOutputs())
	case *lkagent.AgentSessionEvent_ConversationItemAdded_:
		return r.itemLocked(e.ConversationItemAdded.GetItem())
	case *lkagent.AgentSessionEvent_Error_:
		return []voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: "agent error: " + e.Error.GetMessage()}}
	case *lkagent.AgentSessionEvent_OverlappingSpeech_:
		return []voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: fmt.Sprintf("agent heard overlapping speech (interruption: %t)", e.OverlappingSpeech.GetIsInterruption())}}
	case *lkagent.AgentSessionEvent_AgentFalseInterruption_:
		return []voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: fmt.Sprintf("agent false interruption (resumed: %t)", e.AgentFalseInterruption.GetResumed())}}
	}
	return nil
}

// itemLocked turns a conversation item into events.
func (r *receiver) itemLocked(item *lkagent.ChatContext_ChatItem) []voicetest.AgentEvent {
	switch it := item.GetItem().(type) {
	case *lkagent.ChatContext_ChatItem_Message:
		if m := it.Message; m.GetRole() == lkagent.ChatRole_ASSISTANT && m.GetInterrupted() {
			return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted, Text: "the agent's reply was interrupted"}}
		}
	case *lkagent.ChatContext_ChatItem_FunctionCall:
		return r.toolCallsLocked(nil, []*lkagent.FunctionCall{it.FunctionCall})
	case *lkagent.ChatContext_ChatItem_FunctionCallOutput:
		return r.toolResultsLocked(nil, []*lkagent.FunctionCallOutput{it.FunctionCallOutput})
	case *lkagent.ChatContext_ChatItem_AgentHandoff:
		h := it.AgentHandoff
		return []voicetest.AgentEvent{voicetest.HandoffEvent(h.GetOldAgentId(), h.GetNewAgentId())}
	}
	return nil
}

// toolCallsLocked appends the calls not reported yet.
func (r *receiver) toolCallsLocked(evs []voicetest.AgentEvent, calls []*lkagent.FunctionCall) []voicetest.AgentEvent {
	for _, fc := range calls {
		if fc == nil || !r.calls.add(fc.GetCallId()) {
			continue
		}
		args, _ := wire.ToolArguments(fc.GetArguments())
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &voicetest.ToolCall{ID: fc.GetCallId(), Name: fc.GetName(), Arguments: args}})
	}
	return evs
}

// toolResultsLocked appends the results not reported yet.
func (r *receiver) toolResultsLocked(evs []voicetest.AgentEvent, outs []*lkagent.FunctionCallOutput) []voicetest.AgentEvent {
	for _, o := range outs {
		if o == nil || !r.results.add(o.GetCallId()) {
			continue
		}
		res := json.RawMessage(o.GetOutput())
		if !json.Valid(res) {
			res, _ = json.Marshal(o.GetOutput())
		}
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &voicetest.ToolCall{ID: o.GetCallId(), Name: o.GetName(), Result: append(json.RawMessage(nil), res...), IsError: o.GetIsError()}})
	}
	return evs
}

// jsonLine returns v as one line of JSON, for captures and frame errors.
func jsonLine(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// compact returns JSON b on one line.
func compact(b []byte) []byte {
	var out strings.Builder
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return []byte(strings.TrimSpace(out.String()))
}
