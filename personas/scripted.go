package personas

import (
	"context"
	"fmt"
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
	if u.Instructions == "" {
		u.Instructions = s.persona.Instructions
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
// WAV files (any rate, sample format and channels) are read directly.
// Other formats (MP3, OGG, FLAC, ADPCM WAV, …) are decoded with ffmpeg when
// it is installed; without it they fail with an error naming the Debian
// package (ffmpeg). Either way the audio is mono at the file's own rate
// (see ReadAudioFile). Files are read when first needed and kept.
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

// ErrNoFFmpeg reports an audio file that needs ffmpeg to be decoded on a
// machine without it. It is pcm.ErrNoFFmpeg.
var ErrNoFFmpeg = pcm.ErrNoFFmpeg

// ReadAudioFile reads the audio file at path as a mono Chunk at the file's
// own rate: a WAV file directly, anything else (MP3, Ogg, FLAC, …) through
// ffmpeg. It is pcm.ReadAudioFile: without ffmpeg a non-WAV file fails with
// an error that wraps ErrNoFFmpeg and names the Debian package to install.
func ReadAudioFile(ctx context.Context, path string) (pcm.Chunk, error) {
	return pcm.ReadAudioFile(ctx, path)
}

// readAudio is ReadAudioFile, refusing files without samples.
func readAudio(ctx context.Context, path string) (pcm.Chunk, error) {
	c, err := ReadAudioFile(ctx, path)
	if err == nil && c.IsEmpty() {
		err = fmt.Errorf("%s has no audio (no samples); record something or remove it from the list", path)
	}
	return c, err
}
