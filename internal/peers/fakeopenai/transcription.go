package fakeopenai

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	text, found := "", false
	for _, sp := range s.spoken {
		if bytes.Contains(req.File, sp.pcm) {
			text, found = sp.text, true
			break
		}
	}
	s.mu.Unlock()
	if h != nil {
		var err error
		if text, err = h(req); err != nil {
			writeError(w, errorFrom(err))
			return
		}
	} else if !found {
		writeError(w, serverError("no transcription handler is set and %q is not audio this server synthesized; call HandleTranscription", req.Filename))
		return
	}
	switch req.ResponseFormat {
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text+"\n")
	case "verbose_json":
		writeJSON(w, http.StatusOK, map[string]any{"task": "transcribe", "language": "english", "duration": 0, "text": text, "segments": []any{}})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"text": text})
	}
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
	case "json", "text", "verbose_json":
	case "srt", "vtt", "diarized_json":
		return req, badRequest("response_format", "The fakeopenai test double does not produce response_format %q; use json, text or verbose_json.", req.ResponseFormat)
	default:
		return req, badRequest("response_format", "Invalid value for 'response_format': %q.", req.ResponseFormat)
	}
	return req, nil
}
