// Command gen writes the raw inputs that ../make.sh turns into the
// reference fixtures of issue 20 with ffmpeg and sox. Every value is made
// with integer arithmetic or exact float32 constants from a seeded PCG, so
// the inputs are the same on every machine.
//
// Usage: go run ./gen DIR
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./gen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	write(dir, "f32_mono.f32le", f32Mono())
	write(dir, "s24_stereo.s24le", s24(s24Stereo()))
	write(dir, "s24_mono.s24le", s24(s24Mono()))
}

func write(dir, name string, b []byte) {
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// f32Mono returns 4000 float32 samples: first the cases where rounding
// matters (the 0.49999237/32768, exact halves of an LSB of both
// signs, their float32 neighbours, full scale and beyond, subnormals),
// then seeded random values, a third of them on exact halves.
func f32Mono() []byte {
	var v []float32
	v = append(v, 0.49999237/32768, -0.49999237/32768, 0, float32(math.Copysign(0, -1)), 1, -1, 1.5, -2, 32767.5/32768, -32768.5/32768,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32)
	for k := range 40 {
		half := (float32(k) + 0.5) / 32768
		v = append(v, half, -half, math.Nextafter32(half, 1), math.Nextafter32(half, 0), -math.Nextafter32(half, 1), -math.Nextafter32(half, 0))
	}
	rng := rand.New(rand.NewPCG(20, 1))
	for len(v) < 4000 {
		k := float32(rng.IntN(65536) - 32768)
		switch rng.IntN(3) {
		case 0:
			v = append(v, (k+0.5)/32768)
		default:
			v = append(v, float32(rng.Float64()*2-1))
		}
	}
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// s24Stereo returns 4410 frames of 24-bit stereo (8820 samples): seeded
// random values, and every fourth frame a pair whose mean is exactly half
// a 16-bit LSB off a whole value (left + right ≡ 256 mod 512 in 24-bit
// units), which is where round-half-up and round-half-even differ.
func s24Stereo() []int32 {
	rng := rand.New(rand.NewPCG(20, 2))
	out := make([]int32, 0, 2*4410)
	for i := range 4410 {
		l := rng.Int32N(1<<24) - 1<<23
		r := rng.Int32N(1<<24) - 1<<23
		if i%4 == 0 {
			// Move r up by 0..511 so that l + r ≡ 256 (mod 512), or down
			// by 512 from there if that leaves the 24-bit range.
			r += (256 - (l + r)) & 511
			if r > 1<<23-1 {
				r -= 512
			}
		}
		out = append(out, l, r)
	}
	return out
}

// s24Mono returns 2000 24-bit samples, every other one an exact half of a
// 16-bit LSB (x ≡ 128 mod 256).
func s24Mono() []int32 {
	rng := rand.New(rand.NewPCG(20, 3))
	out := make([]int32, 2000)
	for i := range out {
		x := rng.Int32N(1<<24) - 1<<23
		if i%2 == 0 {
			x = x&^255 | 128
		}
		out[i] = x
	}
	return out
}

func s24(v []int32) []byte {
	b := make([]byte, 0, 3*len(v))
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8), byte(x>>16))
	}
	return b
}
