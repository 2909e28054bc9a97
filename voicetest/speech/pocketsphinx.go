package speech

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// defaultModelDir is where Debian's pocketsphinx-en-us package puts the US
// English model.
const defaultModelDir = "/usr/share/pocketsphinx/model/en-us"

// PocketsphinxRate is the sample rate pocketsphinx's en-us model decodes:
// audio at a higher rate is resampled to it first.
const PocketsphinxRate = pcm.Rate16k

// ErrNarrowband reports audio sampled below 16 kHz, which pocketsphinx's
// wideband model cannot transcribe as it is; with StrictWideband,
// pocketsphinx returns it rather than widening the audio.
var ErrNarrowband = errors.New("speech: pocketsphinx needs wideband audio (16 kHz or more)")

// PocketsphinxSTT is the pocketsphinx speech recognizer (Debian's
// pocketsphinx_continuous with the pocketsphinx-en-us model), run as a
// process. It needs no key. Build it with Pocketsphinx.
type PocketsphinxSTT struct {
	cfg      config
	modelDir string

	dictOnce sync.Once
	dict     map[string]bool
	dictErr  error
}

// Pocketsphinx returns the pocketsphinx engine. Its model directory is
// WithModelDir's, else /usr/share/pocketsphinx/model/en-us. The program
// and model are looked up only when a call is not answered by the cache.
func Pocketsphinx(opts ...Option) *PocketsphinxSTT {
	cfg := newConfig(opts)
	return &PocketsphinxSTT{cfg: cfg, modelDir: orDefault(cfg.modelDir, defaultModelDir)}
}

var _ voicetest.STT = (*PocketsphinxSTT)(nil)

// sttAnswer is what the cache stores for a transcription: the text, and
// the engine that produced it (kept in the entry, not in the key, so a
// replaying machine without the engine computes the same key).
type sttAnswer struct {
	Text     string `json:"text"`
	Language string `json:"language,omitempty"`
	Engine   string `json:"engine,omitempty"`
}

// Transcribe recognizes req.Audio. Audio below 16 kHz (8 kHz telephone
// audio) is widened to 16 kHz by Widen first, so telephone agents
// transcribe out of the box; StrictWideband refuses it with
// ErrNarrowband instead. Higher rates are resampled to 16 kHz. Only
// English (Language "", "en" or "en-*") is supported. With req.Phrases
// (or, when it is empty, WithPhrases) the decoder uses a grammar of any
// sequence of those phrases (normalised as NormalizeWords does; every
// word must be in the model's dictionary), which is far more accurate
// when the speaker is known to say them, and can only answer them: on
// telephone audio, give the phrases. Prompt is ignored. The cache key
// holds the audio as decoded (widened) and the phrases.
func (p *PocketsphinxSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	a := req.Audio
	if err := a.Validate(); err != nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: pocketsphinx: audio: %w", err)
	}
	if a.IsEmpty() {
		return voicetest.Transcription{}, errors.New("speech: pocketsphinx: the audio is empty; send at least some speech")
	}
	if a.Rate < PocketsphinxRate {
		if p.cfg.strictWideband {
			return voicetest.Transcription{}, fmt.Errorf("%w: this audio is %d Hz; without StrictWideband pocketsphinx widens it (speech.Widen), or use an engine that takes 8 kHz such as openai", ErrNarrowband, a.Rate)
		}
		w, err := Widen(a, PocketsphinxRate)
		if err != nil {
			return voicetest.Transcription{}, fmt.Errorf("speech: pocketsphinx: %w", err)
		}
		a = w
	}
	if l := strings.ToLower(req.Language); l != "" && l != "en" && !strings.HasPrefix(l, "en-") {
		return voicetest.Transcription{}, fmt.Errorf("speech: pocketsphinx: language %q is not supported: the installed model is US English; leave Language empty or \"en\"", req.Language)
	}
	var phrases []string
	if len(req.Phrases) == 0 {
		req.Phrases = p.cfg.phrases
	}
	for _, ph := range req.Phrases {
		if w := NormalizeWords(ph); len(w) > 0 {
			phrases = append(phrases, strings.Join(w, " "))
		}
	}
	if len(req.Phrases) > 0 && len(phrases) == 0 {
		return voicetest.Transcription{}, errors.New("speech: pocketsphinx: every phrase in TranscriptionRequest.Phrases is empty")
	}
	slices.Sort(phrases)
	phrases = slices.Compact(phrases)
	fields := map[string]any{"audio": cache.AudioDigest(a.Rate, a.Bytes())}
	if len(phrases) > 0 {
		fields["phrases"] = phrases
	}
	key := cache.Key{Kind: "stt", Provider: "pocketsphinx", Model: filepath.Base(p.modelDir), Fields: fields}
	produce := func(ctx context.Context) (sttAnswer, error) { return p.decode(ctx, a, phrases) }
	var ans sttAnswer
	var err error
	if p.cfg.cache == nil {
		ans, err = produce(ctx)
	} else {
		ans, err = cache.DoJSON(ctx, p.cfg.cache, key, produce)
	}
	if err != nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: pocketsphinx stt: %w", err)
	}
	return voicetest.Transcription{Text: ans.Text, Language: "en"}, nil
}

