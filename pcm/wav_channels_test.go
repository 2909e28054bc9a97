package pcm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestReadWAVChannelsLayouts decodes small files into channels: stereo and
// three channels of each sample format, each channel rounded on its own.
func TestReadWAVChannelsLayouts(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want [][]int16
	}{
		{"mono", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)), ck("data", s16Bytes(1, -2, 3))),
			[][]int16{{1, -2, 3}}},
		{"stereo s16", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 16)), ck("data", s16Bytes(1, -1, 2, -2, 32767, -32768))),
			[][]int16{{1, 2, 32767}, {-1, -2, -32768}}},
		{"3 channels u8", buildWAV(ck("fmt ", extFmtChunk(wavFormatPCM, 3, 8000, 8)), ck("data", []byte{128, 0, 255, 129, 127, 128})),
			[][]int16{{0, 256}, {-32768, -256}, {32512, 0}}},
		{"stereo s24, ties to even", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 24)), ck("data", s24Bytes(0x80, 0x180, -0x80, 0x7FFFFF))),
			[][]int16{{0, 0}, {2, 32767}}},
		{"stereo f32", buildWAV(ck("fmt ", fmtChunk(wavFormatFloat, 2, 8000, 32)), ck("data", f32Bytes(0.5, -1, 2.5/32768, float32(math.Inf(-1))))),
			[][]int16{{16384, 2}, {-32768, -32768}}},
		{"stereo alaw", buildWAV(ck("fmt ", fmtChunk(wavFormatAlaw, 2, 8000, 8)), ck("data", []byte{0xD5, 0x55})),
			[][]int16{{AlawToLinear(0xD5)}, {AlawToLinear(0x55)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chans, err := DecodeWAVChannels(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			rchans, err := ReadWAVChannels(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(chans) != len(tc.want) || len(rchans) != len(tc.want) {
				t.Fatalf("%d channels (ReadWAVChannels %d), want %d", len(chans), len(rchans), len(tc.want))
			}
			for ch := range chans {
				checkSamples(t, fmt.Sprintf("channel %d", ch), chans[ch], 8000, tc.want[ch])
				checkSamples(t, fmt.Sprintf("ReadWAVChannels channel %d", ch), rchans[ch], 8000, tc.want[ch])
			}
		})
	}
}

// TestReadWAVChannelsTruncated: a short data chunk gives every channel's
// complete frames and ErrWAVDataTruncated, as ReadWAV does.
func TestReadWAVChannelsTruncated(t *testing.T) {
	b := buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 16)), riffChunk{"data", s16Bytes(1, 2, 3, 4, 5), 20})
	chans, err := DecodeWAVChannels(b)
	if !errors.Is(err, ErrWAVDataTruncated) {
		t.Fatalf("err = %v, want ErrWAVDataTruncated", err)
	}
	if len(chans) != 2 || len(chans[0].Samples) != 2 || len(chans[1].Samples) != 2 || chans[0].Samples[1] != 3 || chans[1].Samples[1] != 4 {
		t.Fatalf("got %v, want two channels of the two complete frames", chans)
	}
	if _, err := DecodeWAVChannels([]byte("RIFF....WAVE")); !errors.Is(err, ErrWAVHeaderTruncated) {
		t.Errorf("err = %v, want ErrWAVHeaderTruncated", err)
	}
	nan := buildWAV(ck("fmt ", fmtChunk(wavFormatFloat, 2, 8000, 32)), ck("data", f32Bytes(0, 0, 0, float32(math.NaN()))))
	if chans, err := DecodeWAVChannels(nan); !errors.Is(err, ErrWAVMalformed) || chans != nil {
		t.Errorf("NaN sample: %v, %v; want no channels and ErrWAVMalformed", chans, err)
	}
}

