package personas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// sound is how a user built from a persona sounds: the persona's effects
// always, its voice once the TTS engine is known.
type sound struct {
	persona *Persona
	engine  string
}

func (s sound) validate() error {
	if s.persona == nil {
		return nil
	}
	return s.persona.Validate()
}

// apply gives u the persona's voice, speaking speed and effects, leaving
// fields u already has alone.
func (s sound) apply(u *voicetest.Utterance) {
	if s.persona == nil {
		return
	}
	if u.Voice == "" && s.engine != "" {
		u.Voice = s.persona.Voice.For(s.engine)
	}
	if u.Speed == 0 {
		u.Speed = s.persona.Speed
	}
	if u.Effects == nil {
		u.Effects = s.persona.Effects
	}
}

// ScriptedUser says fixed lines, one per user turn; see Scripted.
type ScriptedUser struct {
	lines []string
	sound sound
	convs *conversations[int]
}

var _ voicetest.User = (*ScriptedUser)(nil)

// Scripted returns a User that says lines in order, one per turn it is
// asked for, and then reports Done (the conversation ends as if the user
// hung up). Each conversation it serves starts from the first line, so
// one value may serve parallel subtests and repeated runs.
//
// A blank line is an error when its turn comes: for a silent turn use the
// voicetest.Silence or voicetest.Sleep steps.
func Scripted(lines ...string) *ScriptedUser {
	return &ScriptedUser{lines: slices.Clone(lines), convs: new(conversations[int])}
}

// As returns a copy of s that speaks as persona p: with p's effects, and
// with p's voice once Engine names the TTS engine.
func (s *ScriptedUser) As(p Persona) *ScriptedUser {
	c := s.clone()
	c.sound.persona = &p
	return c
}

// Engine returns a copy of s whose utterances carry the persona's voice
// for the named TTS engine ("openai", "flite", "espeak"; see Voice.For).
func (s *ScriptedUser) Engine(name string) *ScriptedUser {
	c := s.clone()
	c.sound.engine = name
	return c
}

func (s *ScriptedUser) clone() *ScriptedUser {
	return &ScriptedUser{lines: s.lines, sound: s.sound, convs: new(conversations[int])}
}

// NextUtterance returns the conversation's next line, or Done when all
// lines have been said.
func (s *ScriptedUser) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if err := s.sound.validate(); err != nil {
		return voicetest.Utterance{}, fmt.Errorf("personas.Scripted: %w", err)
	}
	next, unlock := s.convs.lock(st, func() int { return 0 })
	defer unlock()
	if *next >= len(s.lines) {
		s.convs.forget(st)
		return voicetest.Utterance{Done: true}, nil
	}
	i := *next
	if strings.TrimSpace(s.lines[i]) == "" {
		return voicetest.Utterance{}, fmt.Errorf("personas.Scripted: line %d of %d is blank; every line must say something (for a silent turn use a voicetest.Silence or voicetest.Sleep step)", i+1, len(s.lines))
	}
	*next = i + 1
	u := voicetest.Utterance{Text: s.lines[i]}
	s.sound.apply(&u)
	return u, nil
}

// FilesUser plays recorded audio files, one per user turn; see Files.
type FilesUser struct {
	paths       []string
	transcripts []string
	sound       sound
	convs       *conversations[int]
	audio       *audioFiles
}

var _ voicetest.User = (*FilesUser)(nil)

// Files returns a User that plays the audio files at paths in order, one
// per turn it is asked for, and then reports Done. Each conversation it
// serves starts from the first file.
//
// 16-bit PCM WAV files are read directly. Other formats (MP3, OGG, FLAC,
// float or µ-law WAV, …) are converted with ffmpeg to 24 kHz mono when it
// is installed; without it they fail with an error naming the Debian
// package (ffmpeg). Files are read when first needed and kept.
//
// The transcript of a file is unknown unless Transcripts gives it; agents
// that take only text need it.
func Files(paths ...string) *FilesUser {
	return &FilesUser{paths: slices.Clone(paths), convs: new(conversations[int]), audio: new(audioFiles)}
}

// Transcripts returns a copy of f that gives each file the transcript at
// the same position (what the recording says), for the transcript and
// for text-only agents. There must be one per file.
func (f *FilesUser) Transcripts(texts ...string) *FilesUser {
	c := f.clone()
	c.transcripts = slices.Clone(texts)
	return c
}

// As returns a copy of f whose audio goes through persona p's effects.
// (The recordings keep their own voice.)
func (f *FilesUser) As(p Persona) *FilesUser {
	c := f.clone()
	c.sound.persona = &p
	return c
}

func (f *FilesUser) clone() *FilesUser {
	return &FilesUser{paths: f.paths, transcripts: f.transcripts, sound: f.sound, convs: new(conversations[int]), audio: f.audio}
}

