package pcm_test

import (
	"fmt"
	"math"

	"github.com/voicetest-go/voicetest/pcm"
)

func ExampleResample() {
	// 100 ms of a 1 kHz tone at 24 kHz, converted for a telephone line.
	in := pcm.Chunk{Rate: pcm.Rate24k, Samples: make([]int16, 2400)}
	for i := range in.Samples {
		in.Samples[i] = int16(10000 * math.Sin(2*math.Pi*1000*float64(i)/pcm.Rate24k))
	}
	out, err := pcm.Resample(in, pcm.Rate8k)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Rate, out.Len(), out.Duration())
	// Time-aligned: output sample 402 is at 50.25 ms, a quarter period
	// past a zero crossing, so on the tone's crest.
	fmt.Println(out.Samples[402])
	// Output:
	// 8000 800 100ms
	// 10000
}

func ExampleResampler() {
	r, err := pcm.NewResampler(pcm.Rate8k, pcm.Rate24k)
	if err != nil {
		fmt.Println(err)
		return
	}
	frame := make([]int16, 160)              // 20 ms at 8 kHz
	out := make([]int16, 0, r.MaxOut(5*160)) // room for the whole stream: no allocation
	for range 5 {
		out = r.Process(out, frame)
	}
	fmt.Println("after 5 frames:", len(out), "samples; latency", r.Delay().Round(1e5))
	out = r.Flush(out)
	fmt.Println("after Flush:", len(out), "samples")
	// Output:
	// after 5 frames: 2233 samples; latency 7ms
	// after Flush: 2400 samples
}
