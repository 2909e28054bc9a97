package fakeopenai

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sseData returns the data of each server-sent event in body, failing if
// body holds anything but data blocks.
func sseData(t *testing.T, hdr http.Header, body []byte) []string {
	t.Helper()
	require.Equal(t, "text/event-stream; charset=utf-8", hdr.Get("Content-Type"))
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, "line %q is not a data line", line)
		out = append(out, data)
	}
	return out
}

func TestChatStream(t *testing.T) {
	s := New(t)
	s.QueueChat(ChatReply{Content: "Hello there, friend."}, ChatReply{ToolCalls: []ToolCall{{Name: "book", Arguments: `{"party":2,"time":"19:00"}`}}})
	user := `{"role":"user","content":"hi"}`
	tools := `"tools":[{"type":"function","function":{"name":"book","parameters":{"type":"object"}}}]`

	type chunk struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role      *string `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    int     `json:"index"`
					ID       *string `json:"id"`
					Function struct {
						Name      *string `json:"name"`
						Arguments string  `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	read := func(body string) ([]chunk, []string) {
		st, b, hdr := post(t, s, "/v1/chat/completions", "application/json", []byte(body))
		require.Equal(t, http.StatusOK, st, "%s", b)
		data := sseData(t, hdr, b)
		require.NotEmpty(t, data)
		assert.Equal(t, "[DONE]", data[len(data)-1])
		var cs []chunk
		for _, d := range data[:len(data)-1] {
			var c chunk
			require.NoError(t, json.Unmarshal([]byte(d), &c), d)
			assert.Equal(t, "chat.completion.chunk", c.Object)
			cs = append(cs, c)
		}
		return cs, data
	}

	// Text, with the usage chunk last.
	cs, _ := read(`{"model":"m","messages":[` + user + `],"stream":true,"stream_options":{"include_usage":true}}`)
	require.GreaterOrEqual(t, len(cs), 4)
	require.NotNil(t, cs[0].Choices[0].Delta.Role)
	assert.Equal(t, "assistant", *cs[0].Choices[0].Delta.Role)
	var text strings.Builder
	for _, c := range cs[:len(cs)-2] {
		assert.Equal(t, "null", string(c.Usage), "every chunk but the last carries usage null")
		if d := c.Choices[0].Delta.Content; d != nil {
			text.WriteString(*d)
		}
	}
	assert.Equal(t, "Hello there, friend.", text.String())
	fin := cs[len(cs)-2]
	require.NotNil(t, fin.Choices[0].FinishReason)
	assert.Equal(t, "stop", *fin.Choices[0].FinishReason)
	last := cs[len(cs)-1]
	assert.Empty(t, last.Choices)
	assert.Contains(t, string(last.Usage), `"total_tokens"`)

	// A tool call: id and name first, then the arguments in pieces.
	cs, _ = read(`{"model":"m","messages":[` + user + `],` + tools + `,"stream":true}`)
	var args strings.Builder
	var id, name string
	for _, c := range cs {
		assert.Nil(t, c.Usage, "no usage without include_usage")
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			assert.Equal(t, 0, tc.Index)
			if tc.ID != nil {
				id, name = *tc.ID, *tc.Function.Name
			}
			args.WriteString(tc.Function.Arguments)
		}
	}
	assert.NotEmpty(t, id)
	assert.Equal(t, "book", name)
	assert.Equal(t, `{"party":2,"time":"19:00"}`, args.String())
	require.NotNil(t, cs[len(cs)-1].Choices[0].FinishReason)
	assert.Equal(t, "tool_calls", *cs[len(cs)-1].Choices[0].FinishReason)
}

