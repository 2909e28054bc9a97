package speech

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// FliteVoices are the voices built into Debian's flite package. "slt" (a
// US English female voice, 16 kHz) sounds best and transcribes best; "kal"
// is an 8 kHz diphone voice.
var FliteVoices = []string{"slt", "kal", "kal16", "awb", "awb_time", "rms"}

// DefaultFliteVoice is flite's default voice in voicetest.
const DefaultFliteVoice = "slt"

// DefaultEspeakVoice is espeak-ng's default voice in voicetest.
const DefaultEspeakVoice = "en-us"

// espeakWPM is espeak-ng's default speaking rate in words per minute,
// which Speed 1 maps to.
const espeakWPM = 175

// FliteTTS is the flite text-to-speech engine, run as a process. It needs
// no key; the flite Debian package provides it. Build it with Flite.
type FliteTTS struct {
	cfg   config
	voice string
}

// Flite returns the flite engine. The voice is WithVoice's, else "slt".
// flite is looked up only when a call is not answered by the cache, so a
// replaying test needs no flite installed.
func Flite(opts ...Option) *FliteTTS {
	cfg := newConfig(opts)
	v := cfg.voice
	if v == "" {
		v = DefaultFliteVoice
	}
	return &FliteTTS{cfg: cfg, voice: v}
}

var _ voicetest.TTS = (*FliteTTS)(nil)

// Synthesize speaks req.Text with flite. Instructions are ignored (flite
// has no such control); Speed stretches durations by 1/Speed.
func (f *FliteTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	voice := orDefault(req.Voice, f.voice)
	if !slices.Contains(FliteVoices, voice) {
		return pcm.Chunk{}, fmt.Errorf("speech: flite has no voice %q; use one of %s", voice, strings.Join(FliteVoices, ", "))
	}
	speed, err := checkTTS(req)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: flite: %w", err)
	}
	key := cache.Key{Kind: "tts", Provider: "flite", Model: voice,
		Fields: map[string]any{"text": req.Text, "speed": speed}}
	return synthesize(ctx, f.cfg.cache, key, req.Rate, func(ctx context.Context) (cache.Audio, error) {
		prog, err := fliteEngine.resolve(f.cfg)
		if err != nil {
			return cache.Audio{}, err
		}
		return runToWAV(ctx, "flite", req.Text, func(textFile, wavFile string) []string {
			args := []string{"-voice", voice}
			if speed != 1 {
				args = append(args, "--setf", "duration_stretch="+strconv.FormatFloat(1/speed, 'f', 4, 64))
			}
			return append(args, "-f", textFile, "-o", wavFile)
		}, prog)
	})
}

// EspeakTTS is the espeak-ng text-to-speech engine, run as a process. It
// needs no key; the espeak-ng Debian package provides it. Build it with
// Espeak.
type EspeakTTS struct {
	cfg   config
	voice string
}

// Espeak returns the espeak-ng engine. The voice is WithVoice's, else
// "en-us"; any espeak-ng voice name works ("en-gb", "en-us+f3", …).
// espeak-ng is looked up only when a call is not answered by the cache.
func Espeak(opts ...Option) *EspeakTTS {
	cfg := newConfig(opts)
	v := cfg.voice
	if v == "" {
		v = DefaultEspeakVoice
	}
	return &EspeakTTS{cfg: cfg, voice: v}
}

var _ voicetest.TTS = (*EspeakTTS)(nil)

