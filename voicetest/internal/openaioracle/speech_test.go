package openaioracle_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// voicetest/speech's OpenAI engines send their requests themselves.
// openai-go, which they used before, is these tests' oracle: the same
// request sent through openai-go (with the parameters the engines built
// for it) and through the engine, both captured by one loopback server,
// must be the same request, and both must handle the same answers
// (errors, retries) alike. Every engine here is given its base URL, key
// and model, so that no environment variable reaches it.

// maxSpeechBytes is the engines' bound of a speech answer (speech's
// maxSpeechBytes); the oracle reads no more.
const maxSpeechBytes = 64 << 20

// oracleSynthesize sends req through openai-go with the parameters the
// TTS engine gave it (voice: the request's, else the engine's), and
// returns the answer's body.
func oracleSynthesize(ctx context.Context, api openai.Client, model, voice string, req voicetest.SpeechRequest) ([]byte, error) {
	speed := cmp.Or(req.Speed, 1) // the requests here are valid: 0 is 1
	p := openai.AudioSpeechNewParams{
		Model:          openai.SpeechModel(model),
		Input:          req.Text,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(cmp.Or(req.Voice, voice))},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatPCM,
	}
	if req.Instructions != "" {
		p.Instructions = openai.String(req.Instructions)
	}
	if speed != 1 {
		p.Speed = openai.Float(speed)
	}
	res, err := api.Audio.Speech.New(ctx, p)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return io.ReadAll(io.LimitReader(res.Body, maxSpeechBytes+1))
}

