package voicetest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
)

// Audio is recorded caller speech, for UserAudio and Interrupt: an audio
// file, a pcm.Chunk, or raw G.711 bytes as a phone line carries them,
// with the text it says when that is known (Says). Build it with
// AudioFile, AudioChunk, MuLawAudio or ALawAudio.
//
// The transcript shows a recording's known text; without one the runner
// transcribes it with Config.UserSTT (or, without that, Config.AgentSTT),
// and with neither the message reads "(audio only)".
type Audio struct {
	kind  audioKind
	path  string
	chunk pcm.Chunk
	g711  []byte
	text  string
}

type audioKind int

const (
	audioNone audioKind = iota
	audioFile
	audioChunk
	audioMuLaw
	audioALaw
)

// AudioFile is the recording in the file at path: WAV (any rate, sample
// format and channels, mixed to mono) read directly, MP3, Ogg, FLAC and
// anything else ffmpeg reads through ffmpeg (Debian package ffmpeg); see
// pcm.ReadAudioFile.
func AudioFile(path string) Audio { return Audio{kind: audioFile, path: path} }

// AudioChunk is the recording c, at any rate (it is resampled to the
// session's). It is not copied; do not change it while the scenario runs.
func AudioChunk(c pcm.Chunk) Audio { return Audio{kind: audioChunk, chunk: c} }

// MuLawAudio is raw G.711 µ-law bytes at 8 kHz, as a Twilio media stream
// or a telephone line carries them.
func MuLawAudio(b []byte) Audio { return Audio{kind: audioMuLaw, g711: b} }

// ALawAudio is raw G.711 A-law bytes at 8 kHz.
func ALawAudio(b []byte) Audio { return Audio{kind: audioALaw, g711: b} }

// Says returns a copy of a that says text: the transcript shows it, a
// text-only agent is sent it, and no STT is asked.
func (a Audio) Says(text string) Audio {
	a.text = text
	return a
}

// Text returns the text a says, "" when unknown.
func (a Audio) Text() string { return a.text }

// String describes a as step names show it: AudioFile("hi.wav"),
// AudioChunk(1.5s at 24000 Hz), MuLawAudio(8000 bytes).
func (a Audio) String() string {
	var s string
	switch a.kind {
	case audioFile:
		s = "AudioFile(" + quote(filepath.Base(a.path)) + ")"
	case audioChunk:
		s = fmt.Sprintf("AudioChunk(%v at %d Hz)", a.chunk.Duration(), a.chunk.Rate)
	case audioMuLaw:
		s = fmt.Sprintf("MuLawAudio(%d bytes)", len(a.g711))
	case audioALaw:
		s = fmt.Sprintf("ALawAudio(%d bytes)", len(a.g711))
	default:
		return "Audio{}"
	}
	if a.text != "" {
		s += ".Says(" + quote(a.text) + ")"
	}
	return s
}

// validate reports what is wrong with a before the scenario starts.
func (a Audio) validate() error {
	switch a.kind {
	case audioFile:
		if a.path == "" {
			return errors.New("AudioFile needs the path of an audio file")
		}
	case audioChunk:
		if err := a.chunk.Validate(); err != nil {
			return fmt.Errorf("AudioChunk: %w", err)
		}
		if a.chunk.IsEmpty() {
			return errors.New("AudioChunk holds no samples; record something, or use Silence for a pause")
		}
	case audioMuLaw, audioALaw:
		if len(a.g711) == 0 {
			return fmt.Errorf("%s holds no bytes", a)
		}
	default:
		return errors.New("a zero Audio; build it with AudioFile, AudioChunk, MuLawAudio or ALawAudio")
	}
	return nil
}

// load returns a's samples at rate.
func (a Audio) load(ctx context.Context, rate int) (pcm.Chunk, error) {
	var c pcm.Chunk
	switch a.kind {
	case audioFile:
		return readUserAudio(ctx, a.path, rate)
	case audioChunk:
		c = a.chunk
	case audioMuLaw:
		c = pcm.MulawToChunk(a.g711)
	case audioALaw:
		c = pcm.AlawToChunk(a.g711)
	default:
		return pcm.Chunk{}, a.validate()
	}
	if c.Rate != rate {
		r, err := pcm.Resample(c, rate)
		if err != nil {
			return pcm.Chunk{}, fmt.Errorf("%s: %w", a, err)
		}
		c = r
	}
	return c, nil
}

