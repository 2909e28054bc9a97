package fakeopenai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TranscriptionRequest is a validated /v1/audio/transcriptions request.
type TranscriptionRequest struct {
	Model, Language, Prompt string
	// ResponseFormat is "json" when the request did not set it.
	ResponseFormat string
	// Temperature is nil when the request did not set it.
	Temperature *float64
	// Filename and ContentType are those of the file part.
	Filename, ContentType string
	// File is the uploaded audio file, as sent.
	File []byte
	// Stream is the stream field ("true"); the Server streams the answer
	// as server-sent events unless the model is whisper-1, for which
	// the API ignores it.
	Stream bool
	// Granularities are the timestamp_granularities[] asked for ("word",
	// "segment"); only verbose_json takes them.
	Granularities []string
	// Include are the include[] fields (e.g. "logprobs").
	Include []string
}

// whisperFormats are the response formats whisper-1 produces; the
// gpt-4o transcribe models produce json only ("For gpt-4o-transcribe and
// gpt-4o-mini-transcribe, the only supported format is json": the API
// reference, as the openai SDK's TranscriptionCreateParams document it).
// Models the double does not know (an OpenAI-compatible server's) may ask
// for any format.
var whisperFormats = []string{"json", "text", "srt", "vtt", "verbose_json"}

// gpt4oTranscribe reports whether model is one of OpenAI's gpt-4o
// transcription models.
func gpt4oTranscribe(model string) bool {
	return strings.HasPrefix(model, "gpt-4o-transcribe") || strings.HasPrefix(model, "gpt-4o-mini-transcribe")
}

var audioExtensions = []string{"flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"}

var transcriptionFields = []string{"file", "model", "language", "prompt", "response_format", "temperature",
	"timestamp_granularities[]", "include[]", "chunking_strategy", "stream", "known_speaker_names[]", "known_speaker_references[]"}

var iso639 = regexp.MustCompile(`^[a-z]{2}$`)

