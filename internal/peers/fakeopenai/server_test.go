package fakeopenai

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
)

// post sends body to path with the server's key and returns the status and
// answer.
func post(t *testing.T, s *Server, path, contentType string, body []byte) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.BaseURL()+strings.TrimPrefix(path, "/v1/"), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, b, res.Header
}

func postJSON(t *testing.T, s *Server, path, body string) (int, []byte) {
	t.Helper()
	st, b, _ := post(t, s, path, "application/json", []byte(body))
	return st, b
}

// apiError decodes an OpenAI-shaped error body, failing if it is not one.
func apiError(t *testing.T, body []byte) (msg, typ string, param any) {
	t.Helper()
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Param   any    `json:"param"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "body %s", body)
	require.NotNil(t, e.Error, "body %s is not an OpenAI error", body)
	return e.Error.Message, e.Error.Type, e.Error.Param
}

func TestAuthMethodAndPath(t *testing.T) {
	s := New(t, WithAPIKey("sk-mine"))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.BaseURL()+"chat/completions", strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	msg, _, _ := apiError(t, body)
	assert.Contains(t, msg, "Incorrect API key")

	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, s.BaseURL()+"chat/completions", nil)
	req.Header.Set("Authorization", "Bearer sk-mine")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)

	st, body := postJSON(t, s, "/v1/embeddings", `{}`)
	assert.Equal(t, http.StatusNotFound, st)
	msg, _, _ = apiError(t, body)
	assert.Contains(t, msg, "test double")

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []int{401, 405, 404}, []int{reqs[0].Status, reqs[1].Status, reqs[2].Status})
}

func TestSpeechValidation(t *testing.T) {
	s := New(t)
	for _, tc := range []struct{ name, body, param, want string }{
		{"unknown field", `{"model":"tts-1","input":"hi","voice":"nova","response_format":"pcm","pitch":2}`, "pitch", "Unrecognized request argument supplied: pitch"},
		{"no model", `{"input":"hi","voice":"nova","response_format":"pcm"}`, "model", "Missing required parameter: 'model'"},
		{"no input", `{"model":"tts-1","voice":"nova","response_format":"pcm"}`, "input", "Missing required parameter: 'input'"},
		{"empty input", `{"model":"tts-1","input":" ","voice":"nova","response_format":"pcm"}`, "input", "empty string"},
		{"input type", `{"model":"tts-1","input":5,"voice":"nova","response_format":"pcm"}`, "input", "expected a string, but got a number"},
		{"no voice", `{"model":"tts-1","input":"hi","response_format":"pcm"}`, "voice", "Missing required parameter: 'voice'"},
		{"bad voice", `{"model":"tts-1","input":"hi","voice":"robot","response_format":"pcm"}`, "voice", "Invalid value for 'voice'"},
		{"sse on tts-1", `{"model":"tts-1","input":"hi","voice":"nova","stream_format":"sse"}`, "stream_format", "not supported for model \"tts-1\""},
		{"bad stream format", `{"model":"gpt-4o-mini-tts","input":"hi","voice":"nova","stream_format":"chunks"}`, "stream_format", "Invalid value for 'stream_format'"},
		{"bad format", `{"model":"tts-1","input":"hi","voice":"nova","response_format":"ogg"}`, "response_format", "Invalid value for 'response_format'"},
		{"speed", `{"model":"tts-1","input":"hi","voice":"nova","response_format":"pcm","speed":5}`, "speed", "between 0.25 and 4.0"},
		{"instructions on tts-1", `{"model":"tts-1","input":"hi","voice":"nova","response_format":"pcm","instructions":"calm"}`, "instructions", "not supported"},
		{"not an object", `[1]`, "", "could not parse the JSON body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := postJSON(t, s, "/v1/audio/speech", tc.body)
			assert.Equal(t, http.StatusBadRequest, st)
			msg, typ, param := apiError(t, body)
			assert.Contains(t, msg, tc.want)
			assert.Equal(t, "invalid_request_error", typ)
			if tc.param != "" {
				assert.Equal(t, tc.param, param)
			}
		})
	}
	st, _, _ := post(t, s, "/v1/audio/speech", "text/plain", []byte(`{}`))
	assert.Equal(t, http.StatusBadRequest, st)

	ok := `{"model":"gpt-4o-mini-tts","input":"Hello there.","voice":{"id":"voice_123"},"response_format":"pcm","speed":2}`
	st, a, hdr := post(t, s, "/v1/audio/speech", "application/json", []byte(ok))
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "audio/pcm", hdr.Get("Content-Type"))
	st, b, _ := post(t, s, "/v1/audio/speech", "application/json", []byte(ok))
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, a, b, "equal requests give equal audio")
	assert.Equal(t, 0, len(a)%2)
	// 0.2 s + 60 ms per character, halved by speed 2.
	assert.Equal(t, int(SpeechRate*(0.2+0.06*12)/2), len(a)/2)
	other := SynthesizePCM(SpeechRequest{Model: "gpt-4o-mini-tts", Input: "Hello there.", Voice: "voice_123", Speed: 1})
	assert.NotEqual(t, a, other, "speed changes the audio")
}

// form builds a multipart body; a file entry is written with the given
// filename and content type (an empty type omits the header).
type formFile struct {
	name, filename, contentType string
	data                        []byte
}

func multipartBody(t *testing.T, fields map[string]string, files ...formFile) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + f.name + `"`
		if f.filename != "" {
			disp += `; filename="` + f.filename + `"`
		}
		h.Set("Content-Disposition", disp)
		if f.contentType != "" {
			h.Set("Content-Type", f.contentType)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, _ = w.Write(f.data)
	}
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), buf.Bytes()
}

