package pcm

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"testing"
	"time"
)

// updateG711 rewrites the G.711 fixtures from the installed ffmpeg.
var updateG711 = flag.Bool("update-g711", false, "regenerate pcm/testdata/g711_* from ffmpeg")

// The committed fixtures, made by ffmpeg (see testdata/wav_g711_README.md):
//
//	g711_{mulaw,alaw}_sweep.gz   ffmpeg's encoding of every int16 value, in
//	                             order from -32768 to 32767 (65536 bytes, gzipped)
//	g711_{mulaw,alaw}_decode.s16le  ffmpeg's decoding of the codes 0..255
//	                             (256 little-endian int16)
const (
	g711MulawSweep  = "testdata/g711_mulaw_sweep.gz"
	g711AlawSweep   = "testdata/g711_alaw_sweep.gz"
	g711MulawDecode = "testdata/g711_mulaw_decode.s16le"
	g711AlawDecode  = "testdata/g711_alaw_decode.s16le"
)

// allSamples returns every int16 value, ascending.
func allSamples() []int16 {
	s := make([]int16, 0, 1<<16)
	for v := -32768; v <= 32767; v++ {
		s = append(s, int16(v))
	}
	return s
}

// allCodes returns the bytes 0..255.
func allCodes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func readS16(t *testing.T, path string) []int16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodePCM16(nil, b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// firstByteDiff describes the first difference between want and got.
func firstByteDiff(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("first difference at index %d: got 0x%02X, want 0x%02X", i, got[i], want[i])
		}
	}
	return ""
}

func firstSampleDiff(want, got []int16) string {
	if len(want) != len(got) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("first difference at index %d: got %d, want %d", i, got[i], want[i])
		}
	}
	return ""
}

type g711Law struct {
	name       string
	ffmpegFmt  string
	sweep      string
	decode     string
	encode     func([]byte, []int16) []byte
	decodeFunc func([]int16, []byte) []int16
}

var g711Laws = []g711Law{
	{"mulaw", "mulaw", g711MulawSweep, g711MulawDecode, EncodeMulaw, DecodeMulaw},
	{"alaw", "alaw", g711AlawSweep, g711AlawDecode, EncodeAlaw, DecodeAlaw},
}

func TestG711EncodeMatchesFFmpegFixture(t *testing.T) {
	for _, law := range g711Laws {
		t.Run(law.name, func(t *testing.T) {
			want := readGzip(t, law.sweep)
			got := law.encode(nil, allSamples())
			if d := firstByteDiff(want, got); d != "" {
				t.Fatalf("encoding all int16 values differs from ffmpeg (%s): %s", law.sweep, d)
			}
			// The same values in a scrambled order: in the ascending sweep
			// eight neighbours share a code, so a code written for the
			// wrong sample of the encoder's groups of eight would agree
			// with ffmpeg there. Stepping by 40503 (odd, so every value
			// once) puts values far apart side by side.
			scrambled := make([]int16, 1<<16)
			for i := range scrambled {
				scrambled[i] = int16(uint16(i * 40503))
			}
			got = law.encode(nil, scrambled)
			for i, v := range scrambled {
				if w := want[int(v)+32768]; got[i] != w {
					t.Fatalf("scrambled order: sample %d (%d) encodes to %#02x, ffmpeg %#02x (%s)", i, v, got[i], w, law.sweep)
				}
			}
		})
	}
}

func TestG711DecodeMatchesFFmpegFixture(t *testing.T) {
	for _, law := range g711Laws {
		t.Run(law.name, func(t *testing.T) {
			want := readS16(t, law.decode)
			got := law.decodeFunc(nil, allCodes())
			if d := firstSampleDiff(want, got); d != "" {
				t.Fatalf("decoding codes 0..255 differs from ffmpeg (%s): %s", law.decode, d)
			}
		})
	}
}

