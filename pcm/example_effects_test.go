package pcm_test

import (
	"fmt"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// A noisy cafe on a cell phone, as one effect for an utterance: the cafe
// 10 dB under the voice, then the mobile channel.
func ExampleNoisyCafeOnCellPhone() {
	voice := pcm.SynthTalkers(1, 2*time.Second, pcm.Rate24k, 1)[0]
	preset := pcm.NoisyCafeOnCellPhone(1)
	out := preset.Effect(7)(voice)
	fmt.Println(preset.Name, preset.Scene.Name(), out.Duration(), out.Rate)
	// Output: noisy-cafe-cell-phone cafe 2s 24000
}

// A scene as a continuous bed: pieces read one after another join up.
func ExampleScene_Stream() {
	bed := pcm.Street().Stream(pcm.Rate16k, -35, 1)
	a := bed.Read(pcm.SamplesFor(pcm.Rate16k, 500*time.Millisecond))
	b := bed.Read(pcm.SamplesFor(pcm.Rate16k, 500*time.Millisecond))
	fmt.Println(a.Duration()+b.Duration(), bed.Position())
	// Output: 1s 1s
}

// Effects compose: a caller at the far side of a room, speaking fast,
// over a landline.
func ExampleChain() {
	voice := pcm.SynthTalkers(1, 3*time.Second, pcm.Rate24k, 2)[0]
	e := pcm.Chain(pcm.Distance(2, 1), pcm.Tempo(1.2), pcm.Landline())
	out := e(voice)
	fmt.Println(out.Duration(), out.Rate)
	// Output: 2.5s 24000
}

// The library lists every named effect with its defaults.
func ExampleEffectLibrary() {
	groups := map[string]int{}
	for _, e := range pcm.EffectLibrary() {
		groups[e.Group]++
	}
	fmt.Println(groups["background"], groups["phone"], groups["room"], groups["voice"], groups["level"])
	// Output: 12 8 7 3 2
}