// Synthesize speaks req.Text with espeak-ng. Instructions are ignored;
// Speed scales the rate of 175 words per minute (espeak-ng accepts 80 to
// 450).
func (e *EspeakTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	voice := orDefault(req.Voice, e.voice)
	if voice == "" || strings.ContainsAny(voice, " \t\n/\\") || strings.HasPrefix(voice, "-") {
		return pcm.Chunk{}, fmt.Errorf("speech: espeak-ng voice %q is not a voice name (e.g. \"en-us\", \"en-gb+f3\")", voice)
	}
	speed, err := checkTTS(req)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: espeak-ng: %w", err)
	}
	wpm := int(math.Round(espeakWPM * speed))
	if wpm < 80 || wpm > 450 {
		return pcm.Chunk{}, fmt.Errorf("speech: espeak-ng: speed %g gives %d words per minute; espeak-ng accepts 80 to 450 (speed %.2f to %.2f)", speed, wpm, 80.0/espeakWPM, 450.0/espeakWPM)
	}
	key := cache.Key{Kind: "tts", Provider: "espeak", Model: voice,
		Fields: map[string]any{"text": req.Text, "speed": speed}}
	return synthesize(ctx, e.cfg.cache, key, req.Rate, func(ctx context.Context) (cache.Audio, error) {
		prog, err := espeakEngine.resolve(e.cfg)
		if err != nil {
			return cache.Audio{}, err
		}
		return runToWAV(ctx, "espeak-ng", req.Text, func(textFile, wavFile string) []string {
			return []string{"-v", voice, "-s", strconv.Itoa(wpm), "-w", wavFile, "-f", textFile}
		}, prog)
	})
}

// orDefault returns a if it is not empty, else b.
func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// checkTTS validates the fields every engine uses and returns the speed,
// 1 when unset.
func checkTTS(req voicetest.SpeechRequest) (float64, error) {
	if strings.TrimSpace(req.Text) == "" {
		return 0, fmt.Errorf("nothing to say: SpeechRequest.Text is empty")
	}
	if req.Rate < 0 {
		return 0, fmt.Errorf("SpeechRequest.Rate %d is negative; use 0 for the engine's native rate", req.Rate)
	}
	speed := req.Speed
	if speed == 0 {
		speed = 1
	}
	if speed < 0.25 || speed > 4 || math.IsNaN(speed) {
		return 0, fmt.Errorf("SpeechRequest.Speed %g is outside 0.25 to 4", req.Speed)
	}
	return speed, nil
}

// synthesize answers key from c (or produce without a cache) and converts
// the audio to rate, when rate is set. Resampling happens after the cache,
// so one entry serves every rate.
func synthesize(ctx context.Context, c *cache.Cache, key cache.Key, rate int, produce func(context.Context) (cache.Audio, error)) (pcm.Chunk, error) {
	var a cache.Audio
	var err error
	if c == nil {
		a, err = produce(ctx)
	} else {
		a, err = c.Audio(ctx, key, produce)
	}
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: %s tts (%s): %w", key.Provider, key.Model, err)
	}
	ch, err := pcm.FromBytes(a.Rate, a.PCM)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: %s tts (%s) audio: %w", key.Provider, key.Model, err)
	}
	if rate != 0 && rate != ch.Rate {
		if ch, err = pcm.Resample(ch, rate); err != nil {
			return pcm.Chunk{}, fmt.Errorf("speech: %s tts: resample to %d Hz: %w", key.Provider, rate, err)
		}
	}
	return ch, nil
}

// runToWAV writes text to a temporary file, runs prog with the arguments
// args builds (given the text and WAV file names) and reads the WAV it
// wrote. Text never passes through a shell.
func runToWAV(ctx context.Context, name, text string, args func(textFile, wavFile string) []string, prog string) (cache.Audio, error) {
	dir, err := os.MkdirTemp("", "voicetest-"+name+"-")
	if err != nil {
		return cache.Audio{}, fmt.Errorf("speech: %s: temporary directory: %w", name, err)
	}
	defer os.RemoveAll(dir)
	textFile, wavFile := filepath.Join(dir, "text.txt"), filepath.Join(dir, "out.wav")
	if err := os.WriteFile(textFile, []byte(text+"\n"), 0o600); err != nil {
		return cache.Audio{}, fmt.Errorf("speech: %s: %w", name, err)
	}
	if _, err := runBounded(ctx, maxStdout, engineEnv(os.Environ(), dir), prog, args(textFile, wavFile)...); err != nil {
		return cache.Audio{}, err
	}
	ch, err := pcm.ReadWAVFile(wavFile)
	if err != nil {
		return cache.Audio{}, fmt.Errorf("speech: %s wrote no usable WAV: %w", name, err)
	}
	if ch.IsEmpty() {
		return cache.Audio{}, fmt.Errorf("speech: %s produced no audio for %.60q", name, text)
	}
	return cache.Audio{Rate: ch.Rate, PCM: ch.Bytes()}, nil
}
