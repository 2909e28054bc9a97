package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
)

func (r *runner) askUser(ctx context.Context) (Utterance, error) {
	if r.cfg.User == nil {
		return Utterance{}, errors.New("Config.User is nil: UserTurn and Proceed ask the User for the next utterance; set Config.User (e.g. a personas.Scripted) or use UserSays")
	}
	if err := r.settle(ctx); err != nil {
		return Utterance{}, err
	}
	var u Utterance
	st := r.snapshot()
	err := r.call(ctx, r.engine("Config.User", PhaseUser), func(ctx context.Context) (err error) {
		u, err = r.cfg.User.NextUtterance(ctx, st)
		return err
	})
	if err != nil {
		return Utterance{}, fmt.Errorf("asking Config.User for turn %d: %w", r.st.turn+1, err)
	}
	return u, nil
}

// userTurn says u. interrupt marks a barge-in, which does not wait for the
// agent.
func (r *runner) userTurn(ctx context.Context, u Utterance, interrupt bool) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if u.Done {
		r.userHangsUp("the user has nothing more to say")
		return nil
	}
	if u.Wait > 0 {
		w := min(u.Wait, r.cfg.Timeouts.FirstChunk)
		if err := r.waitUntil(ctx, r.now()+w); err != nil {
			return err
		}
	}
	if strings.TrimSpace(u.Text) != "" || !u.Audio.IsEmpty() {
		if err := r.say(ctx, u); err != nil {
			return err
		}
	}
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if u.HangUp {
		r.userHangsUp("")
	}
	return nil
}

// say sends one user utterance and records it.
func (r *runner) say(ctx context.Context, u Utterance) error {
	if err := r.dropSilentTurnEnd(); err != nil {
		return err
	}
	// What the agent sends up to this instant is stamped as sent before
	// the utterance (receive), whatever the scheduler did.
	r.catchUp()
	r.userSpeaking = true
	defer func() { r.userSpeaking = false }()
	if r.said != nil {
		r.said.Add(1)
	}
	r.st.turn++
	turn := r.st.turn
	var start, end time.Duration
	var audio segmentAudio
	switch {
	case r.caps.Audio:
		speech, err := r.userSpeech(ctx, u)
		if err != nil {
			return err
		}
		start = r.now()
		r.addEvent(Event{At: start, Type: EventUserStartSpeaking, Turn: turn, Role: RoleUser})
		sent, err := r.sendFrames(ctx, speech.frames(), speech.duration())
		if err != nil {
			return err
		}
		// An agent that hung up heard only what was sent.
		audio = speech.upTo(sent)
		// The user stopped speaking when the last frame went out; latency
		// counts from there, not from when the adapter's end-of-utterance
		// message (a commit, a mark) has been written, which a fast agent
		// may answer before.
		end = r.now()
		if err := r.endUtterance(ctx); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("ending the user's utterance", err)
		}
	case r.caps.Text:
		if strings.TrimSpace(u.Text) == "" && !u.Audio.IsEmpty() {
			// A recording without its text: a text agent is sent what
			// the user STT hears in it.
			text, _, err := r.hearUser(ctx, u.Audio)
			if err != nil {
				return err
			}
			u.Text = text
		}
		if strings.TrimSpace(u.Text) == "" {
			return &UnsupportedError{Adapter: r.adapter(), Capability: "audio input",
				Alternative: "the agent takes only text, so the utterance needs Text (a transcript of its audio)"}
		}
		words := countWords(u.Text) // as len(strings.Fields), without the slice
		dur := time.Duration(words) * time.Minute / time.Duration(r.cfg.WordsPerMinute)
		start = r.now()
		r.addEvent(Event{At: start, Type: EventUserStartSpeaking, Turn: turn, Role: RoleUser})
		if r.realTime() {
			if err := r.waitUntil(ctx, start+dur); err != nil {
				return err
			}
		}
		end = r.now()
		if !r.hungUp {
			if err := r.sendText(ctx, u.Text); err != nil && !r.hungUpAfter(ctx, err) {
				return r.sendErr("sending the user's text", err)
			}
		}
	default:
		return &UnsupportedError{Adapter: r.adapter(), Capability: "user input",
			Alternative: "the adapter declares neither Audio nor Text input; fix its Capabilities"}
	}
	if r.hungUp && r.hangUpAt >= start && r.hangUpAt < end {
		end = r.hangUpAt // the user was heard until the agent hung up
	}
	r.addEvent(Event{At: end, Type: EventUserStopSpeaking, Turn: turn, Role: RoleUser})
	r.userEnd = end
	r.awaitLatency = true
	m := Message{Turn: turn, Role: RoleUser, Text: strings.TrimSpace(u.Text), Start: start, End: end}
	if m.Text == "" && !u.Audio.IsEmpty() {
		// Recorded speech without its text: the transcript shows what
		// the user STT hears, not "(silence)".
		var err error
		if m.Text, m.AudioOnly, err = r.hearUser(ctx, u.Audio); err != nil {
			return err
		}
		m.NothingHeard = !m.AudioOnly && m.Text == ""
	}
	r.st.transcript = append(r.st.transcript, m)
	r.segs = append(r.segs, Segment{Role: RoleUser, Turn: turn, Start: start, End: end, Text: m.Text, AudioOnly: m.AudioOnly, audio: audio})
	return nil
}

