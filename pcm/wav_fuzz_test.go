package pcm

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeWAV feeds arbitrary bytes to DecodeWAV: it must never panic or
// hang, must fail only with this package's errors, must return audio only
// when it succeeds or reports truncated data, and what it returns must
// survive a canonical encode/decode round trip unchanged.
func FuzzDecodeWAV(f *testing.F) {
	for _, fx := range wavFixtures {
		b, err := os.ReadFile(filepath.Join("testdata", fx.name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range []Chunk{testChunk(Rate8k, 0), testChunk(Rate16k, 3), testChunk(Rate24k, 40)} {
		b, err := EncodeWAV(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	pcm8 := fmtChunk(wavFormatPCM, 1, 11025, 8)
	f.Add(buildWAV(ck("data", []byte{129, 127, 200}), ck("JUNK", make([]byte, 7)), ck("fmt ", pcm8)))
	f.Add(buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)), riffChunk{"data", s16Bytes(1, 2, 3), 0xFFFFFFFF}))
	f.Add(buildWAV(ck("fmt ", extFmtChunk(wavFormatFloat, 2, 8000, 32)), ck("data", f32Bytes(0.5, -0.25, float32(math.Inf(1)), 1e-9))))
	f.Add(buildWAV(ck("fmt ", extFmtChunk(wavFormatAlaw, 3, 8000, 8)), ck("data", []byte{1, 2, 3, 4, 5, 6})))
	f.Add([]byte("RIFF"))

	sentinels := []error{ErrNotWAV, ErrWAVHeaderTruncated, ErrWAVDataTruncated, ErrWAVUnsupported, ErrWAVMalformed}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeBoth(t, b)
		if err != nil {
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error %q is none of the WAV sentinels", err)
			}
			if !errors.Is(err, ErrWAVDataTruncated) {
				if c.Rate != 0 || c.Samples != nil {
					t.Fatalf("error %q came with audio (%d Hz, %d samples)", err, c.Rate, len(c.Samples))
				}
				return
			}
		}
		if c.Rate <= 0 {
			t.Fatalf("decoded audio has rate %d (err %v)", c.Rate, err)
		}
		if len(c.Samples) > len(b) {
			t.Fatalf("%d samples from %d bytes", len(c.Samples), len(b))
		}
		again, err2 := DecodeWAV(b)
		if (err == nil) != (err2 == nil) || again.Rate != c.Rate || firstSampleDiff(c.Samples, again.Samples) != "" {
			t.Fatal("decoding the same bytes twice gave different results")
		}
		checkChannels(t, b, c, err)
		enc, err := EncodeWAV(c)
		if err != nil {
			if c.Rate > math.MaxUint32/2 {
				return // too high a rate for a 16-bit WAV header; reported
			}
			t.Fatalf("EncodeWAV of decoded audio: %v", err)
		}
		back, err := DecodeWAV(enc)
		if err != nil {
			t.Fatalf("decoding our own encoding: %v", err)
		}
		if back.Rate != c.Rate || firstSampleDiff(c.Samples, back.Samples) != "" {
			t.Fatal("canonical round trip changed the audio")
		}
	})
}

// checkChannels decodes b into channels, with DecodeWAVChannels and
// ReadWAVChannels, and checks them against c and err, what DecodeWAV
// returned: the same error, channels of c's rate and length, one channel
// equal to c, and several whose Downmix is within one of c (equal for
// 16-bit and narrower samples; wider ones are mixed before rounding and
// clipping, so samples where a channel clipped are not compared).
func checkChannels(t *testing.T, b []byte, c Chunk, err error) {
	t.Helper()
	chans, cerr := DecodeWAVChannels(b)
	rchans, rerr := ReadWAVChannels(bytes.NewReader(b))
	if fmt.Sprint(cerr) != fmt.Sprint(err) || fmt.Sprint(rerr) != fmt.Sprint(err) {
		t.Fatalf("DecodeWAV error %v, DecodeWAVChannels error %v, ReadWAVChannels error %v", err, cerr, rerr)
	}
	if len(chans) != len(rchans) {
		t.Fatalf("DecodeWAVChannels gives %d channels, ReadWAVChannels %d", len(chans), len(rchans))
	}
	for ch := range chans {
		if chans[ch].Rate != c.Rate || len(chans[ch].Samples) != len(c.Samples) || firstSampleDiff(chans[ch].Samples, rchans[ch].Samples) != "" {
			t.Fatalf("channel %d: %d samples at %d Hz (ReadWAVChannels: %d at %d Hz), mono %d at %d Hz",
				ch, len(chans[ch].Samples), chans[ch].Rate, len(rchans[ch].Samples), rchans[ch].Rate, len(c.Samples), c.Rate)
		}
	}
	if len(chans) == 0 || len(c.Samples) == 0 {
		return
	}
	mixed, merr := Downmix(chans...)
	if merr != nil {
		t.Fatalf("Downmix of decoded channels: %v", merr)
	}
	for i, v := range mixed.Samples {
		clipped := false
		for _, ch := range chans {
			clipped = clipped || ch.Samples[i] == math.MaxInt16 || ch.Samples[i] == math.MinInt16
		}
		if clipped && len(chans) > 1 {
			continue // a channel clipped on its own, the mean of the file's samples need not
		}
		if d := int(v) - int(c.Samples[i]); d < -1 || d > 1 || len(chans) == 1 && d != 0 {
			t.Fatalf("sample %d: Downmix of %d channels gives %d, DecodeWAV %d", i, len(chans), v, c.Samples[i])
		}
	}
}