// wavOf wraps PCM16 bytes at SpeechRate in a WAV file.
func wavOf(t *testing.T, b []byte) []byte {
	t.Helper()
	c, err := pcm.FromBytes(SpeechRate, b)
	require.NoError(t, err)
	w, err := pcm.EncodeWAV(c)
	require.NoError(t, err)
	return w
}

func TestTranscriptionValidation(t *testing.T) {
	s := New(t)
	wav := wavOf(t, make([]byte, 3200))
	good := formFile{"file", "a.wav", "audio/wav", wav}
	for _, tc := range []struct {
		name   string
		fields map[string]string
		files  []formFile
		want   string
	}{
		{"no file", map[string]string{"model": "whisper-1"}, nil, "Missing required parameter: 'file'"},
		{"no filename", map[string]string{"model": "whisper-1"}, []formFile{{"file", "", "audio/wav", wav}}, "no filename"},
		{"bad extension", map[string]string{"model": "whisper-1"}, []formFile{{"file", "a.txt", "audio/wav", wav}}, "Invalid file format"},
		{"no content type", map[string]string{"model": "whisper-1"}, []formFile{{"file", "a.wav", "", wav}}, "no Content-Type"},
		{"wrong content type", map[string]string{"model": "whisper-1"}, []formFile{{"file", "a.wav", "text/plain", wav}}, "expected an audio/* type"},
		{"not a wav", map[string]string{"model": "whisper-1"}, []formFile{{"file", "a.wav", "audio/wav", bytes.Repeat([]byte("x"), 100)}}, "not a RIFF/WAVE"},
		{"no model", nil, []formFile{good}, "Missing required parameter: 'model'"},
		{"bcp47 language", map[string]string{"model": "whisper-1", "language": "en-US"}, []formFile{good}, "ISO-639-1"},
		{"unknown field", map[string]string{"model": "whisper-1", "speaker": "x"}, []formFile{good}, "Unrecognized request argument supplied: speaker"},
		{"temperature", map[string]string{"model": "whisper-1", "temperature": "hot"}, []formFile{good}, "temperature"},
		{"diarized", map[string]string{"model": "whisper-1", "response_format": "diarized_json"}, []formFile{good}, "does not produce"},
		{"verbose on gpt-4o", map[string]string{"model": "gpt-4o-transcribe", "response_format": "verbose_json"}, []formFile{good}, "not compatible with model"},
		{"words without verbose", map[string]string{"model": "whisper-1", "timestamp_granularities[]": "word"}, []formFile{good}, "requires response_format 'verbose_json'"},
		{"bad granularity", map[string]string{"model": "whisper-1", "response_format": "verbose_json", "timestamp_granularities[]": "char"}, []formFile{good}, "'word' and 'segment'"},
		{"bad stream", map[string]string{"model": "gpt-4o-transcribe", "stream": "yes"}, []formFile{good}, "Expected a boolean"},
		{"logprobs on whisper", map[string]string{"model": "whisper-1", "include[]": "logprobs"}, []formFile{good}, "logprobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := multipartBody(t, tc.fields, tc.files...)
			st, ans, _ := post(t, s, "/v1/audio/transcriptions", ct, body)
			assert.Equal(t, http.StatusBadRequest, st)
			msg, _, _ := apiError(t, ans)
			assert.Contains(t, msg, tc.want)
		})
	}
	st, _, _ := post(t, s, "/v1/audio/transcriptions", "application/json", []byte(`{"model":"whisper-1"}`))
	assert.Equal(t, http.StatusBadRequest, st, "JSON is not multipart")

	// Audio this server did not synthesize, and no handler: a clear 500.
	ct, body := multipartBody(t, map[string]string{"model": "whisper-1"}, good)
	st, ans, _ := post(t, s, "/v1/audio/transcriptions", ct, body)
	assert.Equal(t, http.StatusInternalServerError, st)
	msg, _, _ := apiError(t, ans)
	assert.Contains(t, msg, "HandleTranscription")

	// Synthesized audio round-trips; response formats.
	audio := SynthesizePCM(SpeechRequest{Model: "tts-1", Input: "Hi there.", Voice: "nova", Speed: 1})
	st, got, _ := post(t, s, "/v1/audio/speech", "application/json", []byte(`{"model":"tts-1","input":"Hi there.","voice":"nova","response_format":"pcm"}`))
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, audio, got)
	for format, want := range map[string]string{"json": `{"text":"Hi there.","usage":{"seconds":1,"type":"duration"}}`, "text": "Hi there.\n",
		"srt": "1\n00:00:00,000 --> 00:00:00,740\nHi there.\n\n", "vtt": "WEBVTT\n\n00:00:00.000 --> 00:00:00.740\nHi there.\n\n"} {
		ct, body := multipartBody(t, map[string]string{"model": "whisper-1", "response_format": format, "language": "en"},
			formFile{"file", "turn.wav", "audio/wav", wavOf(t, audio)})
		st, ans, _ := post(t, s, "/v1/audio/transcriptions", ct, body)
		require.Equal(t, http.StatusOK, st, "%s", ans)
		assert.Equal(t, want, string(ans))
	}

	s.HandleTranscription(func(r TranscriptionRequest) (string, error) {
		if r.Prompt == "fail" {
			return "", &APIError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Message: "slow down"}
		}
		return "handled " + r.Filename, nil
	})
	ct, body = multipartBody(t, map[string]string{"model": "whisper-1", "prompt": "fail"}, good)
	st, ans, _ = post(t, s, "/v1/audio/transcriptions", ct, body)
	assert.Equal(t, http.StatusTooManyRequests, st)
	msg, typ, _ := apiError(t, ans)
	assert.Equal(t, "slow down", msg)
	assert.Equal(t, "rate_limit_error", typ)
	ct, body = multipartBody(t, map[string]string{"model": "whisper-1", "response_format": "verbose_json"}, good)
	st, ans, _ = post(t, s, "/v1/audio/transcriptions", ct, body)
	assert.Equal(t, http.StatusOK, st)
	assert.Contains(t, string(ans), `"text":"handled a.wav"`)
}