// settleWait bounds how long a failed send waits for the agent's hang-up
// to arrive through Recv.
const settleWait = time.Second

// hungUpAfter reports whether a send that failed with err failed because
// the agent hung up: the hang-up event may still be on its way through
// Recv, so it waits (at most settleWait) for the receive stream to say.
func (r *runner) hungUpAfter(ctx context.Context, err error) bool {
	if r.hungUp {
		return true
	}
	if !errors.Is(err, ErrTransportClosed) {
		return false
	}
	until := r.now() + settleWait
	_ = r.pump(ctx, func() bool { return r.hungUp || r.streamClosed }, func() time.Duration { return until })
	return r.hungUp
}

func (r *runner) sendErr(what string, err error) error {
	if errors.Is(err, ErrTransportClosed) {
		return fmt.Errorf("%s: the %s connection closed without a hang-up (turn %d): %w", what, r.adapter(), r.st.turn, err)
	}
	return fmt.Errorf("%s to the %s adapter (turn %d): %w", what, r.adapter(), r.st.turn, err)
}

// pieceTTS is implemented by a TTS of this module whose speech is made
// of shared, immutable pieces (fixtures.ToneTTS: each word's audio, the
// same samples for every word of that pitch). SynthesizePieces returns
// Synthesize's speech as those pieces, in order, which no one may modify:
// the runner sends them and keeps them in the Result as they are, instead
// of a copy laid out one after another (issue 21). See internal/inproc:
// no TTS of another module can implement it.
type pieceTTS interface {
	SynthesizePieces(ctx context.Context, tok inproc.Token, req SpeechRequest) ([]pcm.Chunk, error)
}

// userSpeech is the user's audio for one utterance: one chunk (whole), or
// a pieceTTS's pieces (rate, n samples in all), each a whole number of
// FrameDuration frames but the last, so that their frames are the frames
// of the pieces laid out.
type userSpeech struct {
	whole  pcm.Chunk
	pieces []pcm.Chunk
	rate   int
	n      int
}

// frames returns the speech in FrameDuration frames (Chunk.Frames of the
// whole speech).
func (s userSpeech) frames() []pcm.Chunk {
	if s.pieces == nil {
		return s.whole.Frames(FrameDuration)
	}
	per := max(pcm.SamplesFor(s.rate, FrameDuration), 1)
	out := make([]pcm.Chunk, 0, (s.n+per-1)/per)
	for _, p := range s.pieces {
		for i := 0; i < len(p.Samples); i += per {
			out = append(out, pcm.Chunk{Rate: s.rate, Samples: p.Samples[i:min(i+per, len(p.Samples))]})
		}
	}
	return out
}