func TestSpeechFormats(t *testing.T) {
	s := New(t)
	body := func(format string) string {
		return `{"model":"gpt-4o-mini-tts","input":"Hello there.","voice":"coral"` + format + `}`
	}
	st, wav, hdr := post(t, s, "/v1/audio/speech", "application/json", []byte(body(`,"response_format":"wav"`)))
	require.Equal(t, http.StatusOK, st, "%s", wav)
	assert.Equal(t, "audio/wav", hdr.Get("Content-Type"))
	pcm := SynthesizePCM(SpeechRequest{Model: "gpt-4o-mini-tts", Input: "Hello there.", Voice: "coral", Speed: 1})
	assert.Equal(t, wavBytes(pcm, SpeechRate), wav)
	d, ok := wavDuration(wav)
	require.True(t, ok)
	assert.Equal(t, len(pcm)/2*1000/SpeechRate, int(d.Milliseconds()))

	// Server-sent events of the audio in pieces, then done with usage.
	st, b, hdr := post(t, s, "/v1/audio/speech", "application/json", []byte(body(`,"response_format":"pcm","stream_format":"sse"`)))
	require.Equal(t, http.StatusOK, st, "%s", b)
	var got []byte
	data := sseData(t, hdr, b)
	require.GreaterOrEqual(t, len(data), 3)
	for i, d := range data {
		var ev struct {
			Type, Audio string
			Usage       map[string]int
		}
		require.NoError(t, json.Unmarshal([]byte(d), &ev))
		if i == len(data)-1 {
			assert.Equal(t, "speech.audio.done", ev.Type)
			assert.Positive(t, ev.Usage["total_tokens"])
			continue
		}
		assert.Equal(t, "speech.audio.delta", ev.Type)
		a, err := base64.StdEncoding.DecodeString(ev.Audio)
		require.NoError(t, err)
		got = append(got, a...)
	}
	assert.Equal(t, pcm, got)

	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not found: the compressed formats need it (apt-get install ffmpeg)")
	}
	// The default format is mp3; equal requests give equal bytes, and the
	// mp3 transcribes back to its text.
	st, mp3, hdr := post(t, s, "/v1/audio/speech", "application/json", []byte(body("")))
	require.Equal(t, http.StatusOK, st, "%s", mp3)
	assert.Equal(t, "audio/mpeg", hdr.Get("Content-Type"))
	require.Greater(t, len(mp3), 100)
	assert.True(t, mp3[0] == 0xff && mp3[1]&0xe0 == 0xe0, "an MPEG audio frame starts the file: % x", mp3[:4])
	_, mp3again, _ := post(t, s, "/v1/audio/speech", "application/json", []byte(body("")))
	assert.Equal(t, mp3, mp3again)
	ct, form := multipartBody(t, map[string]string{"model": "whisper-1", "response_format": "text"}, formFile{"file", "hi.mp3", "audio/mpeg", mp3})
	st, ans, _ := post(t, s, "/v1/audio/transcriptions", ct, form)
	require.Equal(t, http.StatusOK, st, "%s", ans)
	assert.Equal(t, "Hello there.\n", string(ans))
	for format, magic := range map[string]string{"opus": "OggS", "flac": "fLaC"} {
		st, b, _ := post(t, s, "/v1/audio/speech", "application/json", []byte(body(`,"response_format":"`+format+`"`)))
		require.Equal(t, http.StatusOK, st, "%s", b)
		assert.True(t, bytes.HasPrefix(b, []byte(magic)), "%s starts % x", format, b[:4])
	}
}

func TestTranscriptionStreamAndTimestamps(t *testing.T) {
	s := New(t)
	st, audio, _ := post(t, s, "/v1/audio/speech", "application/json", []byte(`{"model":"tts-1","input":"a table for two","voice":"nova","response_format":"wav"}`))
	require.Equal(t, http.StatusOK, st)
	file := formFile{"file", "turn.wav", "audio/wav", audio}

	// gpt-4o-mini-transcribe streams deltas, then the whole text.
	ct, form := multipartBody(t, map[string]string{"model": "gpt-4o-mini-transcribe", "stream": "true"}, file)
	st, b, hdr := post(t, s, "/v1/audio/transcriptions", ct, form)
	require.Equal(t, http.StatusOK, st, "%s", b)
	var deltas string
	data := sseData(t, hdr, b)
	for i, d := range data {
		var ev struct{ Type, Delta, Text string }
		require.NoError(t, json.Unmarshal([]byte(d), &ev))
		if i == len(data)-1 {
			assert.Equal(t, "transcript.text.done", ev.Type)
			assert.Equal(t, "a table for two", ev.Text)
			continue
		}
		assert.Equal(t, "transcript.text.delta", ev.Type)
		deltas += ev.Delta
	}
	assert.Equal(t, "a table for two", deltas)

	// whisper-1 ignores stream, as the API reference says.
	ct, form = multipartBody(t, map[string]string{"model": "whisper-1", "stream": "true"}, file)
	st, b, hdr = post(t, s, "/v1/audio/transcriptions", ct, form)
	require.Equal(t, http.StatusOK, st, "%s", b)
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
	assert.Contains(t, string(b), `"text":"a table for two"`)

	// verbose_json: segments always, words when asked, in order within
	// the audio.
	ct, form = multipartBody(t, map[string]string{"model": "whisper-1", "response_format": "verbose_json", "timestamp_granularities[]": "word"}, file)
	st, b, _ = post(t, s, "/v1/audio/transcriptions", ct, form)
	require.Equal(t, http.StatusOK, st, "%s", b)
	var v struct {
		Text     string
		Duration float64
		Segments []struct{ Start, End float64 }
		Words    []timedWord
	}
	require.NoError(t, json.Unmarshal(b, &v))
	d, _ := wavDuration(audio)
	assert.InDelta(t, d.Seconds(), v.Duration, 1e-9)
	require.Len(t, v.Segments, 1)
	assert.InDelta(t, v.Duration, v.Segments[0].End, 1e-9)
	require.Len(t, v.Words, 4)
	prev := 0.0
	for i, w := range v.Words {
		assert.Equal(t, strings.Fields("a table for two")[i], w.Word)
		assert.Greater(t, w.End, w.Start)
		assert.GreaterOrEqual(t, w.Start, prev)
		assert.LessOrEqual(t, w.End, v.Duration)
		prev = w.End
	}
	ct, form = multipartBody(t, map[string]string{"model": "whisper-1", "response_format": "verbose_json"}, file)
	_, b, _ = post(t, s, "/v1/audio/transcriptions", ct, form)
	assert.NotContains(t, string(b), `"words"`, "words only when timestamp_granularities asks")
}