// NextUtterance returns the conversation's next file as audio, or Done
// when all have been played.
func (f *FilesUser) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if err := f.sound.validate(); err != nil {
		return voicetest.Utterance{}, fmt.Errorf("personas.Files: %w", err)
	}
	if f.transcripts != nil && len(f.transcripts) != len(f.paths) {
		return voicetest.Utterance{}, fmt.Errorf("personas.Files: %d transcripts for %d files; give one transcript per file, in the same order", len(f.transcripts), len(f.paths))
	}
	next, unlock := f.convs.lock(st, func() int { return 0 })
	defer unlock()
	if *next >= len(f.paths) {
		f.convs.forget(st)
		return voicetest.Utterance{Done: true}, nil
	}
	i := *next
	c, err := f.audio.load(ctx, f.paths[i])
	if err != nil {
		return voicetest.Utterance{}, fmt.Errorf("personas.Files: file %d of %d: %w", i+1, len(f.paths), err)
	}
	*next = i + 1
	u := voicetest.Utterance{Audio: c}
	if f.transcripts != nil {
		u.Text = f.transcripts[i]
	}
	if f.sound.persona != nil && f.sound.persona.Effects != nil {
		u.Effects = f.sound.persona.Effects
	}
	return u, nil
}

// audioFiles loads audio files once each.
type audioFiles struct {
	mu     sync.Mutex
	loaded map[string]pcm.Chunk
}

func (a *audioFiles) load(ctx context.Context, path string) (pcm.Chunk, error) {
	a.mu.Lock()
	c, ok := a.loaded[path]
	a.mu.Unlock()
	if ok {
		return c.Clone(), nil
	}
	c, err := readAudio(ctx, path)
	if err != nil {
		return pcm.Chunk{}, err
	}
	a.mu.Lock()
	if a.loaded == nil {
		a.loaded = make(map[string]pcm.Chunk)
	}
	a.loaded[path] = c
	a.mu.Unlock()
	return c.Clone(), nil
}

// ffmpegRate is the rate ffmpeg converts other formats to: voicetest's
// canonical rate.
const ffmpegRate = pcm.Rate24k

// ErrNoFFmpeg reports an audio file that needs ffmpeg to be decoded on a
// machine without it.
var ErrNoFFmpeg = errors.New("personas: ffmpeg is not installed")

// ReadAudioFile reads the audio file at path as a Chunk: a 16-bit PCM WAV
// directly (at its own rate), anything else through ffmpeg, converted to
// 24 kHz mono. Without ffmpeg a non-WAV file fails with an error that
// wraps ErrNoFFmpeg and names the Debian package to install.
func ReadAudioFile(ctx context.Context, path string) (pcm.Chunk, error) {
	if _, err := os.Stat(path); err != nil {
		return pcm.Chunk{}, fmt.Errorf("reading audio file: %w", err)
	}
	why := "it is not a WAV file"
	if strings.EqualFold(filepath.Ext(path), ".wav") {
		c, err := pcm.ReadWAVFile(path)
		switch {
		case err == nil:
			return c, nil
		case errors.Is(err, pcm.ErrWAVUnsupported):
			why = "it is not a 16-bit PCM WAV file (" + err.Error() + ")"
		case errors.Is(err, pcm.ErrNotWAV):
			why = "it is named .wav but is not a WAV file"
		default:
			return pcm.Chunk{}, fmt.Errorf("reading WAV file %s: %w", path, err)
		}
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("%s: %s, and decoding it needs ffmpeg (Debian package ffmpeg: apt-get install ffmpeg), or convert it to a 16-bit PCM WAV file yourself: %w", path, why, ErrNoFFmpeg)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-i", path, "-map", "0:a:0", "-f", "s16le", "-acodec", "pcm_s16le", "-ac", "1", "-ar", fmt.Sprint(ffmpegRate), "pipe:1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return pcm.Chunk{}, fmt.Errorf("decoding %s with ffmpeg: %w", path, ctx.Err())
		}
		return pcm.Chunk{}, fmt.Errorf("decoding %s with ffmpeg failed (is it an audio file?): %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	if stdout.Len() == 0 {
		return pcm.Chunk{}, fmt.Errorf("decoding %s with ffmpeg gave no audio: the file has no samples", path)
	}
	c, err := pcm.FromBytes(ffmpegRate, stdout.Bytes())
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("decoding %s with ffmpeg: %w", path, err)
	}
	return c, nil
}

// readAudio is ReadAudioFile, refusing files without samples.
func readAudio(ctx context.Context, path string) (pcm.Chunk, error) {
	c, err := ReadAudioFile(ctx, path)
	if err == nil && c.IsEmpty() {
		err = fmt.Errorf("%s has no audio (no samples); record something or remove it from the list", path)
	}
	return c, err
}
