package cassette

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Files of a cassette.
const (
	// DefaultDir is the directory, relative to the test's package
	// directory, under which New keeps each test's cassette (in a
	// subdirectory named after the test, as golden files are).
	DefaultDir = "testdata/voicetest/cassettes"
	// IndexFile is the name of a cassette's index in its directory.
	IndexFile = "cassette.json"
)

// formatV1 is the value of "format" in every index.
const formatV1 = "voicetest-cassette/v1"

// Limits on what a cassette holds, so that neither recording nor replay
// grows without bound.
const (
	// maxEvents bounds the agent events of one conversation.
	maxEvents = 1 << 20
	// maxAgentAudio bounds the agent audio of one conversation.
	maxAgentAudio = 30 * time.Minute
	// maxIndexBytes and maxBodyBytes bound the files replay reads.
	maxIndexBytes = 256 << 20
	maxBodyBytes  = 256 << 20
)

// The caller's calls, as an index names them.
const (
	callConnect   = "connect"
	callAudio     = "audio"
	callEnd       = "end_utterance"
	callText      = "text"
	callDTMF      = "dtmf"
	callInterrupt = "interrupt"
)

// kindError is the kind of an event that is an error Recv returned.
const kindError = "error"

// index is a cassette's cassette.json.
type index struct {
	Format string `json:"format"`
	// Test is the test that recorded it; Recorded when (UTC, RFC 3339).
	Test     string `json:"test"`
	Recorded string `json:"recorded"`
	// Rerecord is the command that records the cassette again.
	Rerecord      string         `json:"rerecord"`
	Conversations []conversation `json:"conversations"`
}

// conversation is one Connect: the caller's turns, each with what the
// agent sent after it.
type conversation struct {
	// Scenario is the Session's name (Config.Name).
	Scenario string `json:"scenario"`
	// Rate is the Session's sample rate.
	Rate int `json:"rate"`
	// Capabilities are the adapter's.
	Capabilities voicetest.Capabilities `json:"capabilities"`
	// Connect is how long the adapter's Connect took (a room to join, an
	// agent to dispatch), which replay takes again on virtual time so
	// that the timeline starts where it did.
	Connect millis `json:"connect_ms,omitzero"`
	Turns   []turn `json:"turns"`
}

// turn is one thing the caller did (turn 0 is the connection), and the
// agent's events that came after it began and before the next began.
type turn struct {
	Turn   int    `json:"turn"`
	Caller string `json:"caller"`
	// Text is the text of a "text" turn, the digits of a "dtmf" one.
	Text string `json:"text,omitempty"`
	// Audio describes the frames of an "audio" turn.
	Audio *callerAudio `json:"audio,omitempty"`
	// Error is what the call returned, if it failed.
	Error *callError `json:"error,omitempty"`
	// AgentAudio is the body file holding the samples of the turn's
	// agent_audio events, in order.
	AgentAudio *body   `json:"agent_audio,omitempty"`
	Events     []event `json:"events,omitempty"`
	agent      []int16 // AgentAudio's samples (recording, and once loaded)
}

// callerAudio is the caller's audio of one turn: consecutive SendAudio
// calls with nothing else between them.
type callerAudio struct {
	Frames   int    `json:"frames"`
	Samples  int    `json:"samples"`
	Duration string `json:"duration"`
	SHA256   string `json:"sha256"`
}

// callError is an error a caller's call returned.
type callError struct {
	// Frame is the frame of an audio turn whose SendAudio failed.
	Frame   int    `json:"frame,omitempty"`
	Message string `json:"message"`
	// Closed marks a closed transport (errors.Is ErrTransportClosed).
	Closed bool `json:"closed,omitempty"`
}

// body names an audio body file of the cassette.
type body struct {
	File     string `json:"file"`
	Samples  int    `json:"samples"`
	Duration string `json:"duration"`
	SHA256   string `json:"sha256"`
}

// event is one result of Recv: an AgentEvent or an error.
type event struct {
	// Frame is the frame of an audio turn after whose send it came.
	Frame int `json:"frame,omitempty"`
	// After is its time after the caller's call (or frame) began.
	After millis `json:"after_ms"`
	// Kind is the AgentEvent's kind (EventKind.String) or "error".
	Kind string `json:"kind"`
	// Samples is the length of agent_audio, taken in order from the
	// turn's body; Rate its rate when not the conversation's.
	Samples int `json:"samples,omitempty"`
	Rate    int `json:"rate,omitempty"`
	// Empty marks an agent_audio event with no samples.
	Empty  bool   `json:"empty,omitempty"`
	Text   string `json:"text,omitempty"`
	Final  bool   `json:"final,omitempty"`
	Speech millis `json:"speech_ms,omitzero"`
	// BeforeSpeech is AgentEvent.BeforeSpeech.
	BeforeSpeech bool                `json:"before_speech,omitempty"`
	Tool         *voicetest.ToolCall `json:"tool,omitempty"`
	Data         json.RawMessage     `json:"data,omitempty"`
	// Error and Closed describe an error Recv returned.
	Error  string `json:"error,omitempty"`
	Closed bool   `json:"closed,omitempty"`
}