func TestChatValidation(t *testing.T) {
	s := New(t)
	tool := `{"type":"function","function":{"name":"book","parameters":{"type":"object"}}}`
	user := `{"role":"user","content":"hi"}`
	for _, tc := range []struct{ name, body, want string }{
		{"no model", `{"messages":[` + user + `]}`, "model parameter"},
		{"no messages", `{"model":"m"}`, "Missing required parameter: 'messages'"},
		{"empty messages", `{"model":"m","messages":[]}`, "empty array"},
		{"bad role", `{"model":"m","messages":[{"role":"bot","content":"x"}]}`, "Invalid value: 'bot'"},
		{"user without content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content"},
		{"orphan tool", `{"model":"m","messages":[` + user + `,{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "must be a response to a preceeding message"},
		{"tool call without id", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"book","arguments":"{}"}}]}]}`, "tool_calls[0].id"},
		{"choice without tools", `{"model":"m","messages":[` + user + `],"tool_choice":"auto"}`, "only allowed when 'tools' are specified"},
		{"bad choice", `{"model":"m","messages":[` + user + `],"tools":[` + tool + `],"tool_choice":"always"}`, "Invalid value for 'tool_choice'"},
		{"forced unknown", `{"model":"m","messages":[` + user + `],"tools":[` + tool + `],"tool_choice":{"type":"function","function":{"name":"pay"}}}`, `function "pay" is not among the declared tools`},
		{"bad tool name", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"book it"}}]}`, "does not match pattern"},
		{"params not object", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"b","parameters":[]}}]}`, "expected an object"},
		{"schema missing", `{"model":"m","messages":[` + user + `],"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
		{"schema not object", `{"model":"m","messages":[` + user + `],"response_format":{"type":"json_schema","json_schema":{"name":"v","schema":"x"}}}`, "expected an object"},
		{"bad format type", `{"model":"m","messages":[` + user + `],"response_format":{"type":"yaml"}}`, "response_format.type"},
		{"temperature", `{"model":"m","messages":[` + user + `],"temperature":3}`, "between 0 and 2"},
		{"max tokens", `{"model":"m","messages":[` + user + `],"max_tokens":0}`, "Expected a value >= 1"},
		{"stream options alone", `{"model":"m","messages":[` + user + `],"stream_options":{"include_usage":true}}`, "only allowed when 'stream' is enabled"},
		{"stream not bool", `{"model":"m","messages":[` + user + `],"stream":"yes"}`, "expected a boolean"},
		{"unknown field", `{"model":"m","messages":[` + user + `],"functions_v2":[]}`, "Unrecognized request argument supplied: functions_v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := postJSON(t, s, "/v1/chat/completions", tc.body)
			assert.Equal(t, http.StatusBadRequest, st)
			msg, typ, _ := apiError(t, body)
			assert.Contains(t, msg, tc.want)
			assert.Equal(t, "invalid_request_error", typ)
		})
	}
}

func TestChatReplies(t *testing.T) {
	s := New(t)
	tools := `"tools":[{"type":"function","function":{"name":"book","parameters":{"type":"object"}}}]`
	forced := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"book "},{"type":"text","text":"it"}]}],` + tools + `,"tool_choice":{"type":"function","function":{"name":"book"}}}`

	// No script: a 500 saying what to do.
	st, body := postJSON(t, s, "/v1/chat/completions", forced)
	assert.Equal(t, http.StatusInternalServerError, st)
	msg, _, _ := apiError(t, body)
	assert.Contains(t, msg, "QueueChat or HandleChat")

	s.QueueChat(
		ChatReply{Content: "I will not."},                                               // ignores the forced tool
		ChatReply{ToolCalls: []ToolCall{{Name: "pay", Arguments: `{}`}}},                // undeclared tool
		ChatReply{ToolCalls: []ToolCall{{Name: "book", Arguments: `{"party":2}`}}},      // good
		ChatReply{Error: &APIError{Status: 503, Type: "server_error", Message: "busy"}}, // scripted failure
	)
	st, body = postJSON(t, s, "/v1/chat/completions", forced)
	assert.Equal(t, http.StatusInternalServerError, st)
	msg, _, _ = apiError(t, body)
	assert.Contains(t, msg, `forces tool "book"`)
	st, body = postJSON(t, s, "/v1/chat/completions", forced)
	assert.Equal(t, http.StatusInternalServerError, st)
	msg, _, _ = apiError(t, body)
	assert.Contains(t, msg, `calls tool "pay"`)

	st, body = postJSON(t, s, "/v1/chat/completions", forced)
	require.Equal(t, http.StatusOK, st, "%s", body)
	var res struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &res))
	assert.Equal(t, "chat.completion", res.Object)
	assert.Equal(t, Model, res.Model, "the double names itself as the producer, not the model asked for")
	require.Len(t, res.Choices, 1)
	c := res.Choices[0]
	assert.Equal(t, "tool_calls", c.FinishReason)
	assert.Nil(t, c.Message.Content)
	require.Len(t, c.Message.ToolCalls, 1)
	assert.NotEmpty(t, c.Message.ToolCalls[0].ID)
	assert.Equal(t, "function", c.Message.ToolCalls[0].Type)
	assert.Equal(t, "book", c.Message.ToolCalls[0].Function.Name)
	assert.Equal(t, `{"party":2}`, c.Message.ToolCalls[0].Function.Arguments)

	st, body = postJSON(t, s, "/v1/chat/completions", forced)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	msg, _, _ = apiError(t, body)
	assert.Equal(t, "busy", msg)

	// A handler sees the parsed request, content parts joined.
	var seen ChatRequest
	s.HandleChat(func(r ChatRequest) (ChatReply, error) {
		seen = r
		return ChatReply{Content: "not json"}, nil
	})
	schema := `{"model":"m","messages":[{"role":"user","content":"rate it"}],"response_format":{"type":"json_schema","json_schema":{"name":"rating","schema":{"type":"object"},"strict":true}},"seed":3,"max_completion_tokens":9}`
	st, body = postJSON(t, s, "/v1/chat/completions", schema)
	assert.Equal(t, http.StatusInternalServerError, st, "a JSON-schema request cannot get non-JSON content")
	msg, _, _ = apiError(t, body)
	assert.Contains(t, msg, "not JSON")
	require.NotNil(t, seen.ResponseFormat)
	assert.Equal(t, "rating", seen.ResponseFormat.SchemaName)
	require.NotNil(t, seen.ResponseFormat.Strict)
	assert.True(t, *seen.ResponseFormat.Strict)
	require.NotNil(t, seen.Seed)
	assert.Equal(t, int64(3), *seen.Seed)
	require.NotNil(t, seen.MaxTokens)
	assert.Equal(t, 9, *seen.MaxTokens)

	postJSON(t, s, "/v1/chat/completions", forced)
	assert.Equal(t, "book it", seen.Messages[0].Content)
	assert.True(t, seen.ForcedTool)
	assert.Equal(t, "book", seen.ToolChoice)
}