func (s *Server) serveTranscription(w http.ResponseWriter, r *http.Request) {
	req, apiErr := parseTranscription(r)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	s.mu.Lock()
	h := s.sttHandler
	var found *spokenAudio
	for i := len(s.spoken) - 1; i >= 0; i-- {
		sp := &s.spoken[i]
		if bytes.Equal(req.File, sp.encoded) || len(sp.pcm) > 0 && bytes.Contains(req.File, sp.pcm) {
			found = sp
			break
		}
	}
	text, dur := "", time.Duration(0)
	if found != nil {
		text, dur = found.text, time.Duration(int64(len(found.pcm))*int64(time.Second)/(2*SpeechRate))
	}
	s.mu.Unlock()
	if h != nil {
		var err error
		if text, err = h(req); err != nil {
			writeError(w, errorFrom(err))
			return
		}
	} else if found == nil {
		writeError(w, serverError("no transcription handler is set and %q is not audio this server synthesized; call HandleTranscription", req.Filename))
		return
	}
	if d, ok := wavDuration(req.File); ok {
		dur = d
	}
	words := strings.Fields(text)
	if dur <= 0 {
		dur = time.Duration(len(words))*400*time.Millisecond + 200*time.Millisecond // 150 words a minute
	}
	seconds := dur.Seconds()
	if req.Stream && req.Model != "whisper-1" {
		// Server-sent events: transcript.text.delta per word, then
		// transcript.text.done with the text and the usage. ("Streaming
		// is not supported for the whisper-1 model and will be
		// ignored": whisper-1 answers as if stream were false.)
		sse := newSSE(w)
		for i, word := range words {
			if i < len(words)-1 {
				word += " "
			}
			if sse.event(map[string]any{"type": "transcript.text.delta", "delta": word}) != nil {
				return
			}
		}
		in := int(math.Ceil(seconds * 10))
		_ = sse.event(map[string]any{"type": "transcript.text.done", "text": text,
			"usage": map[string]any{"type": "tokens", "input_tokens": in, "output_tokens": len(words), "total_tokens": in + len(words)}})
		return
	}
	timed := timeWords(words, seconds)
	switch req.ResponseFormat {
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text+"\n")
	case "srt", "vtt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, subtitles(req.ResponseFormat, text, seconds))
	case "verbose_json":
		// Segments always; words only when asked for (API reference,
		// timestamp_granularities).
		ans := map[string]any{"task": "transcribe", "language": "english", "duration": seconds, "text": text,
			"segments": []any{map[string]any{"id": 0, "seek": 0, "start": 0.0, "end": seconds, "text": text, "tokens": []int{},
				"temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 1.0, "no_speech_prob": 0.0}},
			"usage": map[string]any{"type": "duration", "seconds": math.Ceil(seconds)}}
		if slices.Contains(req.Granularities, "word") {
			ans["words"] = timed
		}
		writeJSON(w, http.StatusOK, ans)
	default:
		usage := map[string]any{"type": "duration", "seconds": math.Ceil(seconds)}
		if gpt4oTranscribe(req.Model) {
			in := int(math.Ceil(seconds * 10))
			usage = map[string]any{"type": "tokens", "input_tokens": in, "output_tokens": len(words), "total_tokens": in + len(words)}
		}
		writeJSON(w, http.StatusOK, map[string]any{"text": text, "usage": usage})
	}
}

// timedWord is a word of verbose_json with its times in seconds.
type timedWord struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// timeWords places words over an utterance of seconds, in order, each
// taking time in proportion to its length, with the 0.1 s of silence the
// double's speech begins and ends with. The double cannot hear where the
// words are; the times are consistent, not measured.
func timeWords(words []string, seconds float64) []timedWord {
	var chars int
	for _, w := range words {
		chars += len(w) + 1
	}
	start, span := 0.1, max(seconds-0.2, 0)
	if span == 0 {
		start, span = 0, seconds
	}
	out := make([]timedWord, 0, len(words))
	at := start
	for _, w := range words {
		d := span * float64(len(w)+1) / float64(chars)
		out = append(out, timedWord{Word: w, Start: round3(at), End: round3(at + d*float64(len(w))/float64(len(w)+1))})
		at += d
	}
	return out
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// subtitles returns text as one SubRip or WebVTT cue over the utterance.
func subtitles(format, text string, seconds float64) string {
	stamp := func(s float64, sep string) string {
		ms := int64(math.Round(s * 1000))
		return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
	}
	if format == "vtt" {
		return fmt.Sprintf("WEBVTT\n\n%s --> %s\n%s\n\n", stamp(0, "."), stamp(seconds, "."), text)
	}
	return fmt.Sprintf("1\n%s --> %s\n%s\n\n", stamp(0, ","), stamp(seconds, ","), text)
}

func parseTranscription(r *http.Request) (TranscriptionRequest, *APIError) {
	req := TranscriptionRequest{ResponseFormat: "json"}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return req, badRequest("", "Content-Type must be multipart/form-data with a boundary, got %q", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	seen := map[string]bool{}
	var hasFile bool
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return req, badRequest("", "Malformed multipart body: %v", err)
		}
		name := part.FormName()
		data, err := io.ReadAll(part)
		if err != nil {
			return req, badRequest(name, "Malformed multipart part %q: %v", name, err)
		}
		if !slices.Contains(transcriptionFields, name) {
			return req, badRequest(name, "Unrecognized request argument supplied: %s", name)
		}
		if seen[name] && !strings.HasSuffix(name, "[]") {
			return req, badRequest(name, "Duplicate parameter: '%s'.", name)
		}
		seen[name] = true
		if name == "file" {
			hasFile = true
			req.Filename = part.FileName()
			req.ContentType = part.Header.Get("Content-Type")
			req.File = data
			continue
		}
		if part.FileName() != "" {
			return req, badRequest(name, "Parameter '%s' must be a form field, not a file.", name)
		}
		v := string(data)
		switch name {
		case "model":
			req.Model = v
		case "language":
			req.Language = v
		case "prompt":
			req.Prompt = v
		case "response_format":
			req.ResponseFormat = v
		case "temperature":
			t, err := strconv.ParseFloat(v, 64)
			if err != nil || t < 0 || t > 1 {
				return req, badRequest("temperature", "Invalid 'temperature': %q. Expected a number between 0 and 1.", v)
			}
			req.Temperature = &t
		case "stream":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return req, badRequest("stream", "Invalid 'stream': %q. Expected a boolean.", v)
			}
			req.Stream = b
		case "timestamp_granularities[]":
			if v != "word" && v != "segment" {
				return req, badRequest(name, "Invalid value for 'timestamp_granularities[]': %q. Supported values are: 'word' and 'segment'.", v)
			}
			req.Granularities = append(req.Granularities, v)
		case "include[]":
			req.Include = append(req.Include, v)
		}
	}
	if !hasFile {
		return req, badRequest("file", "Missing required parameter: 'file'.")
	}
	if req.Filename == "" {
		return req, badRequest("file", "The 'file' part has no filename; the API needs one (e.g. \"audio.wav\") to tell the format.")
	}
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(req.Filename)), ".")
	if !slices.Contains(audioExtensions, ext) {
		return req, badRequest("file", "Invalid file format %q. Supported formats: %s", req.Filename, strings.Join(audioExtensions, ", "))
	}
	if req.ContentType == "" {
		return req, badRequest("file", "The 'file' part has no Content-Type header.")
	}
	if !strings.HasPrefix(req.ContentType, "audio/") && req.ContentType != "application/octet-stream" {
		return req, badRequest("file", "The 'file' part has Content-Type %q; expected an audio/* type.", req.ContentType)
	}
	if ext == "wav" && (len(req.File) < 44 || string(req.File[0:4]) != "RIFF" || string(req.File[8:12]) != "WAVE") {
		return req, badRequest("file", "Invalid file: %q is not a RIFF/WAVE file (or is shorter than a WAV header).", req.Filename)
	}
	if req.Model == "" {
		return req, badRequest("model", "Missing required parameter: 'model'.")
	}
	if req.Language != "" && !iso639.MatchString(req.Language) {
		return req, badRequest("language", "Invalid language %q. Language parameter must be specified in ISO-639-1 format.", req.Language)
	}
	switch req.ResponseFormat {
	case "json", "text", "srt", "vtt", "verbose_json":
	case "diarized_json":
		return req, badRequest("response_format", "The fakeopenai test double does not produce response_format %q (it has no speakers to tell apart); use json, text, srt, vtt or verbose_json.", req.ResponseFormat)
	default:
		return req, badRequest("response_format", "Invalid value for 'response_format': %q.", req.ResponseFormat)
	}
	switch {
	case req.Model == "whisper-1" && !slices.Contains(whisperFormats, req.ResponseFormat),
		gpt4oTranscribe(req.Model) && req.ResponseFormat != "json":
		return req, badRequest("response_format", "response_format '%s' is not compatible with model '%s'.", req.ResponseFormat, req.Model)
	case len(req.Granularities) > 0 && req.ResponseFormat != "verbose_json":
		return req, badRequest("timestamp_granularities", "timestamp_granularities requires response_format 'verbose_json', not '%s'.", req.ResponseFormat)
	case slices.Contains(req.Include, "logprobs") && (!gpt4oTranscribe(req.Model) || req.ResponseFormat != "json"):
		return req, badRequest("include", "include 'logprobs' works only with response_format 'json' and the gpt-4o transcribe models.")
	}
	return req, nil
}