// millis is a duration written as milliseconds with microsecond
// precision.
type millis time.Duration

// MarshalJSON writes m in milliseconds, three decimals.
func (m millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(time.Duration(m).Microseconds())/1000, 'f', 3, 64), nil
}

// UnmarshalJSON reads milliseconds, to the microsecond.
func (m *millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f < 0 || f > float64(math.MaxInt64/int64(time.Millisecond)) {
		return fmt.Errorf("%s is not a time in milliseconds (0 or more)", b)
	}
	*m = millis(time.Duration(math.Round(f*1000)) * time.Microsecond)
	return nil
}

// eventKinds maps the names an index uses to the kinds of AgentEvent.
var eventKinds = func() map[string]voicetest.EventKind {
	m := map[string]voicetest.EventKind{}
	for k := voicetest.AgentAudio; k <= voicetest.AgentLog; k++ {
		m[k.String()] = k
	}
	return m
}()

// bodyName matches the body files of a cassette: c<conversation>-t<turn>.<12 hex>.wav.
var bodyName = regexp.MustCompile(`^c[0-9]+-t[0-9]+\.[0-9a-f]{12}\.wav$`)

// units returns how many of the caller's calls a turn stands for: one per
// frame of an audio turn, one otherwise.
func (t *turn) units() int {
	if t.Caller == callAudio && t.Audio != nil {
		return t.Audio.Frames
	}
	return 1
}

// describe says what the caller did in t, for a divergence.
func (t *turn) describe() string {
	switch t.Caller {
	case callConnect:
		return "the connection"
	case callAudio:
		return fmt.Sprintf("audio of %s (%d frames, %d samples, sha256 %.12s…)", t.Audio.Duration, t.Audio.Frames, t.Audio.Samples, t.Audio.SHA256)
	case callEnd:
		return "the end of the utterance (EndUtterance)"
	case callText:
		return fmt.Sprintf("the text %q", t.Text)
	case callDTMF:
		return fmt.Sprintf("the DTMF digits %q", t.Text)
	case callInterrupt:
		return "an interrupt (Interrupt)"
	}
	return t.Caller
}

// encode writes ix as the readable index: indented, but with each event,
// and each small object of a turn, on one line.
func encode(ix *index) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ix); err != nil {
		return nil, fmt.Errorf("voicetest/cassette: encoding the index: %w", err)
	}
	return reindent(bytes.TrimSpace(buf.Bytes())), nil
}

// reindent lays out compact JSON two spaces per level, except that arrays
// nested deeper than 5 levels and objects deeper than 4 stay on one line:
// so each event of a turn, and a turn's audio, error and body, is a line.
func reindent(src []byte) []byte {
	const arrayDepth, objectDepth = 6, 5
	out := make([]byte, 0, len(src)+len(src)/4)
	var open []bool // per open container: laid out on lines
	newline := func(depth int) {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		lines := len(open) > 0 && open[len(open)-1]
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{', '[':
			limit := objectDepth
			if c == '[' {
				limit = arrayDepth
			}
			expand := len(open) < limit && (len(open) == 0 || open[len(open)-1])
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, src[i+1])
				i++
				continue
			}
			open = append(open, expand)
			if expand {
				newline(len(open))
			}
		case '}', ']':
			open = open[:len(open)-1]
			if lines {
				newline(len(open))
			}
			out = append(out, c)
		case ',':
			out = append(out, c)
			if lines {
				newline(len(open))
			}
		case ':':
			out = append(out, c)
			if lines {
				out = append(out, ' ')
			}
		default:
			out = append(out, c)
		}
	}
	return append(out, '\n')
}

// decode parses and checks an index read from path, and loads the bodies
// it names from dir.
func decode(data []byte, dir string) (*index, error) {
	var ix index
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("it does not parse: %w", err)
	}
	if ix.Format != formatV1 {
		return nil, fmt.Errorf("its format is %q, not %q (written by another version of voicetest?)", ix.Format, formatV1)
	}
	if len(ix.Conversations) == 0 {
		return nil, errors.New("it holds no conversation")
	}
	for ci := range ix.Conversations {
		if err := check(&ix.Conversations[ci], ci+1, dir); err != nil {
			return nil, fmt.Errorf("conversation %d: %w", ci+1, err)
		}
	}
	return &ix, nil
}

