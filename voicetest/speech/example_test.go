package speech_test

import (
	"context"
	"fmt"
	"log"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// Engines are picked by name and wrapped by the cache. This example
// replays entries committed in testdata/voicetest/cache, so it runs with
// neither flite nor pocketsphinx installed; in a test, use
// cache.ForTest(t) instead of opening the cache by hand.
func Example() {
	ctx := context.Background()
	c, err := cache.Open("testdata/voicetest/cache", cache.WithMode(cache.Replay))
	if err != nil {
		log.Fatal(err)
	}
	tts, err := speech.TTSByName("flite/slt", speech.WithCache(c))
	if err != nil {
		log.Fatal(err)
	}
	stt, err := speech.STTByName("pocketsphinx", speech.WithCache(c))
	if err != nil {
		log.Fatal(err)
	}

	audio, err := tts.Synthesize(ctx, voicetest.SpeechRequest{Text: "Please cancel my order and send me a refund."})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d Hz, %.1f s\n", audio.Rate, audio.Duration().Seconds())

	tr, err := stt.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: audio})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.Text)
	// Output:
	// 16000 Hz, 3.1 s
	// please cancel my order and send me a refund
}
