package speech

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

func noEnv(string) string { return "" }

func openCache(t *testing.T, dir string, m cache.Mode) *cache.Cache {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(m))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func fakeOpts(srv *fakeopenai.Server, c *cache.Cache) []Option {
	return []Option{withEnv(noEnv, nil), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithCache(c), WithMaxRetries(0)}
}

func TestOpenAITTSRequestShape(t *testing.T) {
	srv := fakeopenai.New(t)
	tts, err := NewOpenAITTS(append(fakeOpts(srv, nil), WithModel("gpt-4o-mini-tts"))...)
	require.NoError(t, err)
	got, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{
		Text: "Table for two, please.", Voice: "coral", Instructions: "Sound rushed.", Speed: 1.25,
	})
	require.NoError(t, err)

	reqs := srv.RequestsTo("/v1/audio/speech")
	require.Len(t, reqs, 1)
	assert.Equal(t, http.StatusOK, reqs[0].Status)
	assert.Equal(t, "Bearer "+srv.APIKey(), reqs[0].Header.Get("Authorization"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	assert.Equal(t, map[string]any{
		"model": "gpt-4o-mini-tts", "input": "Table for two, please.", "voice": "coral",
		"instructions": "Sound rushed.", "speed": 1.25, "response_format": "pcm",
	}, body)

	want := fakeopenai.SynthesizePCM(fakeopenai.SpeechRequest{Model: "gpt-4o-mini-tts", Input: "Table for two, please.",
		Voice: "coral", Instructions: "Sound rushed.", Speed: 1.25})
	assert.Equal(t, OpenAIRate, got.Rate)
	assert.Equal(t, want, got.Bytes())
}

func TestOpenAITTSDefaultsAndResample(t *testing.T) {
	srv := fakeopenai.New(t)
	tts, err := NewOpenAITTS(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	assert.Equal(t, DefaultTTSModel, tts.Model())
	got, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi.", Rate: pcm.Rate16k})
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(srv.RequestsTo("/v1/audio/speech")[0].Body, &body))
	assert.Equal(t, DefaultOpenAIVoice, body["voice"])
	assert.NotContains(t, body, "speed", "speed 1 is the API default and is not sent")
	assert.NotContains(t, body, "instructions")
	native := len(fakeopenai.SynthesizePCM(fakeopenai.SpeechRequest{Model: DefaultTTSModel, Input: "Hi.", Voice: DefaultOpenAIVoice, Speed: 1})) / 2
	assert.Equal(t, pcm.Rate16k, got.Rate)
	assert.InDelta(t, native*2/3, got.Len(), 1)
}

func TestOpenAISTTRequestShapeAndRoundTrip(t *testing.T) {
	srv := fakeopenai.New(t)
	opts := append(fakeOpts(srv, nil), WithModel("whisper-1"))
	tts, err := NewOpenAITTS(opts...)
	require.NoError(t, err)
	stt, err := NewOpenAISTT(opts...)
	require.NoError(t, err)
	audio, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Yes, that's right."})
	require.NoError(t, err)
	tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Language: "en-US", Prompt: "Booking call."})
	require.NoError(t, err)
	assert.Equal(t, "Yes, that's right.", tr.Text)
	assert.Equal(t, "en", tr.Language)

	reqs := srv.RequestsTo("/v1/audio/transcriptions")
	require.Len(t, reqs, 1)
	mt, params, err := mime.ParseMediaType(reqs[0].Header.Get("Content-Type"))
	require.NoError(t, err)
	assert.Equal(t, "multipart/form-data", mt)
	form := map[string]string{}
	var file []byte
	mr := multipart.NewReader(bytes.NewReader(reqs[0].Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(p)
		require.NoError(t, err)
		if p.FormName() == "file" {
			assert.Equal(t, "audio.wav", p.FileName())
			assert.Equal(t, "audio/wav", p.Header.Get("Content-Type"))
			file = data
			continue
		}
		form[p.FormName()] = string(data)
	}
	assert.Equal(t, map[string]string{"model": "whisper-1", "language": "en", "prompt": "Booking call.",
		"response_format": "json", "temperature": "0"}, form)
	decoded, err := pcm.DecodeWAV(file)
	require.NoError(t, err)
	assert.Equal(t, audio, decoded, "the upload is the audio as WAV at its own rate")
}