// AudioSource is what UserAudio plays: the path of an audio file (a
// string), a pcm.Chunk, or an Audio.
type AudioSource interface {
	~string | pcm.Chunk | Audio
}

// Content is what Interrupt barges in with: text to speak (a string), a
// pcm.Chunk, or an Audio.
type Content interface {
	~string | pcm.Chunk | Audio
}

// audioOf turns an AudioSource into an Audio; a string is a file path.
func audioOf[S AudioSource](src S) Audio {
	switch v := any(src).(type) {
	case pcm.Chunk:
		return AudioChunk(v)
	case Audio:
		return v
	}
	return AudioFile(fmt.Sprint(any(src)))
}

// SayOption changes how one utterance of UserSays or Interrupt is spoken:
// build it with WithVoice, WithSpeed, WithEffects or WithInstructions.
// They override the persona's and the Config's for that utterance only.
type SayOption struct {
	name  string
	apply func(*Utterance)
}

// WithVoice speaks the utterance with voice (the TTS engine's name for
// it) instead of Config.Voice.
func WithVoice(voice string) SayOption {
	return SayOption{name: "WithVoice(" + quote(voice) + ")", apply: func(u *Utterance) { u.Voice = voice }}
}

// WithSpeed speaks the utterance at speed (1 normal; see
// SpeechRequest.Speed). It does not apply to recorded audio (use
// WithEffects(pcm.Tempo(speed))).
func WithSpeed(speed float64) SayOption {
	return SayOption{name: fmt.Sprintf("WithSpeed(%g)", speed), apply: func(u *Utterance) { u.Speed = speed }}
}

// WithEffects transforms the utterance's audio, after TTS and before
// Config.Effects and Config.Background.
func WithEffects(e pcm.Effect) SayOption {
	return SayOption{name: "WithEffects(…)", apply: func(u *Utterance) { u.Effects = e }}
}

// WithInstructions steers the delivery of the utterance ("hesitant,
// elderly", "whispering") on engines that take instructions (OpenAI's
// gpt-4o-mini-tts); others ignore them.
func WithInstructions(instructions string) SayOption {
	return SayOption{name: "WithInstructions(" + quote(instructions) + ")", apply: func(u *Utterance) { u.Instructions = instructions }}
}

// sayOptions applies opts to u and returns their names for the step's
// name, or an error for a zero option.
func sayOptions(u *Utterance, opts []SayOption) (string, error) {
	var names []string
	for _, o := range opts {
		if o.apply == nil {
			return "", errors.New("a zero SayOption; build options with WithVoice, WithSpeed, WithEffects or WithInstructions")
		}
		o.apply(u)
		names = append(names, o.name)
	}
	if len(names) == 0 {
		return "", nil
	}
	return ", " + strings.Join(names, ", "), nil
}

// recorded returns the utterance of recorded audio a, at the session's
// rate, with its known text.
func (r *runner) recorded(ctx context.Context, a Audio) (Utterance, error) {
	c, err := a.load(ctx, r.cfg.Rate)
	if err != nil {
		return Utterance{}, err
	}
	if c.IsEmpty() {
		return Utterance{}, fmt.Errorf("%s holds no audio", a)
	}
	return Utterance{Audio: c, Text: a.text}, nil
}

// userSTT returns the engine that transcribes recorded user audio:
// Config.UserSTT, else Config.AgentSTT, else nil.
func (r *runner) userSTT() STT {
	if r.cfg.UserSTT != nil {
		return r.cfg.UserSTT
	}
	return r.cfg.AgentSTT
}

// hearUser returns the text of recorded user audio that came without
// one, as the user STT hears it (the recording itself, before effects),
// and whether it stays unknown (no STT).
func (r *runner) hearUser(ctx context.Context, audio pcm.Chunk) (text string, unknown bool, err error) {
	stt := r.userSTT()
	if stt == nil {
		return "", true, nil
	}
	var tr Transcription
	err = r.call(ctx, r.engine("Config.UserSTT", PhaseTranscribe), func(ctx context.Context) (err error) {
		tr, err = stt.Transcribe(ctx, TranscriptionRequest{Audio: audio, Language: r.cfg.Language})
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("transcribing the user's recorded audio (%v) for the transcript: %w", audio.Duration(), err)
	}
	return strings.TrimSpace(tr.Text), false, nil
}
