package cache

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkTextHit measures a replay hit of a small text entry: key
// digest, entry and body read, verification.
func BenchmarkTextHit(b *testing.B) {
	c, err := Open(b.TempDir(), WithMode(Record), WithUsageDir(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	key := textKey("What time do you open tomorrow?")
	answer := "We open at nine in the morning."
	if _, err := c.Text(ctx, key, func(context.Context) (string, error) { return answer, nil }); err != nil {
		b.Fatal(err)
	}
	rep, _ := Open(c.Dir(), WithMode(Replay), WithUsageDir(""))
	b.ReportAllocs()
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		got, err := rep.Text(ctx, key, nil)
		if err != nil || got != answer {
			b.Fatal(got, err)
		}
	}
}

// BenchmarkAudioHit measures a replay hit of one second of 24 kHz audio.
func BenchmarkAudioHit(b *testing.B) {
	dir := b.TempDir()
	c, _ := Open(dir, WithMode(Record), WithUsageDir(""))
	ctx := context.Background()
	key := Key{Kind: "tts", Provider: "flite", Model: "slt", Fields: map[string]any{"text": "We open at nine.", "rate": 24000}}
	pcm := testPCM(24000, 7)
	if _, err := c.Audio(ctx, key, func(context.Context) (Audio, error) { return Audio{Rate: 24000, PCM: pcm}, nil }); err != nil {
		b.Fatal(err)
	}
	rep, _ := Open(dir, WithMode(Replay), WithUsageDir(""))
	b.ReportAllocs()
	b.SetBytes(int64(len(pcm)))
	for b.Loop() {
		a, err := rep.Audio(ctx, key, nil)
		if err != nil || len(a.PCM) != len(pcm) {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyDigest measures the digest of a typical LLM key.
func BenchmarkKeyDigest(b *testing.B) {
	key := Key{Kind: "llm", Provider: "openai", Model: "gpt-4o-mini", Fields: map[string]any{
		"temperature": 0.7,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a restaurant booking assistant."},
			map[string]any{"role": "user", "content": "A table for two at seven, please."},
		},
		"tools": []any{map[string]any{"name": "book", "parameters": map[string]any{"size": "integer", "time": "string"}}},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := key.Digest(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransportHit measures a replayed chat completion through the
// RoundTripper, including request canonicalisation.
func BenchmarkTransportHit(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"message":{"role":"assistant","content":"We open at nine."}}]}`)
	}))
	defer srv.Close()
	dir := b.TempDir()
	body := `{"model":"gpt-4o-mini","temperature":0.7,"messages":[{"role":"user","content":"When do you open?"}]}`
	send := func(rt http.RoundTripper) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-bench-0123456789")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rec, _ := Open(dir, WithMode(Record), WithUsageDir(""))
	send(rec.Transport(nil))
	rep, _ := Open(dir, WithMode(Replay), WithUsageDir(""))
	rt := rep.Transport(nil)
	b.ReportAllocs()
	for b.Loop() {
		send(rt)
	}
}

// BenchmarkRecordText measures recording one new small text entry (a miss
// in record mode): key digest, body and entry files each written to a
// temporary file, synced and renamed into place.
func BenchmarkRecordText(b *testing.B) {
	c, err := Open(b.TempDir(), WithMode(Record), WithUsageDir(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	answer := "We open at nine in the morning."
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		key := textKey(fmt.Sprintf("Question %d: what time do you open tomorrow?", i))
		got, err := c.Text(ctx, key, func(context.Context) (string, error) { return answer, nil })
		if err != nil || got != answer {
			b.Fatal(got, err)
		}
	}
}

// BenchmarkRecordAudio measures recording one new entry of 1.5 s of
// 24 kHz audio (72 kB), as a TTS miss in record mode writes it.
func BenchmarkRecordAudio(b *testing.B) {
	c, err := Open(b.TempDir(), WithMode(Record), WithUsageDir(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	pcm := testPCM(36000, 7)
	b.ReportAllocs()
	b.SetBytes(int64(len(pcm)))
	i := 0
	for b.Loop() {
		i++
		key := Key{Kind: "tts", Provider: "flite", Model: "slt", Fields: map[string]any{"text": fmt.Sprintf("Line %d.", i), "rate": 24000}}
		a, err := c.Audio(ctx, key, func(context.Context) (Audio, error) { return Audio{Rate: 24000, PCM: pcm}, nil })
		if err != nil || len(a.PCM) != len(pcm) {
			b.Fatal(err)
		}
	}
}