// modelFiles are the parts of a pocketsphinx model directory.
func modelFiles(dir string) (hmm, lm, dict string) {
	return filepath.Join(dir, "en-us"), filepath.Join(dir, "en-us.lm.bin"), filepath.Join(dir, "cmudict-en-us.dict")
}

// checkModelDir reports a missing model as a *NotInstalledError.
func checkModelDir(dir string) error {
	hmm, lm, dict := modelFiles(dir)
	for _, f := range []string{hmm, lm, dict} {
		if _, err := os.Stat(f); err != nil {
			return &NotInstalledError{Engine: "pocketsphinx", Program: f, Package: "pocketsphinx-en-us", Err: err}
		}
	}
	return nil
}

// decode runs pocketsphinx_continuous on a (already checked to be ≥ 16 kHz).
func (p *PocketsphinxSTT) decode(ctx context.Context, a pcm.Chunk, phrases []string) (sttAnswer, error) {
	prog, err := pocketsphinxEngine.resolve(p.cfg)
	if err != nil {
		return sttAnswer{}, err
	}
	if err := checkModelDir(p.modelDir); err != nil {
		return sttAnswer{}, err
	}
	hmm, lm, dictFile := modelFiles(p.modelDir)
	a16, err := pcm.Resample(a, PocketsphinxRate)
	if err != nil {
		return sttAnswer{}, fmt.Errorf("resample to 16 kHz: %w", err)
	}
	wav, err := pcm.EncodeWAV(a16)
	if err != nil {
		return sttAnswer{}, err
	}
	dir, err := os.MkdirTemp("", "voicetest-pocketsphinx-")
	if err != nil {
		return sttAnswer{}, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	wavFile, logFile := filepath.Join(dir, "in.wav"), filepath.Join(dir, "decode.log")
	if err := os.WriteFile(wavFile, wav, 0o600); err != nil {
		return sttAnswer{}, err
	}
	args := []string{"-infile", wavFile, "-hmm", hmm, "-dict", dictFile, "-samprate", "16000", "-logfn", logFile}
	if len(phrases) > 0 {
		grammar, err := p.grammar(phrases, dictFile)
		if err != nil {
			return sttAnswer{}, err
		}
		gf := filepath.Join(dir, "phrases.jsgf")
		if err := os.WriteFile(gf, []byte(grammar), 0o600); err != nil {
			return sttAnswer{}, err
		}
		args = append(args, "-jsgf", gf)
	} else {
		args = append(args, "-lm", lm)
	}
	out, err := run(ctx, prog, args...)
	if err != nil {
		return sttAnswer{}, fmt.Errorf("%w; log: %s", err, errorLines(readTail(logFile, maxLogTail)))
	}
	var words []string
	for line := range strings.Lines(string(out)) {
		words = append(words, strings.Fields(line)...)
	}
	return sttAnswer{Text: strings.Join(words, " "), Language: "en", Engine: "pocketsphinx_continuous, model " + filepath.Base(p.modelDir)}, nil
}

// maxLogTail bounds how much of a failed decoder's log is read for its
// error lines (a pocketsphinx log runs to tens of kilobytes).
const maxLogTail = 1 << 20

// readTail returns up to the last n bytes of the file at path, or nil when
// it cannot be read.
func readTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(st.Size()-n, 0)
	b, _ := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	return b
}

// errorLines returns the ERROR and FATAL lines of a pocketsphinx log, or
// its tail.
func errorLines(log []byte) string {
	var errs []string
	for line := range strings.Lines(string(log)) {
		if strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "FATAL") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	if len(errs) == 0 {
		return tail(log)
	}
	return tail([]byte(strings.Join(errs, "; ")))
}

// grammar returns a JSGF grammar that accepts any sequence of the phrases,
// after checking that the dictionary knows every word.
func (p *PocketsphinxSTT) grammar(phrases []string, dictFile string) (string, error) {
	p.dictOnce.Do(func() { p.dict, p.dictErr = loadDict(dictFile) })
	if p.dictErr != nil {
		return "", p.dictErr
	}
	var unknown []string
	var b strings.Builder
	b.WriteString("#JSGF V1.0;\ngrammar voicetest;\npublic <utterance> = <phrase>+;\n<phrase> = ")
	for i, ph := range phrases {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString("( ")
		for _, w := range strings.Fields(ph) {
			if !p.dict[w] && !slices.Contains(unknown, w) {
				unknown = append(unknown, w)
			}
			b.WriteString(w)
			b.WriteString(" ")
		}
		b.WriteString(")")
	}
	b.WriteString(";\n")
	if len(unknown) > 0 {
		return "", fmt.Errorf("phrase words not in the pocketsphinx dictionary %s: %s; spell them with dictionary words (e.g. as they sound)", dictFile, strings.Join(unknown, ", "))
	}
	return b.String(), nil
}

// loadDict reads the words of a CMU pronouncing dictionary ("word PH ON",
// alternates as "word(2) …").
func loadDict(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NotInstalledError{Engine: "pocketsphinx", Program: path, Package: "pocketsphinx-en-us", Err: err}
		}
		return nil, err
	}
	defer f.Close()
	words := make(map[string]bool, 140000)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w, _, _ := strings.Cut(sc.Text(), " ")
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		if w != "" {
			words[w] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return words, nil
}
