package fakeopenai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Voices are the built-in voice names /v1/audio/speech accepts.
var voices = []string{"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"}

// SpeechRequest is a validated /v1/audio/speech request.
type SpeechRequest struct {
	// ResponseFormat is "mp3" when the request did not set it, as the
	// API's default.
	Model, Input, Voice, Instructions, ResponseFormat string
	// StreamFormat is "audio" (the default: the file as the body) or
	// "sse" (server-sent events of base64 audio).
	StreamFormat string
	// Speed is 1 when the request did not set it.
	Speed float64
}

// sseChunk is the audio bytes per speech.audio.delta event.
const sseChunk = 4800

func (s *Server) serveSpeech(w http.ResponseWriter, r *http.Request) {
	req, apiErr := parseSpeech(r)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	pcm := SynthesizePCM(req)
	body, contentType, err := encodeSpeech(r.Context(), req.ResponseFormat, pcm)
	if err != nil {
		writeError(w, serverError("%v", err))
		return
	}
	s.remember(spokenAudio{pcm: pcm, encoded: body, text: req.Input})
	if req.StreamFormat == "sse" {
		// speech.audio.delta events carry the audio in base64 pieces,
		// then speech.audio.done its usage (API reference, "Stream
		// events" of /v1/audio/speech).
		sse := newSSE(w)
		for off := 0; off < len(body); off += sseChunk {
			if sse.event(map[string]any{"type": "speech.audio.delta", "audio": base64.StdEncoding.EncodeToString(body[off:min(off+sseChunk, len(body))])}) != nil {
				return
			}
		}
		in := len(strings.Fields(req.Input))
		out := (len(body) + sseChunk - 1) / sseChunk
		_ = sse.event(map[string]any{"type": "speech.audio.done", "usage": map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out}})
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func parseSpeech(r *http.Request) (SpeechRequest, *APIError) {
	f, e := decodeJSONObject(r, "model", "input", "voice", "instructions", "response_format", "speed", "stream_format")
	if e != nil {
		return SpeechRequest{}, e
	}
	req := SpeechRequest{Speed: 1, ResponseFormat: "mp3", StreamFormat: "audio"}
	if ok, e := field(f, "model", &req.Model, "a string"); e != nil {
		return req, e
	} else if !ok || req.Model == "" {
		return req, badRequest("model", "Missing required parameter: 'model'.")
	}
	if ok, e := field(f, "input", &req.Input, "a string"); e != nil {
		return req, e
	} else if !ok {
		return req, badRequest("input", "Missing required parameter: 'input'.")
	}
	if strings.TrimSpace(req.Input) == "" {
		return req, badRequest("input", "Invalid 'input': empty string. Expected a string with minimum length 1.")
	}
	if n := utf8.RuneCountInString(req.Input); n > 4096 {
		return req, badRequest("input", "Invalid 'input': string too long. Expected a string with maximum length 4096, but got a string with length %d instead.", n)
	}
	raw, ok := f["voice"]
	if !ok {
		return req, badRequest("voice", "Missing required parameter: 'voice'.")
	}
	var custom struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &req.Voice); err == nil {
		if !slices.Contains(voices, req.Voice) {
			return req, badRequest("voice", "Invalid value for 'voice': %q. Supported values are: %s.", req.Voice, strings.Join(voices, ", "))
		}
	} else if err := json.Unmarshal(raw, &custom); err == nil && strings.HasPrefix(custom.ID, "voice_") {
		req.Voice = custom.ID
	} else {
		return req, badRequest("voice", "Invalid type for 'voice': expected a voice name or an object {\"id\": \"voice_…\"}, but got %s.", jsonKind(raw))
	}
	if _, e := field(f, "instructions", &req.Instructions, "a string"); e != nil {
		return req, e
	}
	if req.Instructions != "" && (req.Model == "tts-1" || req.Model == "tts-1-hd") {
		return req, badRequest("instructions", "Instructions are not supported with model %q; use gpt-4o-mini-tts.", req.Model)
	}
	if ok, e := field(f, "speed", &req.Speed, "a number"); e != nil {
		return req, e
	} else if ok && (req.Speed < 0.25 || req.Speed > 4) {
		return req, badRequest("speed", "Invalid 'speed': %g. Expected a value between 0.25 and 4.0.", req.Speed)
	}
	if _, e := field(f, "response_format", &req.ResponseFormat, "a string"); e != nil {
		return req, e
	}
	if _, ok := speechFormats[req.ResponseFormat]; !ok {
		return req, badRequest("response_format", "Invalid value for 'response_format': %q. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.", req.ResponseFormat)
	}
	if _, e := field(f, "stream_format", &req.StreamFormat, "a string"); e != nil {
		return req, e
	}
	switch req.StreamFormat {
	case "audio":
	case "sse":
		if req.Model == "tts-1" || req.Model == "tts-1-hd" {
			return req, badRequest("stream_format", "stream_format 'sse' is not supported for model %q; use gpt-4o-mini-tts or stream_format 'audio'.", req.Model)
		}
	default:
		return req, badRequest("stream_format", "Invalid value for 'stream_format': %q. Supported values are: 'sse' and 'audio'.", req.StreamFormat)
	}
	return req, nil
}

// SynthesizePCM returns the audio the Server answers for req: 24 kHz PCM16
// little-endian tones whose pitch depends on every field of the request and
// whose length grows with the input (about 60 ms per character, scaled by
// 1/Speed). Equal requests give equal bytes.
func SynthesizePCM(req SpeechRequest) []byte {
	speed := req.Speed
	if speed <= 0 {
		speed = 1
	}
	seed := digest([]byte(req.Model + "\x00" + req.Voice + "\x00" + req.Instructions + "\x00" +
		strconv.FormatFloat(speed, 'g', -1, 64) + "\x00" + req.Input))
	f1 := 120 + float64(hexVal(seed[0:4])%200)
	f2 := 600 + float64(hexVal(seed[4:8])%1400)
	n := int(float64(SpeechRate) * (0.2 + 0.06*float64(utf8.RuneCountInString(req.Input))) / speed)
	out := make([]byte, 2*n)
	for i := range n {
		t := float64(i) / SpeechRate
		v := 6000*math.Sin(2*math.Pi*f1*t) + 3000*math.Sin(2*math.Pi*f2*t)
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(math.Round(v))))
	}
	return out
}

func hexVal(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}
