package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// A 500-entry suite, as a test package with many scenarios would record:
// 300 LLM answers (text) and 200 TTS answers (1.5 s of 24 kHz audio each,
// 72 kB).
const (
	suiteText  = 300
	suiteAudio = 200
)

func suiteKey(i int) cache.Key {
	if i < suiteText {
		return cache.Key{Kind: "llm", Provider: "openai", Model: "gpt-4o-mini", Fields: map[string]any{
			"messages":    []map[string]string{{"role": "system", "content": "You are a restaurant booking agent."}, {"role": "user", "content": fmt.Sprintf("Question %d: a table for %d at %d?", i, i%8+1, 17+i%5)}},
			"temperature": 0.2,
		}}
	}
	return cache.Key{Kind: "tts", Provider: "openai", Model: "gpt-4o-mini-tts", Fields: map[string]any{"text": fmt.Sprintf("Line number %d of the caller.", i), "voice": "nova", "rate": 24000}}
}

func suiteAudioPCM(i int) []byte {
	pcm := make([]byte, 2*36000)
	for j := range pcm {
		pcm[j] = byte(i + j*7)
	}
	return pcm
}

// playSuite asks c for every entry of the suite, from workers goroutines,
// and returns how many it answered without calling a producer.
func playSuite(tb testing.TB, c *cache.Cache, workers int, produced *atomic.Int64) int {
	var hits atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	ctx := context.Background()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= suiteText+suiteAudio {
					return
				}
				var err error
				var miss bool
				if i < suiteText {
					_, err = c.Text(ctx, suiteKey(i), func(context.Context) (string, error) {
						produced.Add(1)
						miss = true
						return fmt.Sprintf("Answer %d: yes, we have a table for you at that time.", i), nil
					})
				} else {
					_, err = c.Audio(ctx, suiteKey(i), func(context.Context) (cache.Audio, error) {
						produced.Add(1)
						miss = true
						return cache.Audio{Rate: 24000, PCM: suiteAudioPCM(i)}, nil
					})
				}
				if err != nil {
					tb.Errorf("entry %d: %v", i, err)
					return
				}
				if !miss {
					hits.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(hits.Load())
}

// BenchmarkSuite500 replays a recorded 500-entry suite with a fresh Cache
// per op (as a new test process would), sequentially and from 4 goroutines
// (t.Parallel tests), and reports the hit rate (answers from the store /
// requests) and the time per suite. BenchmarkSuite500/record measures
// recording the same suite into an empty directory, producers instant.
func BenchmarkSuite500(b *testing.B) {
	dir := b.TempDir()
	var produced atomic.Int64
	rec, err := cache.Open(dir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	if err != nil {
		b.Fatal(err)
	}
	playSuite(b, rec, 4, &produced)
	rec.Close()
	if produced.Load() != suiteText+suiteAudio {
		b.Fatalf("recorded %d entries, want %d", produced.Load(), suiteText+suiteAudio)
	}
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("replay/workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(suiteAudio*(44+2*36000) + suiteText*60)
			hits, asked := 0, 0
			for b.Loop() {
				c, err := cache.Open(dir, cache.WithMode(cache.Replay), cache.WithUsageDir(""))
				if err != nil {
					b.Fatal(err)
				}
				var p atomic.Int64
				hits += playSuite(b, c, workers, &p)
				asked += suiteText + suiteAudio
				c.Close()
			}
			b.ReportMetric(float64(hits)/float64(asked), "hit-rate")
		})
	}
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			d := b.TempDir()
			b.StartTimer()
			c, err := cache.Open(d, cache.WithMode(cache.Record), cache.WithUsageDir(""))
			if err != nil {
				b.Fatal(err)
			}
			var p atomic.Int64
			if hits := playSuite(b, c, 4, &p); hits != 0 || p.Load() != suiteText+suiteAudio {
				b.Fatalf("hits %d, produced %d into an empty directory", hits, p.Load())
			}
			c.Close()
		}
	})
}
