package scrub_test

import (
	"encoding/base64"
	"fmt"
	"math"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// benchScrubber knows what a wire connection typically knows: an API key,
// its bearer header and a query key.
func benchScrubber() *scrub.Scrubber {
	return scrub.New("sk-proj-bench0123456789abcdefghij", "query-key-bench-9a0b1c2d", "hello-token-bench-5c2d")
}

// benchPCM is 20 ms of a 440 Hz tone at 24 kHz as PCM16 bytes: what a
// binary audio frame holds.
func benchPCM() []byte {
	b := make([]byte, 960)
	for i := range len(b) / 2 {
		v := int16(9000 * math.Sin(2*math.Pi*440*float64(i)/24000))
		b[2*i], b[2*i+1] = byte(v), byte(v>>8)
	}
	return b
}

// BenchmarkScrubFrame measures scrubbing one frame as a capture does: a
// binary PCM16 frame (Binary), a Twilio media message of 20 ms of µ-law
// and a Realtime audio delta of 20 ms at 24 kHz (JSON, base64 audio),
// and a transcript event. None holds a secret, so each is returned as is.
func BenchmarkScrubFrame(b *testing.B) {
	pcm := benchPCM()
	twilio := []byte(`{"event":"media","streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0","media":{"payload":"` +
		base64.StdEncoding.EncodeToString(pcm[:160]) + `"}}`)
	realtime := []byte(`{"type":"response.output_audio.delta","event_id":"event_4Ud8","response_id":"resp_Bj3","item_id":"item_Bj3","output_index":0,"content_index":0,"delta":"` +
		base64.StdEncoding.EncodeToString(pcm) + `"}`)
	transcript := []byte(`{"type":"transcript","text":"Sure, I can book a table for two at seven thirty. May I have your name, please?","final":true}`)
	sc := benchScrubber()
	for _, tc := range []struct {
		name string
		data []byte
		f    func([]byte) []byte
	}{
		{"binary-pcm16", pcm, sc.Binary},
		{"twilio-media", twilio, sc.JSON},
		{"realtime-delta", realtime, sc.JSON},
		{"transcript", transcript, sc.JSON},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if out := tc.f(tc.data); len(out) != len(tc.data) {
					b.Fatalf("a clean frame changed: %q", out)
				}
			}
		})
	}
}

// BenchmarkScrubText measures String on a log line and an error message
// that hold nothing to blank, and on one that does.
func BenchmarkScrubText(b *testing.B) {
	sc := benchScrubber()
	for _, tc := range []struct{ name, text string }{
		{"log-line", "realtime: session.updated: voice alloy, turn detection server_vad, 24000 Hz pcm16 in and out"},
		{"error", `adapters: websocket: dial ws://127.0.0.1:40123/ws?lang=en: HTTP 401 Unauthorized: {"error":"invalid credentials"}`},
		{"dirty", `adapters: websocket: dial ws://bot:pw-123456@127.0.0.1:40123/ws?api_key=query-key-bench-9a0b1c2d: HTTP 401: sk-proj-bench0123456789abcdefghij`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = sc.String(tc.text)
			}
		})
	}
}

// BenchmarkAddEnv measures learning the credentials of an environment of
// 40 variables, two of them keys, as the cache does for every request.
func BenchmarkAddEnv(b *testing.B) {
	env := []string{"OPENAI_API_KEY=sk-proj-bench0123456789abcdefghij", "TWILIO_AUTH_TOKEN=0123456789abcdef0123456789abcdef"}
	for i := range 38 {
		env = append(env, fmt.Sprintf("SOME_SETTING_NUMBER_%d=/usr/local/share/value-%d", i, i))
	}
	b.ReportAllocs()
	for b.Loop() {
		scrub.New().AddEnv(env)
	}
}
