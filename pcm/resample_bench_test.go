package pcm

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkResample streams 20 ms frames through a Resampler into a caller
// buffer, the steady state of a telephony bridge. It reports input and
// output samples per second; b.SetBytes counts input PCM16 bytes.
func BenchmarkResample(b *testing.B) {
	for _, p := range [][2]int{{Rate24k, Rate8k}, {Rate8k, Rate24k}, {Rate48k, Rate16k}, {Rate44k1, Rate24k}, {Rate16k, Rate24k}, {Rate24k, Rate16k}} {
		b.Run(fmt.Sprintf("%dto%d", p[0], p[1]), func(b *testing.B) {
			r, err := NewResampler(p[0], p[1])
			if err != nil {
				b.Fatal(err)
			}
			benchResampler(b, r)
		})
	}
}

// benchResampler runs BenchmarkResample's loop on r: 1 s of a tone at r's
// input rate, fed as 20 ms frames.
func benchResampler(b *testing.B, r *Resampler) {
	b.Helper()
	src := tone(r.From(), 440, 10000, 0, r.From()) // 1 s
	frame := r.From() / 50
	dst := make([]int16, 0, r.MaxOut(len(src))+64)
	b.SetBytes(int64(2 * len(src)))
	b.ReportAllocs()
	var out int
	cpu := startCPU(b)
	for b.Loop() {
		dst = dst[:0]
		for i := 0; i < len(src); i += frame {
			dst = r.Process(dst, src[i:min(i+frame, len(src))])
		}
		out += len(dst)
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)*float64(len(src))/s/1e6, "Min/s")
	b.ReportMetric(float64(out)/s/1e6, "Mout/s")
	cpu.report(b, float64(b.N)*float64(len(src)), "Min/cpu-s")
	cpu.report(b, float64(out), "Mout/cpu-s")
}

// BenchmarkNewResampler measures the filter design, which Resample pays on
// every call: telephony pairs (L ≤ 3), 44.1 kHz pairs (L = 80, 160, 320)
// and one that needs the interpolated bank.
func BenchmarkNewResampler(b *testing.B) {
	for _, p := range [][2]int{{Rate24k, Rate8k}, {Rate8k, Rate24k}, {Rate24k, Rate16k}, {Rate44k1, Rate24k}, {Rate44k1, Rate48k}, {Rate22k05, Rate16k}, {44100, 44101}} {
		b.Run(fmt.Sprintf("%dto%d", p[0], p[1]), func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				if _, err := NewResampler(p[0], p[1]); err != nil {
					b.Fatal(err)
				}
			}
			if end, ok := threadCPU(); ok && cpu.ok {
				b.ReportMetric(float64(end-cpu.start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			}
		})
	}
}