func (s userSpeech) duration() time.Duration {
	if s.pieces == nil {
		return s.whole.Duration()
	}
	return pcm.DurationOf(s.n, s.rate)
}

// upTo returns the speech's first sent (whole.Slice(0, sent)) as a
// segment's audio: the pieces, unless whole, are kept as they are.
func (s userSpeech) upTo(sent time.Duration) segmentAudio {
	if s.pieces == nil {
		return segmentAudio{whole: s.whole.Slice(0, sent)}
	}
	n := min(max(pcm.SamplesFor(s.rate, sent), 0), s.n)
	placed := make([]piece, 0, len(s.pieces))
	off := 0
	for _, p := range s.pieces {
		placed = append(placed, piece{at: pcm.DurationOf(off, s.rate), c: p})
		off += len(p.Samples)
	}
	return placedAudio(s.rate, n, 0, placed)
}

// userSpeech returns the audio of u (userAudio), or, when nothing would
// change the TTS's speech on its way (no effects, no background, the
// session's rate), the pieces of a pieceTTS as they are.
func (r *runner) userSpeech(ctx context.Context, u Utterance) (userSpeech, error) {
	if pt, ok := r.cfg.UserVoice.(pieceTTS); ok && u.Audio.IsEmpty() && u.Effects == nil && r.cfg.Effects == nil && !r.cfg.Background.active() {
		speech, err := r.userPieces(ctx, u, pt)
		if err != nil || speech.pieces != nil {
			return speech, err
		}
	}
	c, err := r.userAudio(ctx, u)
	return userSpeech{whole: c}, err
}

// userPieces asks pt for the pieces of u's speech; a zero userSpeech (no
// pieces) when they do not fit together into frames, for userAudio.
func (r *runner) userPieces(ctx context.Context, u Utterance, pt pieceTTS) (userSpeech, error) {
	voice := u.Voice
	if voice == "" {
		voice = r.cfg.Voice
	}
	var pieces []pcm.Chunk
	err := r.call(ctx, r.engine("Config.UserVoice", PhaseSynthesize), func(ctx context.Context) (err error) {
		pieces, err = pt.SynthesizePieces(ctx, inproc.Token{}, SpeechRequest{Text: u.Text, Voice: voice, Speed: u.Speed, Instructions: u.Instructions, Rate: r.cfg.Rate})
		return err
	})
	if err != nil {
		return userSpeech{}, fmt.Errorf("synthesising the user's text %s with Config.UserVoice: %w", quote(u.Text), err)
	}
	per := max(pcm.SamplesFor(r.cfg.Rate, FrameDuration), 1)
	n := 0
	for i, p := range pieces {
		if p.Rate != r.cfg.Rate || (i < len(pieces)-1 && len(p.Samples)%per != 0) {
			return userSpeech{}, nil // laid out by userAudio
		}
		n += len(p.Samples)
	}
	if n == 0 {
		return userSpeech{}, fmt.Errorf("Config.UserVoice returned no audio for %s", quote(u.Text))
	}
	return userSpeech{pieces: pieces, rate: r.cfg.Rate, n: n}, nil
}

