package speech_test

import (
	"fmt"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// Telephone audio is widened for a wideband recognizer by holding each
// sample; pocketsphinx does it itself, with the phrases it is given once:
//
//	ears := speech.Pocketsphinx(speech.WithPhrases("a table for two", "yes", "no"))
func ExampleWiden() {
	phone := pcm.Chunk{Rate: pcm.Rate8k, Samples: []int16{100, -200, 300}}
	w, err := speech.Widen(phone, speech.PocketsphinxRate)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Rate, w.Samples)
	// Output: 16000 [100 100 -200 -200 300 300]
}