func TestOpenAISTTPhrasesBecomePrompt(t *testing.T) {
	srv := fakeopenai.New(t)
	var got fakeopenai.TranscriptionRequest
	srv.HandleTranscription(func(r fakeopenai.TranscriptionRequest) (string, error) {
		got = r
		return "  eight o'clock  ", nil
	})
	stt, err := NewOpenAISTT(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{
		Audio: pcm.Silence(pcm.Rate8k, 300e6), Phrases: []string{"seven o'clock", "eight o'clock"},
	})
	require.NoError(t, err)
	assert.Equal(t, "eight o'clock", tr.Text)
	assert.Equal(t, "seven o'clock eight o'clock", got.Prompt)
	assert.Equal(t, DefaultSTTModel, got.Model)
	assert.Equal(t, "", got.Language)
}

func TestOpenAIRecordThenReplayOffline(t *testing.T) {
	srv := fakeopenai.New(t)
	dir := t.TempDir()
	rec := openCache(t, dir, cache.Record)
	tts, err := NewOpenAITTS(fakeOpts(srv, rec)...)
	require.NoError(t, err)
	stt, err := NewOpenAISTT(fakeOpts(srv, rec)...)
	require.NoError(t, err)
	req := voicetest.SpeechRequest{Text: "Sorry, make it eight.", Voice: "nova"}
	audio, err := tts.Synthesize(t.Context(), req)
	require.NoError(t, err)
	tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Language: "en"})
	require.NoError(t, err)
	n := len(srv.Requests())

	// Replay with no key and no endpoint at all.
	rep := openCache(t, dir, cache.Replay)
	offTTS, err := NewOpenAITTS(withEnv(noEnv, nil), WithCache(rep))
	require.NoError(t, err)
	offSTT, err := NewOpenAISTT(withEnv(noEnv, nil), WithCache(rep))
	require.NoError(t, err)
	audio2, err := offTTS.Synthesize(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, audio, audio2)
	tr2, err := offSTT.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio2, Language: "en"})
	require.NoError(t, err)
	assert.Equal(t, tr, tr2)
	assert.Len(t, srv.Requests(), n, "replay made no request")

	_, err = offTTS.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Something new."})
	var miss *cache.MissError
	require.ErrorAs(t, err, &miss)

	// Without a cache and without any endpoint configured, the call says
	// what to set.
	bare, err := NewOpenAITTS(withEnv(noEnv, nil))
	require.NoError(t, err)
	_, err = bare.Synthesize(t.Context(), req)
	require.ErrorContains(t, err, "OPENAI_API_KEY is not set")
}

func TestOpenAIErrors(t *testing.T) {
	srv := fakeopenai.New(t)
	tts, err := NewOpenAITTS(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	_, err = tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi.", Voice: "robot"})
	require.ErrorContains(t, err, "Invalid value for 'voice'", "the endpoint's message reaches the caller")
	_, err = tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: strings.Repeat("a", 4097)})
	require.ErrorContains(t, err, "at most 4096")
	_, err = tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: " "})
	require.ErrorContains(t, err, "nothing to say")
	_, err = tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi.", Speed: 9})
	require.ErrorContains(t, err, "outside 0.25 to 4")

	wrongKey, err := NewOpenAITTS(withEnv(noEnv, nil), WithBaseURL(srv.BaseURL()), WithAPIKey("sk-wrong"), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = wrongKey.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi."})
	require.ErrorContains(t, err, "invalid_api_key")

	stt, err := NewOpenAISTT(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate16k, 1e8), Language: "english"})
	require.ErrorContains(t, err, "ISO-639-1")
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: pcm.Rate16k}})
	require.ErrorContains(t, err, "empty")
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Chunk{Samples: make([]int16, 10)}})
	require.ErrorIs(t, err, pcm.ErrBadRate)

	_, err = NewOpenAISTT(withEnv(noEnv, nil), WithBaseURL("ftp://x"))
	require.ErrorContains(t, err, "not an http(s) URL")
}

func TestOpenAIEnvironment(t *testing.T) {
	srv := fakeopenai.New(t)
	env := map[string]string{EnvBaseURL: srv.BaseURL(), EnvAPIKey: srv.APIKey(), EnvTTSModel: "tts-1", EnvSTTModel: "whisper-1"}
	getenv := func(k string) string { return env[k] }
	tts, err := NewOpenAITTS(withEnv(getenv, nil), WithMaxRetries(0))
	require.NoError(t, err)
	assert.Equal(t, "tts-1", tts.Model())
	_, err = tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi."})
	require.NoError(t, err, "key and base URL come from the environment")
	stt, err := NewOpenAISTT(withEnv(getenv, nil))
	require.NoError(t, err)
	assert.Equal(t, "whisper-1", stt.Model())
	stt, err = NewOpenAISTT(withEnv(getenv, nil), WithModel("gpt-4o-mini-transcribe"))
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o-mini-transcribe", stt.Model(), "options override the environment")
}