// userAudio returns the audio of u: its own, or its Text through
// Config.UserVoice, with the utterance's and the Config's effects.
func (r *runner) userAudio(ctx context.Context, u Utterance) (pcm.Chunk, error) {
	c := u.Audio
	if c.IsEmpty() {
		if r.cfg.UserVoice == nil {
			return pcm.Chunk{}, fmt.Errorf("the %s agent takes audio, so the user's text %s must be spoken: set Config.UserVoice to a TTS engine (or give the utterance Audio)", r.adapter(), quote(u.Text))
		}
		voice := u.Voice
		if voice == "" {
			voice = r.cfg.Voice
		}
		err := r.call(ctx, r.engine("Config.UserVoice", PhaseSynthesize), func(ctx context.Context) (err error) {
			c, err = r.cfg.UserVoice.Synthesize(ctx, SpeechRequest{Text: u.Text, Voice: voice, Speed: u.Speed, Instructions: u.Instructions, Rate: r.cfg.Rate})
			return err
		})
		if err != nil {
			return pcm.Chunk{}, fmt.Errorf("synthesising the user's text %s with Config.UserVoice: %w", quote(u.Text), err)
		}
		if c.IsEmpty() {
			return pcm.Chunk{}, fmt.Errorf("Config.UserVoice returned no audio for %s", quote(u.Text))
		}
	}
	if err := c.Validate(); err != nil {
		return pcm.Chunk{}, fmt.Errorf("user audio for %s: %w", quote(u.Text), err)
	}
	if c.Rate != r.cfg.Rate {
		var err error
		if c, err = pcm.Resample(c, r.cfg.Rate); err != nil {
			return pcm.Chunk{}, fmt.Errorf("user audio for %s at %d Hz: %w", quote(u.Text), c.Rate, err)
		}
	}
	for _, fx := range []struct {
		name string
		f    pcm.Effect
	}{{"the utterance's Effects", u.Effects}, {"Config.Effects", r.cfg.Effects}} {
		if fx.f == nil {
			continue
		}
		in, out := c, pcm.Chunk{}
		err := r.call(ctx, r.engine(fx.name, PhaseEffects), func(context.Context) error {
			out = fx.f(in)
			return nil
		})
		if err != nil {
			return pcm.Chunk{}, fmt.Errorf("applying %s to the user's audio for %s: %w", fx.name, quote(u.Text), err)
		}
		c = out
	}
	c = r.surround(c)
	if c.Rate != r.cfg.Rate {
		return pcm.Chunk{}, fmt.Errorf("user audio effects changed the sample rate to %d Hz; effects must keep the rate (%d Hz)", c.Rate, r.cfg.Rate)
	}
	return c, nil
}

// aheadConn is implemented by a promptConn of this module that can take a
// run of user audio frames before they are due (the fixtures fakes'): it
// takes frames[0] now, as SendAudio, and each following frame as SendAudio
// would at the instant it is due (now plus the length of the frames
// before it), for as long as it would do nothing before that instant (no
// event of its own due, none sent and not yet received), and returns how
// many it took: at least one, unless it fails as SendAudio would. See
// internal/inproc: no Conn of another module can implement it.
type aheadConn interface {
	SendAudioAhead(ctx context.Context, tok inproc.Token, frames []pcm.Chunk) (int, error)
}

// ahead reports whether sendAudio may hand an aheadConn a run of frames at
// once: on virtual time (a synctest bubble, or the runner's virtual Clock)
// with real-time pacing, the conversation's time moves only when the
// runner and the agent both wait, so while the agent does nothing of its
// own and the runner has no event to handle, nothing can tell a frame
// handed early from one handed at its instant; the runner then waits
// once for the run instead of once a frame. TestAheadIsTheSameConversation
// (fixtures) compares both paths, event for event and sample for sample.
func (r *runner) ahead() (aheadConn, bool) {
	a, ok := r.conn.(aheadConn)
	if !ok || !r.prompt || !r.realTime() || !(r.bubble || r.clock.isVirtual()) {
		return nil, false
	}
	return a, true
}

// sendAudio sends c in 20 ms frames, paced as configured, handling agent
// events between frames. It returns how much was sent: all of c, unless
// the agent hung up.
func (r *runner) sendAudio(ctx context.Context, c pcm.Chunk) (time.Duration, error) {
	return r.sendFrames(ctx, c.Frames(FrameDuration), c.Duration())
}