// oracleTranscribe sends a through openai-go with the parameters the STT
// engine gave it.
func oracleTranscribe(ctx context.Context, api openai.Client, model string, a pcm.Chunk, lang, prompt string) (string, error) {
	wav, err := pcm.EncodeWAV(a)
	if err != nil {
		return "", err
	}
	p := openai.AudioTranscriptionNewParams{
		Model:          openai.AudioModel(model),
		File:           openai.File(bytes.NewReader(wav), "audio.wav", "audio/wav"),
		ResponseFormat: openai.AudioResponseFormatJSON,
		Temperature:    openai.Float(0),
	}
	if lang != "" {
		p.Language = openai.String(lang)
	}
	if prompt != "" {
		p.Prompt = openai.String(prompt)
	}
	tr, err := api.Audio.Transcriptions.New(ctx, p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(tr.Text), nil
}

// TestOpenAIRequestsMatchOpenAIGo: every kind of speech and transcription
// request the engines send is, on the wire, the request openai-go sent
// for them (method, path, headers, JSON body; multipart fields, file name,
// file type and WAV bytes), and the answers read the same.
func TestOpenAIRequestsMatchOpenAIGo(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.HandleTranscription(func(r fakeopenai.TranscriptionRequest) (string, error) {
		a, err := pcm.DecodeWAV(r.File)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf(" %s heard %d samples at %d Hz (%s, %s) ", r.Model, a.Len(), a.Rate, r.Language, r.Prompt), nil
	})
	srv := newCaptureServer(t, func(_ int, c captured, w http.ResponseWriter, r *http.Request) {
		// Forward to the fake OpenAI server, which answers like OpenAI.
		req, err := http.NewRequestWithContext(r.Context(), c.method, strings.TrimSuffix(fake.BaseURL(), "/v1/")+c.path, bytes.NewReader(c.body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = c.header.Clone()
		req.Header.Set("Authorization", "Bearer "+fake.APIKey())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	})
	base := srv.URL + "/v1/"
	api := oracleClient(base, 0, keepalive.NewClient())

	for i, req := range []voicetest.SpeechRequest{
		{Text: "Table for two, please."},
		{Text: "Hi.", Voice: "coral"},
		{Text: "Sound <rushed> & \"quoted\"\n\u2028é", Voice: "ash", Instructions: "Sound rushed & tired.", Speed: 1.25},
		{Text: "Slow.", Speed: 0.25},
		{Text: "Fast.", Speed: 4, Rate: pcm.Rate16k},
	} {
		t.Run(fmt.Sprintf("speech %d", i), func(t *testing.T) {
			tts, err := speech.NewOpenAITTS(speech.WithBaseURL(base), speech.WithAPIKey(oracleKey), speech.WithMaxRetries(0), speech.WithModel("gpt-4o-mini-tts"))
			require.NoError(t, err)
			want, err := oracleSynthesize(t.Context(), api, "gpt-4o-mini-tts", speech.DefaultOpenAIVoice, req)
			require.NoError(t, err)
			oracle := srv.take()
			got, err := tts.Synthesize(t.Context(), req)
			require.NoError(t, err)
			ours := srv.take()
			require.Len(t, oracle, 1)
			require.Len(t, ours, 1)
			assert.Equal(t, "application/json", ours[0].header.Get("Content-Type"))
			assert.Equal(t, "application/octet-stream", ours[0].header.Get("Accept"))
			assertSameRequest(t, oracle[0], ours[0], false)
			native, err := pcm.FromBytes(speech.OpenAIRate, want)
			require.NoError(t, err)
			if req.Rate != 0 {
				native, err = pcm.Resample(native, req.Rate)
				require.NoError(t, err)
			}
			assert.Equal(t, native, got, "the same audio")
		})
	}

	spoken := fakeopenai.SynthesizePCM(fakeopenai.SpeechRequest{Model: "m", Input: "Yes, that's right.", Voice: "nova", Speed: 1})
	wide, err := pcm.FromBytes(speech.OpenAIRate, spoken)
	require.NoError(t, err)
	phone, err := pcm.Resample(wide, pcm.Rate8k)
	require.NoError(t, err)
	for i, tc := range []struct {
		audio                  pcm.Chunk
		language, prompt, want string
		iso639                 string // the language as the engine sends it
		phrases                []string
	}{
		{audio: wide, want: fmt.Sprintf("whisper-1 heard %d samples at 24000 Hz (, )", wide.Len())},
		{audio: wide, language: "en-US", iso639: "en", prompt: "Booking call & <notes>.", want: fmt.Sprintf("whisper-1 heard %d samples at 24000 Hz (en, Booking call & <notes>.)", wide.Len())},
		{audio: phone, language: "fr", iso639: "fr", phrases: []string{"seven o'clock", "eight"}, want: fmt.Sprintf("whisper-1 heard %d samples at 8000 Hz (fr, seven o'clock eight)", phone.Len())},
	} {
		t.Run(fmt.Sprintf("transcription %d", i), func(t *testing.T) {
			stt, err := speech.NewOpenAISTT(speech.WithBaseURL(base), speech.WithAPIKey(oracleKey), speech.WithMaxRetries(0), speech.WithModel("whisper-1"))
			require.NoError(t, err)
			prompt := tc.prompt
			if prompt == "" {
				prompt = strings.Join(tc.phrases, " ")
			}
			want, err := oracleTranscribe(t.Context(), api, "whisper-1", tc.audio, tc.iso639, prompt)
			require.NoError(t, err)
			oracle := srv.take()
			got, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: tc.audio, Language: tc.language, Prompt: tc.prompt, Phrases: tc.phrases})
			require.NoError(t, err)
			ours := srv.take()
			require.Len(t, oracle, 1)
			require.Len(t, ours, 1)
			assert.Equal(t, "application/json", ours[0].header.Get("Accept"))
			assertSameRequest(t, oracle[0], ours[0], true)
			assert.Equal(t, want, got.Text, "the same transcription")
			assert.Equal(t, tc.want, got.Text)
		})
	}
}

// writeAPIError answers status with OpenAI's error object and the headers
// given as name, value pairs.
func writeAPIError(w http.ResponseWriter, status int, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":{"message":"status %d says no","type":"invalid_request_error","param":"voice","code":"bad_%d"}}`, status, status)
}

// answerOK answers a speech or transcription request with success.
func answerOK(w http.ResponseWriter, c captured) {
	if strings.HasSuffix(c.path, "/audio/speech") {
		w.Header().Set("Content-Type", "audio/pcm")
		_, _ = w.Write([]byte{1, 0, 2, 0})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"text":" ok "}`))
}

// TestOpenAIErrorsAndRetriesMatchOpenAIGo: for each scripted answer (error
// statuses with OpenAI's error object, 429 and 5xx answers retried after
// Retry-After or a backoff, x-should-retry, a dropped connection), the
// engines make as many requests as openai-go, wait as long (in a synctest
// bubble, on its virtual clock; exactly, or within the same jitter range),
// and end with the same status and error fields, the endpoint's message
// in the error's text; the key is in no error.
func TestOpenAIErrorsAndRetriesMatchOpenAIGo(t *testing.T) {
	type answer = func(n int, w http.ResponseWriter) bool // false: answer with success
	cases := []struct {
		name    string
		answer  answer
		retries int // -1: the default
		calls   int
		wait    time.Duration // exact, or (with waitMax) at least
		waitMax time.Duration
		status  int // 0: the call succeeds
	}{
		{name: "400 not retried", answer: func(_ int, w http.ResponseWriter) bool { writeAPIError(w, 400); return true },
			retries: -1, calls: 1, status: 400},
		{name: "401 not retried", answer: func(_ int, w http.ResponseWriter) bool { writeAPIError(w, 401); return true },
			retries: -1, calls: 1, status: 401},
		{name: "429 Retry-After-Ms then ok", answer: func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				writeAPIError(w, 429, "Retry-After-Ms", "1500")
				return true
			}
			return false
		}, retries: -1, calls: 2, wait: 1500 * time.Millisecond},
		{name: "503 Retry-After seconds twice then ok", answer: func(n int, w http.ResponseWriter) bool {
			if n < 2 {
				writeAPIError(w, 503, "Retry-After", "3")
				return true
			}
			return false
		}, retries: -1, calls: 3, wait: 6 * time.Second},
		{name: "500 thrice: backoff, then the last error", answer: func(_ int, w http.ResponseWriter) bool { writeAPIError(w, 500); return true },
			retries: -1, calls: 3, wait: 1125 * time.Millisecond, waitMax: 1500 * time.Millisecond, status: 500},
		{name: "502 with one retry", answer: func(_ int, w http.ResponseWriter) bool {
			writeAPIError(w, 502, "Retry-After-Ms", "10")
			return true
		}, retries: 1, calls: 2, wait: 10 * time.Millisecond, status: 502},
		{name: "408 and 409 retried", answer: func(n int, w http.ResponseWriter) bool {
			switch n {
			case 0:
				writeAPIError(w, 408, "Retry-After-Ms", "5")
			case 1:
				writeAPIError(w, 409, "Retry-After-Ms", "5")
			default:
				return false
			}
			return true
		}, retries: -1, calls: 3, wait: 10 * time.Millisecond},
		{name: "no retries configured", answer: func(_ int, w http.ResponseWriter) bool {
			writeAPIError(w, 429, "Retry-After-Ms", "10")
			return true
		}, retries: 0, calls: 1, status: 429},
		{name: "x-should-retry false", answer: func(_ int, w http.ResponseWriter) bool {
			writeAPIError(w, 500, "x-should-retry", "false")
			return true
		}, retries: -1, calls: 1, status: 500},
		{name: "x-should-retry true on a 400", answer: func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				writeAPIError(w, 400, "x-should-retry", "true", "Retry-After-Ms", "20")
				return true
			}
			return false
		}, retries: -1, calls: 2, wait: 20 * time.Millisecond},
		{name: "Retry-After over two minutes is not waited", answer: func(_ int, w http.ResponseWriter) bool {
			writeAPIError(w, 429, "Retry-After", "121")
			return true
		}, retries: -1, calls: 1, status: 429},
		{name: "a dropped connection is retried", answer: func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = c.Close()
				}
				return true
			}
			return false
		}, retries: -1, calls: 2, wait: 375 * time.Millisecond, waitMax: 500 * time.Millisecond},
	}
	audio := pcm.Chunk{Rate: pcm.Rate16k, Samples: make([]int16, 160)}
	for _, tc := range cases {
		for _, kind := range []string{"speech", "transcription"} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				srv := newCaptureServer(t, func(n int, c captured, w http.ResponseWriter, _ *http.Request) {
					if !tc.answer(n, w) {
						answerOK(w, c)
					}
				})
				base := srv.URL + "/v1/"
				opts := []speech.Option{speech.WithBaseURL(base), speech.WithAPIKey(oracleKey), speech.WithModel("m")}
				oracleRetries := 2
				if tc.retries >= 0 {
					opts = append(opts, speech.WithMaxRetries(tc.retries))
					oracleRetries = tc.retries
				}
				run := func(t *testing.T, call func(ctx context.Context) error) (time.Duration, int, error) {
					var err error
					var waited time.Duration
					synctest.Test(t, func(t *testing.T) {
						start := time.Now()
						err = call(t.Context())
						waited = time.Since(start)
					})
					return waited, len(srv.take()), err
				}
				var oracleErr, ourErr error
				var oracleWait, ourWait time.Duration
				var oracleCalls, ourCalls int
				if kind == "speech" {
					tts, err := speech.NewOpenAITTS(opts...)
					require.NoError(t, err)
					oracleWait, oracleCalls, oracleErr = run(t, func(ctx context.Context) error {
						_, err := oracleSynthesize(ctx, oracleClient(base, oracleRetries, keepalive.NewClient()), "m", "nova", voicetest.SpeechRequest{Text: "Hi."})
						return err
					})
					ourWait, ourCalls, ourErr = run(t, func(ctx context.Context) error {
						_, err := tts.Synthesize(ctx, voicetest.SpeechRequest{Text: "Hi."})
						return err
					})
				} else {
					stt, err := speech.NewOpenAISTT(opts...)
					require.NoError(t, err)
					oracleWait, oracleCalls, oracleErr = run(t, func(ctx context.Context) error {
						_, err := oracleTranscribe(ctx, oracleClient(base, oracleRetries, keepalive.NewClient()), "m", audio, "", "")
						return err
					})
					ourWait, ourCalls, ourErr = run(t, func(ctx context.Context) error {
						_, err := stt.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: audio})
						return err
					})
				}
				assert.Equal(t, tc.calls, oracleCalls, "openai-go's requests")
				assert.Equal(t, oracleCalls, ourCalls, "requests: ours vs openai-go's")
				for who, waited := range map[string]time.Duration{"openai-go": oracleWait, "ours": ourWait} {
					if tc.waitMax == 0 {
						assert.Equal(t, tc.wait, waited, "%s: virtual time waited", who)
					} else {
						assert.GreaterOrEqual(t, waited, tc.wait, "%s: virtual time waited", who)
						assert.LessOrEqual(t, waited, tc.waitMax, "%s: virtual time waited", who)
					}
				}
				if tc.status == 0 {
					require.NoError(t, oracleErr, "openai-go")
					require.NoError(t, ourErr)
					return
				}
				var oe *openai.Error
				require.ErrorAs(t, oracleErr, &oe, "openai-go")
				var ae *speech.APIError
				require.ErrorAs(t, ourErr, &ae, "%v", ourErr)
				assert.Equal(t, tc.status, oe.StatusCode)
				assert.Equal(t, []string{fmt.Sprint(oe.StatusCode), oe.Message, oe.Type, oe.Param, oe.Code},
					[]string{fmt.Sprint(ae.StatusCode), ae.Message, ae.Type, ae.Param, ae.Code}, "status and error object: openai-go vs ours")
				for _, part := range []string{fmt.Sprint(tc.status), http.StatusText(tc.status), oe.Message, oe.Param, oe.Code} {
					assert.Contains(t, ourErr.Error(), part, "the error's text")
				}
				assert.NotContains(t, ourErr.Error(), oracleKey, "the key is in the error")
			})
		}
	}
}

// TestOpenAIErrorBodiesAsOpenAIGo: error objects OpenAI-compatible
// servers send in odd shapes (a numeric code, null fields, no error
// object at all) read as openai-go read them, for the fields openai-go
// fills.
func TestOpenAIErrorBodiesAsOpenAIGo(t *testing.T) {
	for i, body := range []string{
		`{"error":{"message":"m","type":"t","param":null,"code":null}}`,
		`{"error":{"message":"m","type":"t","param":"p","code":"c"}}`,
		`{"error":{"message":"only a message"}}`,
		`{"detail":"not an OpenAI error"}`,
		``,
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := newCaptureServer(t, func(_ int, _ captured, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = w.Write([]byte(body))
			})
			base := srv.URL + "/v1/"
			_, oracleErr := oracleSynthesize(t.Context(), oracleClient(base, 0, keepalive.NewClient()), "m", "nova", voicetest.SpeechRequest{Text: "Hi."})
			tts, err := speech.NewOpenAITTS(speech.WithBaseURL(base), speech.WithAPIKey(oracleKey), speech.WithMaxRetries(0), speech.WithModel("m"))
			require.NoError(t, err)
			_, ourErr := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi."})
			var oe *openai.Error
			require.ErrorAs(t, oracleErr, &oe)
			var ae *speech.APIError
			require.ErrorAs(t, ourErr, &ae)
			assert.Equal(t, []string{fmt.Sprint(oe.StatusCode), oe.Type, oe.Param, oe.Code}, []string{fmt.Sprint(ae.StatusCode), ae.Type, ae.Param, ae.Code})
			if oe.Message != "" {
				assert.Equal(t, oe.Message, ae.Message)
			}
		})
	}
}

// TestTranscriptionNotJSONAsOpenAIGo: a transcription answered as
// text/plain instead of JSON is refused by the engine as openai-go
// refused it (speech's TestOpenAIAnswerBounds checks the engine's side of
// the other bounds).
func TestTranscriptionNotJSONAsOpenAIGo(t *testing.T) {
	srv := newCaptureServer(t, func(_ int, _ captured, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("hello"))
	})
	base := srv.URL + "/v1/"
	audio := pcm.Chunk{Rate: pcm.Rate16k, Samples: make([]int16, 160)}
	stt, err := speech.NewOpenAISTT(speech.WithBaseURL(base), speech.WithAPIKey(oracleKey), speech.WithMaxRetries(0), speech.WithModel("m"))
	require.NoError(t, err)
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio})
	require.ErrorContains(t, err, `content type "text/plain"`)
	_, oracleErr := oracleTranscribe(t.Context(), oracleClient(base, 0, keepalive.NewClient()), "m", audio, "", "")
	require.ErrorContains(t, oracleErr, "text/plain", "openai-go refused it too")
	assert.Len(t, srv.take(), 2, "no retries")
}