// TestDownmix checks the mean (ties up) and the errors.
func TestDownmix(t *testing.T) {
	l := Chunk{Rate: 8000, Samples: []int16{1, -1, 3, -3, 32767, -32768, 100}}
	r := Chunk{Rate: 8000, Samples: []int16{0, 0, 0, 0, 32767, -32768, 101}}
	got, err := Downmix(l, r)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "stereo", got, 8000, []int16{1, 0, 2, -1, 32767, -32768, 101})
	three, err := Downmix(Chunk{Rate: 16000, Samples: []int16{1, 2}}, Chunk{Rate: 16000, Samples: []int16{1, 2}}, Chunk{Rate: 16000, Samples: []int16{0, -1}})
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "three", three, 16000, []int16{1, 1})
	one, err := Downmix(l)
	if err != nil {
		t.Fatal(err)
	}
	one.Samples[0] = 9
	if l.Samples[0] != 1 {
		t.Error("Downmix of one channel shares its samples; want a copy")
	}
	for name, chans := range map[string][]Chunk{
		"none":         nil,
		"rates differ": {l, {Rate: 16000, Samples: r.Samples}},
		"lengths":      {l, {Rate: 8000, Samples: r.Samples[:3]}},
		"invalid":      {l, {Rate: 0, Samples: r.Samples}},
	} {
		if _, err := Downmix(chans...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRoundMean16 checks the rounding of float means where the float64
// sum is not exact: values of very different sizes at a tie.
func TestRoundMean16(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vs   []float64
		want int16
	}{
		{[]float64{1, 0}, 0}, // 0.5: tie, to even
		{[]float64{3, 0}, 2}, // 1.5
		{[]float64{-1, 0}, 0},
		{[]float64{-3, 0}, -2},
		{[]float64{1, 1e-30}, 1}, // just above the tie, lost in the float64 sum
		{[]float64{1, -1e-30}, 0},
		{[]float64{-1, -1e-30}, -1},
		{[]float64{-1, 1e-30}, 0},
		{[]float64{1 << 31, -(1 << 31) + 1}, 0},
		{[]float64{1 << 31, -(1 << 31) + 1, 2, 5e-324}, 1}, // 3/4 and a bit
		{[]float64{1 << 31, 1 << 31}, 32767},
		{[]float64{-(1 << 31), -(1 << 31)}, -32768},
		{[]float64{32767.5}, 32767},
		{[]float64{-32768.5}, -32768},
		{[]float64{0.49999237}, 0},
	} {
		if got := roundMean16(tc.vs); got != tc.want {
			t.Errorf("roundMean16(%v) = %d, want %d", tc.vs, got, tc.want)
		}
	}
	// Random near-ties against exact rational arithmetic.
	rng := rand.New(rand.NewPCG(20, 20))
	for range 20000 {
		n := 2 + rng.IntN(4)
		vs := make([]float64, n)
		var sum float64
		for i := range n - 1 {
			vs[i] = math.Ldexp(rng.Float64()-0.5, rng.IntN(80)-60)
			sum += vs[i]
		}
		k := float64(rng.IntN(2000) - 1000)
		vs[n-1] = (k+0.5)*float64(n) - sum + math.Ldexp(rng.Float64()-0.5, -rng.IntN(60))
		if got, want := roundMean16(vs), ratMeanRound(vs); got != want {
			t.Fatalf("roundMean16(%v) = %d, exact %d", vs, got, want)
		}
	}
}

// ratMeanRound is the mean of vs rounded half to even and clipped, in
// big.Rat arithmetic.
func ratMeanRound(vs []float64) int16 {
	var sum, v big.Rat
	for _, x := range vs {
		sum.Add(&sum, v.SetFloat64(x))
	}
	sum.Quo(&sum, new(big.Rat).SetInt64(int64(len(vs))))
	fl := new(big.Int).Div(sum.Num(), sum.Denom()) // Euclidean: the floor for a positive divisor
	frac := new(big.Rat).Sub(&sum, new(big.Rat).SetInt(fl))
	q := fl.Int64()
	switch frac.Cmp(big.NewRat(1, 2)) {
	case 1:
		q++
	case 0:
		q += q & 1
	}
	return int16(max(min(q, 32767), -32768))
}

// TestReadWAVDownmixMatchesDownmix: for 16-bit files the mono ReadWAV is
// Downmix of the channels.
func TestReadWAVDownmixMatchesDownmix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, nch := range []uint16{2, 3, 4, 6} {
		data := make([]byte, 0, 2*int(nch)*500)
		for range int(nch) * 500 {
			data = binary.LittleEndian.AppendUint16(data, uint16(rng.Uint32()))
		}
		b := buildWAV(ck("fmt ", extFmtChunk(wavFormatPCM, nch, 8000, 16)), ck("data", data))
		mono, err := DecodeWAV(b)
		if err != nil {
			t.Fatal(err)
		}
		chans, err := DecodeWAVChannels(b)
		if err != nil {
			t.Fatal(err)
		}
		mixed, err := Downmix(chans...)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstSampleDiff(mono.Samples, mixed.Samples); d != "" {
			t.Errorf("%d channels: Downmix differs from DecodeWAV: %s", nch, d)
		}
	}
}

// ExampleReadWAVChannels reads both sides of a stereo call recording: the
// agent on the left, the caller on the right.
func ExampleReadWAVChannels() {
	chans, err := ReadWAVChannelsFile("testdata/ref/call_8k_stereo_mulaw.wav")
	if err != nil {
		fmt.Println(err)
		return
	}
	agent, caller := chans[0], chans[1]
	fmt.Println(len(chans), "channels at", agent.Rate, "Hz,", agent.Duration())
	// The caller speaks last: the second half is louder on the right.
	half := caller.Len() / 2
	fmt.Println(RMS(Chunk{Rate: caller.Rate, Samples: caller.Samples[half:]}) > RMS(Chunk{Rate: agent.Rate, Samples: agent.Samples[half:]}))
	both, err := Downmix(agent, caller)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("mixed:", both.Duration())
	// Output:
	// 2 channels at 8000 Hz, 2.4s
	// true
	// mixed: 2.4s
}