// check validates one conversation of an index and loads its bodies.
func check(c *conversation, n int, dir string) error {
	if c.Rate <= 0 {
		return fmt.Errorf("rate %d: %w", c.Rate, pcm.ErrBadRate)
	}
	if len(c.Turns) == 0 || c.Turns[0].Caller != callConnect {
		return errors.New("its first turn is not the connection")
	}
	audio := time.Duration(0)
	events := 0
	for ti := range c.Turns {
		t := &c.Turns[ti]
		if t.Turn != ti {
			return fmt.Errorf("turn %d is numbered %d", ti, t.Turn)
		}
		switch t.Caller {
		case callConnect:
			if ti != 0 {
				return fmt.Errorf("turn %d: a second connection", ti)
			}
		case callAudio:
			if t.Audio == nil || t.Audio.Frames <= 0 || t.Audio.Samples < 0 || len(t.Audio.SHA256) != 64 {
				return fmt.Errorf("turn %d: audio without frames, samples and sha256", ti)
			}
		case callEnd, callText, callDTMF, callInterrupt:
		default:
			return fmt.Errorf("turn %d: unknown caller call %q", ti, t.Caller)
		}
		if t.Error != nil && t.Error.Frame >= t.units() {
			return fmt.Errorf("turn %d: error at frame %d of %d", ti, t.Error.Frame, t.units())
		}
		samples := 0
		for ei, e := range t.Events {
			where := fmt.Sprintf("turn %d, event %d", ti, ei+1)
			if e.Frame < 0 || e.Frame >= t.units() {
				return fmt.Errorf("%s: frame %d of %d", where, e.Frame, t.units())
			}
			if ei > 0 && e.Frame < t.Events[ei-1].Frame {
				return fmt.Errorf("%s: frame %d before the previous event's %d", where, e.Frame, t.Events[ei-1].Frame)
			}
			if e.Kind == kindError {
				if e.Error == "" {
					return fmt.Errorf("%s: an error with no message", where)
				}
				continue
			}
			k, ok := eventKinds[e.Kind]
			if !ok {
				return fmt.Errorf("%s: unknown kind %q", where, e.Kind)
			}
			if (k == voicetest.AgentToolCall || k == voicetest.AgentToolResult) && e.Tool == nil {
				return fmt.Errorf("%s: a %s with no tool", where, e.Kind)
			}
			if k == voicetest.AgentAudio {
				if e.Samples < 0 || e.Rate < 0 || (e.Samples == 0) != e.Empty {
					return fmt.Errorf("%s: agent_audio with %d samples", where, e.Samples)
				}
				samples += e.Samples
			}
		}
		events += len(t.Events)
		if events > maxEvents {
			return fmt.Errorf("more than %d events", maxEvents)
		}
		if (samples > 0) != (t.AgentAudio != nil) {
			return fmt.Errorf("turn %d: its events hold %d samples of agent audio, its body %v", ti, samples, t.AgentAudio)
		}
		if t.AgentAudio == nil {
			continue
		}
		audio += pcm.DurationOf(samples, c.Rate)
		if audio > maxAgentAudio {
			return fmt.Errorf("more than %v of agent audio", maxAgentAudio)
		}
		b, err := readBody(dir, t.AgentAudio, c.Rate)
		if err != nil {
			return fmt.Errorf("turn %d: %w", ti, err)
		}
		if len(b) != samples {
			return fmt.Errorf("turn %d: body %s holds %d samples, its events %d", ti, t.AgentAudio.File, len(b), samples)
		}
		t.agent = b
	}
	return nil
}

// readBody reads and checks one audio body file.
func readBody(dir string, b *body, rate int) ([]int16, error) {
	if !bodyName.MatchString(b.File) {
		return nil, fmt.Errorf("body file name %q is not c<n>-t<n>.<hash>.wav", b.File)
	}
	path := filepath.Join(dir, b.File)
	data, err := readLimited(path, maxBodyBytes)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != b.SHA256 {
		return nil, fmt.Errorf("body %s does not match the SHA-256 in the index (edited or truncated?)", b.File)
	}
	c, err := pcm.DecodeWAV(data)
	if err != nil {
		return nil, fmt.Errorf("body %s: %w", b.File, err)
	}
	if c.Rate != rate || c.Len() != b.Samples {
		return nil, fmt.Errorf("body %s holds %d samples at %d Hz, the index says %d at %d Hz", b.File, c.Len(), c.Rate, b.Samples, rate)
	}
	return c.Samples, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, limit>>20)
	}
	return data, nil
}

// newBody encodes samples at rate as the body file of conversation conv,
// turn n.
func newBody(conv, n, rate int, samples []int16) (*body, []byte, error) {
	wav, err := pcm.EncodeWAV(pcm.Chunk{Rate: rate, Samples: samples})
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(wav)
	h := hex.EncodeToString(sum[:])
	return &body{
		File:     fmt.Sprintf("c%d-t%d.%s.wav", conv, n, h[:12]),
		Samples:  len(samples),
		Duration: pcm.DurationOf(len(samples), rate).String(),
		SHA256:   h,
	}, wav, nil
}