// sendFrames is sendAudio of audio d long, in frames.
func (r *runner) sendFrames(ctx context.Context, frames []pcm.Chunk, d time.Duration) (time.Duration, error) {
	defer r.holdBackground()() // the frames carry the background scene themselves
	// An adapter that stops accepting audio must not hang the scenario:
	// the utterance must be sent within its length and FirstChunk.
	sctx, send, cancel := r.utterance(ctx, d)
	defer cancel()
	start := r.now()
	var sent time.Duration
	ahead, canAhead := r.ahead()
	for i := 0; i < len(frames); {
		f := frames[i]
		if r.realTime() {
			if err := r.waitUntil(ctx, start+sent); err != nil {
				return sent, err
			}
		} else if err := r.poll(); err != nil {
			return sent, err
		}
		if r.hungUp {
			return sent, nil
		}
		took := 1
		var err error
		if canAhead && i+1 < len(frames) && len(r.events) == 0 && (r.direct == nil || r.direct.held == nil) {
			// The frames due before the scenario's bound (pump would
			// end the scenario there instead of sending them).
			n, at := i+1, start+sent+f.Duration()
			for n < len(frames) && at < r.cfg.Timeouts.MaxDuration {
				at += frames[n].Duration()
				n++
			}
			err = callPrompt(sctx, send, func(ctx context.Context) (err error) {
				took, err = ahead.SendAudioAhead(ctx, inproc.Token{}, frames[i:n])
				return err
			})
			if err == nil && (took < 1 || took > n-i) {
				err = fmt.Errorf("the %s connection took %d of %d frames", r.adapter(), took, n-i)
			}
		} else {
			err = r.sendFrame(ctx, sctx, send, f)
		}
		if err != nil {
			if r.hungUpAfter(ctx, err) {
				return sent, nil
			}
			var te *TimeoutError
			if errors.As(err, &te) && te.Phase == PhaseSend && te.Turn == send.turn && te.Callee == send.who() {
				te.Hint = fmt.Sprintf("the %s adapter stopped accepting audio after %v of %v", r.adapter(), sent, d)
				return sent, te
			}
			return sent, r.sendErr("sending user audio", err)
		}
		for _, f := range frames[i : i+took] {
			sent += f.Duration()
		}
		i += took
	}
	if r.realTime() {
		return sent, r.waitUntil(ctx, start+sent)
	}
	return sent, r.poll()
}

func (r *runner) silence(ctx context.Context, d time.Duration) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	r.addEvent(Event{At: at, Type: EventSilence, Turn: r.st.turn, Role: RoleUser, Duration: d})
	if r.caps.Audio {
		c := r.surround(pcm.Silence(r.cfg.Rate, d))
		sent, err := r.sendAudio(ctx, c)
		r.recordSilence(at, c, sent)
		return err
	}
	return r.waitUntil(ctx, at+d)
}

func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	r.addEvent(Event{At: at, Type: EventSleep, Turn: r.st.turn, Role: RoleUser, Duration: d})
	defer r.holdBackground()() // Sleep sends nothing, not even the scene
	return r.waitUntil(ctx, at+d)
}

func (r *runner) dtmf(ctx context.Context, digits string) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	switch {
	case r.caps.DTMF:
		r.addEvent(Event{At: at, Type: EventDTMF, Turn: r.st.turn, Role: RoleUser, Text: digits})
		send := func(ctx context.Context) error { return r.conn.SendDTMF(ctx, digits) }
		if err := r.send(ctx, r.line("SendDTMF"), send); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("sending DTMF", err)
		}
		return nil
	case r.caps.Audio:
		tones, err := dtmfTones(digits, r.cfg.Rate)
		if err != nil {
			return fmt.Errorf("generating in-band DTMF tones: %w", err)
		}
		r.addEvent(Event{At: at, Type: EventDTMF, Turn: r.st.turn, Role: RoleUser, Text: digits, Duration: tones.Duration()})
		if _, err := r.sendAudio(ctx, tones); err != nil {
			return err
		}
		r.segs = append(r.segs, Segment{Role: RoleUser, Turn: r.st.turn, Start: at, End: r.now(), Text: "DTMF " + digits, audio: segmentAudio{whole: tones}})
		return nil
	}
	return &UnsupportedError{Adapter: r.adapter(), Capability: "DTMF",
		Alternative: "the agent takes only text and has no DTMF events; send the digits as text with UserSays"}
}