// testG711FFmpegNow (TestFFmpeg/G711FFmpegNow) runs the installed ffmpeg on the same inputs and checks
// that it still agrees with the committed fixtures and with this package;
// with -update-g711 it rewrites the fixtures instead.
func testG711FFmpegNow(t *testing.T, farm ffmpegFarm) {
	if !*updateG711 { // -update-g711 writes testdata, which other tests read
		t.Parallel()
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg); the committed fixtures are still checked")
	}
	// The package's shared ffmpeg run (ffmpeg_farm_test.go) makes all four
	// files: the sweep encoded with each law, and the codes decoded as each
	// law.
	for _, law := range g711Laws {
		t.Run(law.name, func(t *testing.T) {
			enc := farm.out(t, "g711-"+law.name+".enc")
			dec := farm.out(t, "g711-"+law.name+".dec")
			if *updateG711 {
				var z bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
				if _, err := zw.Write(enc); err != nil {
					t.Fatal(err)
				}
				if err := zw.Close(); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(law.sweep, z.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(law.decode, dec, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s and %s", law.sweep, law.decode)
			}
			if d := firstByteDiff(readGzip(t, law.sweep), enc); d != "" {
				t.Errorf("installed ffmpeg's %s encoding differs from %s: %s (rerun with -update-g711 if ffmpeg changed on purpose)", law.name, law.sweep, d)
			}
			if d := firstByteDiff(enc, law.encode(nil, allSamples())); d != "" {
				t.Errorf("Encode%s differs from installed ffmpeg: %s", law.name, d)
			}
			if !bytes.Equal(readFileT(t, law.decode), dec) {
				t.Errorf("installed ffmpeg's %s decoding differs from %s (rerun with -update-g711 if ffmpeg changed on purpose)", law.name, law.decode)
			}
			want, err := DecodePCM16(nil, dec)
			if err != nil {
				t.Fatal(err)
			}
			if d := firstSampleDiff(want, law.decodeFunc(nil, allCodes())); d != "" {
				t.Errorf("Decode%s differs from installed ffmpeg: %s", law.name, d)
			}
		})
	}
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestG711SpecValues checks code values given in ITU-T G.711 and its
// common descriptions, independently of ffmpeg.
func TestG711SpecValues(t *testing.T) {
	mu := map[byte]int16{0x00: -32124, 0x80: 32124, 0x7F: 0, 0xFF: 0, 0x7E: -8, 0xFE: 8, 0x70: -120, 0xEF: 132, 0xF0: 120}
	for code, want := range mu {
		if got := MulawToLinear(code); got != want {
			t.Errorf("MulawToLinear(0x%02X) = %d, want %d", code, got, want)
		}
	}
	a := map[byte]int16{0xD5: 8, 0x55: -8, 0xAA: 32256, 0x2A: -32256, 0xD4: 24, 0xC5: 264, 0x80: 5504}
	for code, want := range a {
		if got := AlawToLinear(code); got != want {
			t.Errorf("AlawToLinear(0x%02X) = %d, want %d", code, got, want)
		}
	}
	if got := LinearToMulaw(0); got != 0xFF {
		t.Errorf("LinearToMulaw(0) = 0x%02X, want 0xFF (positive zero)", got)
	}
	if got := LinearToMulaw(32767); got != 0x80 {
		t.Errorf("LinearToMulaw(32767) = 0x%02X, want 0x80", got)
	}
	if got := LinearToMulaw(-32768); got != 0x00 {
		t.Errorf("LinearToMulaw(-32768) = 0x%02X, want 0x00", got)
	}
	if got := LinearToAlaw(0); got != 0xD5 {
		t.Errorf("LinearToAlaw(0) = 0x%02X, want 0xD5", got)
	}
	if got := LinearToAlaw(-32768); got != 0x2A {
		t.Errorf("LinearToAlaw(-32768) = 0x%02X, want 0x2A", got)
	}
}

// g711MaxError returns the largest error allowed when s goes through the
// codec whose decoded levels are values: half the gap between the levels
// just below and just above s, plus 4 for the two low bits the encoder drops
// (14-bit decisions) and the rounding of the midpoint.|decode(encode(s)) - s| must stay within half of
// it plus the 3 units lost to the 14-bit truncation (and 1 for rounding).
func g711MaxError(values *[256]int16, s int16) int32 {
	// Find the decoded levels just below and just above s.
	lo, hi := int32(-1<<20), int32(1<<20)
	for _, v := range values {
		v := int32(v)
		if v <= int32(s) && v > lo {
			lo = v
		}
		if v >= int32(s) && v < hi {
			hi = v
		}
	}
	switch {
	case lo == -1<<20: // below the lowest level: the error is the distance to it
		return hi - int32(s)
	case hi == 1<<20: // above the highest level
		return int32(s) - lo
	}
	return (hi-lo)/2 + 4
}

func TestG711RoundTripWithinQuantisationStep(t *testing.T) {
	for _, law := range []struct {
		name  string
		table *g711Tables
	}{{"mulaw", mulawTables}, {"alaw", alawTables}} {
		t.Run(law.name, func(t *testing.T) {
			worst := int32(0)
			for _, s := range allSamples() {
				got := int32(law.table.decode[law.table.encode[encodeIndex(s)]])
				diff := got - int32(s)
				if diff < 0 {
					diff = -diff
				}
				limit := g711MaxError(&law.table.decode, s)
				if diff > limit {
					t.Fatalf("sample %d → code 0x%02X → %d: error %d exceeds %d", s, law.table.encode[encodeIndex(s)], got, diff, limit)
				}
				worst = max(worst, diff)
			}
			t.Logf("largest round-trip error over all int16: %d", worst)
		})
	}
}

func TestG711EncodeIsMonotonic(t *testing.T) {
	for _, law := range []struct {
		name  string
		table *g711Tables
	}{{"mulaw", mulawTables}, {"alaw", alawTables}} {
		t.Run(law.name, func(t *testing.T) {
			prev := int16(-32768)
			for _, s := range allSamples() {
				v := law.table.decode[law.table.encode[encodeIndex(s)]]
				if v < prev {
					t.Fatalf("sample %d decodes back to %d, below %d for a smaller sample", s, v, prev)
				}
				prev = v
			}
		})
	}
}

func TestG711CodesRoundTrip(t *testing.T) {
	for _, c := range allCodes() {
		want := c
		if c == 0x7F {
			want = 0xFF // µ-law negative zero encodes as positive zero, as in ffmpeg
		}
		if got := LinearToMulaw(MulawToLinear(c)); got != want {
			t.Errorf("µ-law 0x%02X → %d → 0x%02X, want 0x%02X", c, MulawToLinear(c), got, want)
		}
		if got := LinearToAlaw(AlawToLinear(c)); got != c {
			t.Errorf("A-law 0x%02X → %d → 0x%02X, want 0x%02X", c, AlawToLinear(c), got, c)
		}
	}
}

func TestG711AppendsToDst(t *testing.T) {
	src := []int16{0, 1000, -1000, 32767}
	prefix := []byte{1, 2, 3}
	got := EncodeMulaw(prefix, src)
	if !bytes.Equal(got[:3], []byte{1, 2, 3}) || len(got) != 7 {
		t.Fatalf("EncodeMulaw did not append: %v", got)
	}
	for i, s := range src {
		if got[3+i] != LinearToMulaw(s) {
			t.Errorf("EncodeMulaw[%d] = 0x%02X, want 0x%02X", i, got[3+i], LinearToMulaw(s))
		}
	}
	samples := DecodeAlaw([]int16{7}, EncodeAlaw(nil, src))
	if len(samples) != 5 || samples[0] != 7 {
		t.Fatalf("DecodeAlaw did not append: %v", samples)
	}
	for i, s := range src {
		if want := AlawToLinear(LinearToAlaw(s)); samples[1+i] != want {
			t.Errorf("DecodeAlaw[%d] = %d, want %d", i, samples[1+i], want)
		}
	}
	// Reusing capacity must not disturb the prefix and must reuse memory.
	buf := make([]byte, 0, 16)
	out := EncodeAlaw(buf, src)
	if &out[0] != &buf[:1][0] {
		t.Error("EncodeAlaw allocated although dst had capacity")
	}
}

func TestG711ZeroAllocs(t *testing.T) {
	src := allSamples()[:4096]
	codes := EncodeMulaw(nil, src)
	enc := make([]byte, 0, len(src))
	dec := make([]int16, 0, len(codes))
	cases := map[string]func(){
		"EncodeMulaw": func() { enc = EncodeMulaw(enc[:0], src) },
		"DecodeMulaw": func() { dec = DecodeMulaw(dec[:0], codes) },
		"EncodeAlaw":  func() { enc = EncodeAlaw(enc[:0], src) },
		"DecodeAlaw":  func() { dec = DecodeAlaw(dec[:0], codes) },
	}
	for name, f := range cases {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s with a caller buffer: %v allocations per run, want 0", name, n)
		}
	}
}

func TestChunkG711(t *testing.T) {
	c := Chunk{Rate: Rate8k, Samples: []int16{0, 100, -100, 20000, -20000}}
	mu, err := ChunkToMulaw(c)
	if err != nil {
		t.Fatal(err)
	}
	back := MulawToChunk(mu)
	if back.Rate != Rate8k || len(back.Samples) != len(c.Samples) {
		t.Fatalf("MulawToChunk = rate %d, %d samples", back.Rate, len(back.Samples))
	}
	for i, s := range c.Samples {
		if want := MulawToLinear(LinearToMulaw(s)); back.Samples[i] != want {
			t.Errorf("µ-law sample %d: %d, want %d", i, back.Samples[i], want)
		}
	}
	al, err := ChunkToAlaw(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := AlawToChunk(al); got.Rate != Rate8k || got.Samples[3] != AlawToLinear(LinearToAlaw(20000)) {
		t.Errorf("AlawToChunk = %+v", got)
	}

	// Audio at another rate is resampled to 8 kHz first: the bytes equal
	// those of Resample followed by the 8 kHz encoder.
	tone := Chunk{Rate: Rate24k, Samples: make([]int16, 2400)}
	for i := range tone.Samples {
		tone.Samples[i] = int16(8000 * math.Sin(2*math.Pi*1000*float64(i)/Rate24k))
	}
	at8k, err := Resample(tone, Rate8k)
	if err != nil {
		t.Fatal(err)
	}
	for _, law := range []struct {
		name   string
		encode func(Chunk) ([]byte, error)
		want   []byte
	}{
		{"µ-law", ChunkToMulaw, EncodeMulaw(nil, at8k.Samples)},
		{"A-law", ChunkToAlaw, EncodeAlaw(nil, at8k.Samples)},
	} {
		got, err := law.encode(tone)
		if err != nil {
			t.Fatalf("%s of 24 kHz audio: %v", law.name, err)
		}
		if len(got) != 800 || !bytes.Equal(got, law.want) {
			t.Errorf("%s of 100 ms at 24 kHz: %d bytes, equal to Resample+encode: %v; want 800 bytes, equal", law.name, len(got), bytes.Equal(got, law.want))
		}
	}
	if _, err := ChunkToMulaw(Chunk{}); err == nil || !errors.Is(err, ErrBadRate) {
		t.Errorf("ChunkToMulaw(zero Chunk) = %v, want ErrBadRate", err)
	}
	if got := MulawToChunk(nil); got.Rate != Rate8k || len(got.Samples) != 0 {
		t.Errorf("MulawToChunk(nil) = %+v", got)
	}
}

func ExampleEncodeMulaw() {
	samples := []int16{0, 1000, -1000, 32767, -32768}
	codes := EncodeMulaw(nil, samples)
	fmt.Printf("% X\n", codes)
	fmt.Println(DecodeMulaw(nil, codes))
	// Output:
	// FF CE 4E 80 00
	// [0 988 -988 32124 -32124]
}

func ExampleChunkToMulaw() {
	c := Chunk{Rate: Rate8k, Samples: []int16{0, 8, -8, 4000}}
	b, err := ChunkToMulaw(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% X\n", b)
	fmt.Println(MulawToChunk(b).Samples)
	// 24 kHz audio is resampled to 8 kHz: 240 samples become 80 bytes.
	b, err = ChunkToMulaw(Silence(Rate24k, 10*time.Millisecond))
	fmt.Println(len(b), err)
	// Output:
	// FF FE 7E AF
	// [0 8 -8 4092]
	// 80 <nil>
}

func BenchmarkEncodeMulaw(b *testing.B) { benchEncode(b, EncodeMulaw) }
func BenchmarkDecodeMulaw(b *testing.B) { benchDecode(b, DecodeMulaw, EncodeMulaw) }
func BenchmarkEncodeAlaw(b *testing.B)  { benchEncode(b, EncodeAlaw) }
func BenchmarkDecodeAlaw(b *testing.B)  { benchDecode(b, DecodeAlaw, EncodeAlaw) }

// benchSamples is 1 s of 8 kHz audio covering the whole sample range.
func benchSamples() []int16 {
	s := make([]int16, Rate8k)
	for i := range s {
		s[i] = int16(i * 8191)
	}
	return s
}

// benchEncode measures throughput in input (PCM16) bytes.
func benchEncode(b *testing.B, enc func([]byte, []int16) []byte) {
	src := benchSamples()
	dst := make([]byte, 0, len(src))
	b.SetBytes(int64(2 * len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst = enc(dst[:0], src)
	}
	if len(dst) != len(src) {
		b.Fatal("short encode")
	}
}

// benchDecode measures throughput in input (G.711) bytes.
func benchDecode(b *testing.B, dec func([]int16, []byte) []int16, enc func([]byte, []int16) []byte) {
	src := enc(nil, benchSamples())
	dst := make([]int16, 0, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst = dec(dst[:0], src)
	}
	if len(dst) != len(src) {
		b.Fatal("short decode")
	}
}

// TestG711EveryLength checks the bulk functions against the per-sample
// ones for lengths around the eight-at-a-time loop.
func TestG711EveryLength(t *testing.T) {
	src := allSamples()[30000:30040]
	for n := range len(src) {
		mu, a := EncodeMulaw(nil, src[:n]), EncodeAlaw(nil, src[:n])
		if len(mu) != n || len(a) != n {
			t.Fatalf("length %d: encoded %d and %d bytes", n, len(mu), len(a))
		}
		muBack, aBack := DecodeMulaw(nil, mu), DecodeAlaw(nil, a)
		if len(muBack) != n || len(aBack) != n {
			t.Fatalf("length %d: decoded %d and %d samples", n, len(muBack), len(aBack))
		}
		for i, s := range src[:n] {
			if mu[i] != LinearToMulaw(s) || a[i] != LinearToAlaw(s) {
				t.Fatalf("length %d, sample %d: bulk and single encodings differ", n, i)
			}
			if muBack[i] != MulawToLinear(mu[i]) || aBack[i] != AlawToLinear(a[i]) {
				t.Fatalf("length %d, sample %d: bulk and single decodings differ", n, i)
			}
		}
	}
}
