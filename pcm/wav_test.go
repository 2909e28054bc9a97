package pcm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-audio/audio"
	"github.com/go-audio/wav"
)

// riffChunk is one chunk of a hand-built test file. size overrides the
// declared size when it is not -1.
type riffChunk struct {
	id   string
	body []byte
	size int64
}

func ck(id string, body []byte) riffChunk { return riffChunk{id, body, -1} }

// buildWAV assembles a RIFF/WAVE file from chunks, padding odd ones.
func buildWAV(chunks ...riffChunk) []byte {
	var body []byte
	for _, c := range chunks {
		size := uint32(len(c.body))
		if c.size >= 0 {
			size = uint32(c.size)
		}
		body = append(body, c.id...)
		body = binary.LittleEndian.AppendUint32(body, size)
		body = append(body, c.body...)
		if len(c.body)%2 == 1 {
			body = append(body, 0)
		}
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(body)))...)
	out = append(out, "WAVE"...)
	return append(out, body...)
}

// fmtChunk returns a 16-byte fmt body with a consistent block align.
func fmtChunk(tag, channels uint16, rate uint32, bits uint16) []byte {
	align := channels * ((bits + 7) / 8)
	le := binary.LittleEndian
	b := le.AppendUint16(nil, tag)
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*uint32(align))
	b = le.AppendUint16(b, align)
	return le.AppendUint16(b, bits)
}

// extFmtChunk returns a 40-byte WAVE_FORMAT_EXTENSIBLE fmt body whose
// sub-format GUID is that of tag.
func extFmtChunk(sub, channels uint16, rate uint32, bits uint16) []byte {
	b := fmtChunk(wavFormatExtensible, channels, rate, bits)
	le := binary.LittleEndian
	b = le.AppendUint16(b, 22)   // cbSize
	b = le.AppendUint16(b, bits) // valid bits
	b = le.AppendUint32(b, 0)    // channel mask
	b = le.AppendUint16(b, sub)
	return append(b, wavGUIDSuffix[:]...)
}

func s16Bytes(s ...int16) []byte { return EncodePCM16(nil, s) }

func s24Bytes(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8), byte(x>>16))
	}
	return b
}

func s32Bytes(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func f32Bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestEncodeWAVCanonicalBytes(t *testing.T) {
	got, err := EncodeWAV(Chunk{Rate: Rate8k, Samples: []int16{1, -2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		'R', 'I', 'F', 'F', 40, 0, 0, 0, 'W', 'A', 'V', 'E',
		'f', 'm', 't', ' ', 16, 0, 0, 0,
		1, 0, // PCM
		1, 0, // mono
		0x40, 0x1F, 0, 0, // 8000 Hz
		0x80, 0x3E, 0, 0, // 16000 bytes/s
		2, 0, // block align
		16, 0, // bits
		'd', 'a', 't', 'a', 4, 0, 0, 0,
		1, 0, 0xFE, 0xFF,
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeWAV =\n% X\nwant\n% X", got, want)
	}
}

func testChunk(rate, n int) Chunk {
	s := make([]int16, n)
	state := uint32(7)
	for i := range s {
		state = state*1664525 + 1013904223
		s[i] = int16(state >> 16)
	}
	if n > 2 {
		s[0], s[1] = -32768, 32767
	}
	return Chunk{Rate: rate, Samples: s}
}

func TestWAVRoundTrip(t *testing.T) {
	for _, tc := range []struct{ rate, n int }{{Rate8k, 0}, {Rate16k, 1}, {Rate24k, 24000}, {Rate44k1, 3}, {Rate48k, 20001}, {7, 5}} {
		t.Run(fmt.Sprintf("%dHz_%d", tc.rate, tc.n), func(t *testing.T) {
			c := testChunk(tc.rate, tc.n)
			b, err := EncodeWAV(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != 44+2*tc.n {
				t.Fatalf("EncodeWAV gave %d bytes, want %d", len(b), 44+2*tc.n)
			}
			again, _ := EncodeWAV(c.Clone())
			if !bytes.Equal(b, again) {
				t.Fatal("EncodeWAV is not deterministic")
			}
			var w bytes.Buffer
			if err := WriteWAV(&w, c); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.Bytes(), b) {
				t.Fatal("WriteWAV and EncodeWAV disagree")
			}
			got, err := DecodeWAV(b)
			if err != nil {
				t.Fatal(err)
			}
			checkSamples(t, "round trip", got, tc.rate, c.Samples)
		})
	}
}

func TestEncodeWAVErrors(t *testing.T) {
	if _, err := EncodeWAV(Chunk{Samples: []int16{1}}); !errors.Is(err, ErrBadRate) {
		t.Errorf("EncodeWAV(rate 0) = %v, want ErrBadRate", err)
	}
	if err := WriteWAV(io.Discard, Chunk{Rate: -1}); !errors.Is(err, ErrBadRate) {
		t.Errorf("WriteWAV(rate -1) = %v, want ErrBadRate", err)
	}
	if _, err := EncodeWAV(Chunk{Rate: math.MaxUint32}); err == nil || !strings.Contains(err.Error(), "too high") {
		t.Errorf("EncodeWAV(rate 2³²-1) = %v, want a rate-too-high error", err)
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteWAVReportsWriteErrors(t *testing.T) {
	err := WriteWAV(&errWriter{n: 100}, testChunk(Rate24k, 30000))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("WriteWAV to a failing writer = %v, want the write error", err)
	}
}

// TestWAVReadableByGoAudio checks EncodeWAV's output with an independent
// decoder, github.com/go-audio/wav.
func TestWAVReadableByGoAudio(t *testing.T) {
	c := testChunk(Rate22k05, 5000)
	b, err := EncodeWAV(c)
	if err != nil {
		t.Fatal(err)
	}
	d := wav.NewDecoder(bytes.NewReader(b))
	buf, err := d.FullPCMBuffer()
	if err != nil {
		t.Fatal(err)
	}
	if d.SampleRate != Rate22k05 || d.NumChans != 1 || d.BitDepth != 16 || d.WavAudioFormat != 1 {
		t.Fatalf("go-audio sees %d Hz, %d channels, %d bits, format %d", d.SampleRate, d.NumChans, d.BitDepth, d.WavAudioFormat)
	}
	if len(buf.Data) != len(c.Samples) {
		t.Fatalf("go-audio decoded %d samples, want %d", len(buf.Data), len(c.Samples))
	}
	for i, v := range buf.Data {
		if v != int(c.Samples[i]) {
			t.Fatalf("go-audio sample %d = %d, want %d", i, v, c.Samples[i])
		}
	}
}

// TestReadWAVAgreesWithGoAudio decodes the integer-PCM mono fixtures with
// go-audio/wav too; where it can decode them, the values must agree.
func TestReadWAVAgreesWithGoAudio(t *testing.T) {
	for _, name := range []string{"wav_24k_mono_s16_list.wav", "wav_48k_mono_s32.wav", "wav_sox_44k1_mono_s24.wav"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			buf, err := wav.NewDecoder(f).FullPCMBuffer()
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int16, len(buf.Data))
			shift := buf.SourceBitDepth - 16
			for i, v := range buf.Data {
				want[i] = clamp16(int32((int64(v) + (1<<shift)/2) >> shift))
			}
			got, err := ReadWAVFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := firstSampleDiff(want, got.Samples); d != "" {
				t.Fatalf("ReadWAV and go-audio disagree: %s", d)
			}
		})
	}
}

// testWAVReadableByFFmpeg (TestFFmpeg/WAVReadableByFFmpeg): ffmpeg decodes a
// file WriteWAVFile wrote to the samples written.
func testWAVReadableByFFmpeg(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	// The package's shared ffmpeg run (ffmpeg_farm_test.go) decodes what
	// WriteWAVFile wrote of testChunk(Rate16k, 4000).
	c := testChunk(Rate16k, 4000)
	out, err := farm.outErr("ours.wav.s16")
	if errors.Is(err, errNoFFmpegForTests) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("ffmpeg could not read our WAV: %v", err)
	}
	got, err := FromBytes(Rate16k, out)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "ffmpeg's decoding of our WAV", got, Rate16k, c.Samples)
}

func TestWriteWAVFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.wav")
	first := testChunk(Rate24k, 100)
	if err := WriteWAVFile(path, first); err != nil {
		t.Fatal(err)
	}
	second := testChunk(Rate8k, 50)
	if err := WriteWAVFile(path, second); err != nil {
		t.Fatalf("overwriting: %v", err)
	}
	got, err := ReadWAVFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "after overwrite", got, Rate8k, second.Samples)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	want, _ := EncodeWAV(second)
	if !bytes.Equal(readFileT(t, path), want) {
		t.Error("WriteWAVFile's bytes differ from EncodeWAV's")
	}

	// Failures leave nothing behind.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteWAVFile(sub, first); err == nil {
		t.Error("WriteWAVFile over a directory succeeded")
	}
	if err := WriteWAVFile(filepath.Join(dir, "missing", "x.wav"), first); err == nil {
		t.Error("WriteWAVFile into a missing directory succeeded")
	}
	if err := WriteWAVFile(filepath.Join(dir, "bad.wav"), Chunk{}); !errors.Is(err, ErrBadRate) {
		t.Errorf("WriteWAVFile(zero Chunk) = %v, want ErrBadRate", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "out.wav,sub" {
		t.Errorf("directory holds %v after failed writes, want [out.wav sub]", names)
	}
}

func TestReadWAVFileMissing(t *testing.T) {
	_, err := ReadWAVFile(filepath.Join(t.TempDir(), "nope.wav"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadWAVFile(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestReadWAVErrors(t *testing.T) {
	pcm16 := fmtChunk(wavFormatPCM, 1, 8000, 16)
	tests := []struct {
		name    string
		in      []byte
		want    []error
		mention string // a part of the message
	}{
		{"empty", nil, []error{ErrNotWAV}, "empty"},
		{"text", []byte("hello, this is not audio at all"), []error{ErrNotWAV}, `"hell"`},
		{"AVI", append([]byte("RIFF\x04\x00\x00\x00AVI "), make([]byte, 40)...), []error{ErrNotWAV}, `"AVI "`},
		{"RIFX", append([]byte("RIFX\x04\x00\x00\x00WAVE"), make([]byte, 40)...), []error{ErrWAVUnsupported}, "big-endian"},
		{"RF64", append([]byte("RF64\xff\xff\xff\xffWAVE"), make([]byte, 40)...), []error{ErrWAVUnsupported}, "RF64"},
		{"riff only", []byte("RIFF\x10\x00"), []error{ErrWAVHeaderTruncated}, "12"},
		{"no chunks", []byte("RIFF\x04\x00\x00\x00WAVE"), []error{ErrWAVHeaderTruncated}, `"fmt"`},
		{"no data", buildWAV(ck("fmt ", pcm16)), []error{ErrWAVHeaderTruncated}, `"data"`},
		{"data but no fmt", buildWAV(ck("data", s16Bytes(1, 2))), []error{ErrWAVHeaderTruncated}, `"fmt"`},
		{"ADPCM", buildWAV(ck("fmt ", fmtChunk(2, 1, 8000, 4)), ck("data", []byte{1, 2})), []error{ErrWAVUnsupported}, "Microsoft ADPCM"},
		{"MP3", buildWAV(ck("fmt ", fmtChunk(0x55, 1, 8000, 0)), ck("data", []byte{1, 2})), []error{ErrWAVUnsupported}, "ffmpeg -i"},
		{"unknown GUID", buildWAV(ck("fmt ", append(extFmtChunk(1, 1, 8000, 16)[:39], 0x72)), ck("data", nil)), []error{ErrWAVUnsupported}, "GUID"},
		{"short extensible", buildWAV(ck("fmt ", fmtChunk(wavFormatExtensible, 1, 8000, 16)), ck("data", nil)), []error{ErrWAVMalformed}, "EXTENSIBLE"},
		{"zero channels", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 0, 8000, 16)), ck("data", nil)), []error{ErrWAVMalformed}, "0 channels"},
		{"zero rate", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 0, 16)), ck("data", nil)), []error{ErrWAVMalformed, ErrBadRate}, "sample rate of 0"},
		{"block align", buildWAV(ck("fmt ", append(pcm16[:12:12], 4, 0, 16, 0)), ck("data", nil)), []error{ErrWAVMalformed}, "block align 4"},
		{"tiny fmt", buildWAV(ck("fmt ", pcm16[:8]), ck("data", nil)), []error{ErrWAVMalformed}, "fmt chunk of 8 bytes"},
		{"huge fmt", buildWAV(riffChunk{"fmt ", pcm16, 0xFFFFFFF0}), []error{ErrWAVMalformed}, "fmt chunk of 4294967280 bytes"},
		{"fmt cut short", buildWAV(riffChunk{"fmt ", pcm16, 18}), []error{ErrWAVHeaderTruncated}, "fmt chunk declares 18 bytes but only 16 are present"},
		{"float 24", buildWAV(ck("fmt ", fmtChunk(wavFormatFloat, 1, 8000, 24)), ck("data", nil)), []error{ErrWAVUnsupported}, "24-bit float"},
		{"PCM 40", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 40)), ck("data", nil)), []error{ErrWAVUnsupported}, "40-bit"},
		{"PCM 0 bits", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 0)), ck("data", nil)), []error{ErrWAVUnsupported}, "0-bit"},
		{"mulaw 16", buildWAV(ck("fmt ", fmtChunk(wavFormatMulaw, 1, 8000, 16)), ck("data", nil)), []error{ErrWAVMalformed}, "G.711"},
		{"NaN", buildWAV(ck("fmt ", fmtChunk(wavFormatFloat, 1, 8000, 32)), ck("data", f32Bytes(0.5, float32(math.NaN())))), []error{ErrWAVMalformed}, "NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := decodeBoth(t, tc.in)
			if err == nil {
				t.Fatalf("DecodeWAV succeeded: %d Hz, %d samples", c.Rate, len(c.Samples))
			}
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q is not %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
			if c.Rate != 0 || len(c.Samples) != 0 {
				t.Errorf("DecodeWAV returned audio with a %v error", err)
			}
		})
	}
}

// TestReadWAVEveryPrefix cuts a valid file at every length: a cut in the
// header is ErrWAVHeaderTruncated, a cut in the data is ErrWAVDataTruncated
// with the complete frames before the cut.
func TestReadWAVEveryPrefix(t *testing.T) {
	c := testChunk(Rate16k, 20)
	full, err := EncodeWAV(c)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(full) {
		got, err := decodeBoth(t, full[:n])
		switch {
		case n == 0:
			if !errors.Is(err, ErrNotWAV) {
				t.Errorf("%d bytes: %v, want ErrNotWAV", n, err)
			}
		case n < wavHeaderLen:
			if !errors.Is(err, ErrWAVHeaderTruncated) {
				t.Errorf("%d bytes: %v, want ErrWAVHeaderTruncated", n, err)
			}
		default:
			if !errors.Is(err, ErrWAVDataTruncated) {
				t.Fatalf("%d bytes: %v, want ErrWAVDataTruncated", n, err)
			}
			frames := (n - wavHeaderLen) / 2
			checkSamples(t, fmt.Sprintf("%d-byte prefix", n), got, Rate16k, c.Samples[:frames])
			if want := fmt.Sprintf("declares %d bytes but only %d are present", 40, n-wavHeaderLen); n%2 == 0 && !strings.Contains(err.Error(), want) {
				t.Errorf("%d bytes: error %q does not say %q", n, err, want)
			}
		}
	}
}

func TestReadWAVHugeDeclaredDataDoesNotAllocateIt(t *testing.T) {
	in := buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)), riffChunk{"data", s16Bytes(5, 6), 0xFFFFFFF0})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := DecodeWAV(in)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrWAVDataTruncated) {
		t.Fatalf("err = %v, want ErrWAVDataTruncated", err)
	}
	checkSamples(t, "huge declared data", c, 8000, []int16{5, 6})
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("decoding a 60-byte file allocated %d bytes", grew)
	}
}

func TestReadWAVIncompleteFrame(t *testing.T) {
	in := buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 16)), ck("data", append(s16Bytes(10, 20, 30, 40), 1, 2)))
	c, err := DecodeWAV(in)
	if !errors.Is(err, ErrWAVDataTruncated) || !strings.Contains(err.Error(), "incomplete frame") {
		t.Fatalf("err = %v, want ErrWAVDataTruncated about an incomplete frame", err)
	}
	checkSamples(t, "complete frames", c, 8000, []int16{15, 35})
}

func TestReadWAVLayouts(t *testing.T) {
	pcm8 := fmtChunk(wavFormatPCM, 1, 11025, 8)
	tests := []struct {
		name string
		in   []byte
		rate int
		want []int16
	}{
		// An odd-sized 8-bit data chunk is followed by a pad byte that is
		// not a sample, then by more chunks.
		{"odd data then LIST", buildWAV(ck("fmt ", pcm8), ck("data", []byte{0, 128, 255}), ck("LIST", []byte("INFOjunk"))),
			11025, []int16{-32768, 0, 127 << 8}},
		{"data before fmt", buildWAV(ck("data", []byte{129, 127, 200}), ck("JUNK", make([]byte, 7)), ck("fmt ", pcm8)),
			11025, []int16{256, -256, 72 << 8}},
		{"chunks before fmt", buildWAV(ck("bext", make([]byte, 33)), ck("fmt ", pcm8), ck("fact", []byte{1, 0, 0, 0}), ck("data", []byte{128})),
			11025, []int16{0}},
		{"empty data", buildWAV(ck("fmt ", pcm8), ck("data", nil)), 11025, []int16{}},
		{"fmt with cbSize", buildWAV(ck("fmt ", append(fmtChunk(wavFormatPCM, 1, 8000, 16), 0, 0)), ck("data", s16Bytes(-7))), 8000, []int16{-7}},
		{"second fmt ignored", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)), ck("fmt ", fmtChunk(wavFormatPCM, 2, 9000, 8)), ck("data", s16Bytes(3))), 8000, []int16{3}},
		// ffmpeg writing to a pipe leaves the data size at 0xFFFFFFFF:
		// the data runs to the end of the input.
		{"streaming size", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)), riffChunk{"data", s16Bytes(1, 2, 3), 0xFFFFFFFF}), 8000, []int16{1, 2, 3}},
		// 24-bit: the low byte rounds to the nearest value, ties to even.
		{"s24 rounding", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 24)),
			ck("data", s24Bytes(0x7F, 0x80, -0x80, -0x81, 0x7FFFFF, -0x800000, 0x017F, 0x0180, 0x0280, -0x0180))),
			8000, []int16{0, 0, 0, -1, 32767, -32768, 1, 2, 2, -2}},
		{"s32 rounding", buildWAV(ck("fmt ", extFmtChunk(wavFormatPCM, 1, 8000, 32)),
			ck("data", s32Bytes(0x7FFF, 0x8000, -0x8000, -0x8001, math.MaxInt32, math.MinInt32, 0x18000, 0x28000))),
			8000, []int16{0, 0, 0, -1, 32767, -32768, 2, 2}},
		{"f32 scaling", buildWAV(ck("fmt ", fmtChunk(wavFormatFloat, 1, 8000, 32)),
			ck("data", f32Bytes(0, 0.5, -0.5, 1, -1, 2, -2, float32(math.Inf(1)), float32(math.Inf(-1)), 1.5/32768, -1.5/32768, 100.25/32768, 2.5/32768))),
			8000, []int16{0, 16384, -16384, 32767, -32768, 32767, -32768, 32767, -32768, 2, -2, 100, 2}},
		// Mixed before rounding, the ties of wide samples go to even too.
		{"s24 stereo ties", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 24)),
			ck("data", s24Bytes(0x100, 0, 0x300, 0, -0x100, 0, 0x7FFFFF, 0x7FFFFF))),
			8000, []int16{0, 2, 0, 32767}},
		{"stereo halves", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 8000, 16)), ck("data", s16Bytes(1, 2, -1, -2, 32767, 32767, -32768, -32768, 32767, -32768))),
			8000, []int16{2, -1, 32767, -32768, 0}},
		{"four channels", buildWAV(ck("fmt ", extFmtChunk(wavFormatPCM, 4, 8000, 16)), ck("data", s16Bytes(100, 200, 300, 401))),
			8000, []int16{250}},
		{"extensible mulaw", buildWAV(ck("fmt ", extFmtChunk(wavFormatMulaw, 1, 8000, 8)), ck("data", []byte{0x00, 0x80, 0xFF})),
			8000, []int16{-32124, 32124, 0}},
		{"12-bit in 16", buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 12)), ck("data", s16Bytes(0x7FF0, -16))),
			8000, []int16{0x7FF0, -16}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := decodeBoth(t, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkSamples(t, tc.name, c, tc.rate, tc.want)
		})
	}
}

// TestReadWAVFromCurrentPosition reads a WAV embedded after other data.
func TestReadWAVFromCurrentPosition(t *testing.T) {
	wavBytes := buildWAV(ck("data", s16Bytes(4, 5)), ck("fmt ", fmtChunk(wavFormatPCM, 1, 8000, 16)))
	r := bytes.NewReader(append([]byte("prefix-"), wavBytes...))
	if _, err := r.Seek(7, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	c, err := ReadWAV(r)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "embedded", c, 8000, []int16{4, 5})
}

// failingReader fails every read after the first n bytes.
type failingReader struct {
	*bytes.Reader
	n int64
}

func (f *failingReader) Read(p []byte) (int, error) {
	pos, _ := f.Seek(0, io.SeekCurrent)
	if pos >= f.n {
		return 0, errors.New("device error")
	}
	if int64(len(p)) > f.n-pos {
		p = p[:f.n-pos]
	}
	return f.Reader.Read(p)
}

func TestReadWAVReportsReadErrors(t *testing.T) {
	b, _ := EncodeWAV(testChunk(Rate8k, 100))
	for _, n := range []int64{0, 6, 20, 44, 100} {
		_, err := ReadWAV(&failingReader{bytes.NewReader(b), n})
		if err == nil || !strings.Contains(err.Error(), "device error") {
			t.Errorf("read failing after %d bytes: %v, want the device error", n, err)
		}
	}
}

func ExampleEncodeWAV() {
	c := Chunk{Rate: Rate8k, Samples: []int16{0, 1000, -1000}}
	b, err := EncodeWAV(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(b), string(b[:4]), string(b[8:12]))

	back, err := DecodeWAV(b)
	fmt.Println(back.Rate, back.Samples, err)

	_, err = DecodeWAV(b[:48])
	fmt.Println(errors.Is(err, ErrWAVDataTruncated))
	_, err = DecodeWAV([]byte("ID3\x04 an MP3 file"))
	fmt.Println(err)
	// Output:
	// 50 RIFF WAVE
	// 8000 [0 1000 -1000] <nil>
	// true
	// pcm: not a WAV file: it starts with "ID3\x04", not "RIFF"
}

func ExampleReadWAVFile() {
	// A 3-channel 22.05 kHz file made by ffmpeg, read as mono.
	c, err := ReadWAVFile("testdata/wav_22k05_3ch_s16.wav")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Rate, c.Len(), c.Duration())
	// Output:
	// 22050 480 21.768707ms
}

// BenchmarkDecodeWAV decodes a 1 s, 24 kHz, 16-bit mono WAV from memory.
func BenchmarkDecodeWAV(b *testing.B) {
	in, err := EncodeWAV(testChunk(Rate24k, Rate24k))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeWAV(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeWAVStereo24 decodes 1 s of 24 kHz 24-bit stereo (the
// general conversion path).
func BenchmarkDecodeWAVStereo24(b *testing.B) {
	src := testChunk(Rate24k, 2*Rate24k).Samples
	data := make([]int32, len(src))
	for i, s := range src {
		data[i] = int32(s)<<8 | int32(i&0xFF)
	}
	in := buildWAV(ck("fmt ", extFmtChunk(wavFormatPCM, 2, Rate24k, 24)), ck("data", s24Bytes(data...)))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeWAV(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeWAV encodes 1 s of 24 kHz mono.
func BenchmarkEncodeWAV(b *testing.B) {
	c := testChunk(Rate24k, Rate24k)
	b.SetBytes(int64(wavHeaderLen + 2*len(c.Samples)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeWAV(c); err != nil {
			b.Fatal(err)
		}
	}
}

// memWriteSeeker is an in-memory io.WriteSeeker for go-audio's encoder.
type memWriteSeeker struct {
	buf []byte
	pos int
}

func (m *memWriteSeeker) Write(p []byte) (int, error) {
	if need := m.pos + len(p); need > len(m.buf) {
		m.buf = append(m.buf, make([]byte, need-len(m.buf))...)
	}
	m.pos += copy(m.buf[m.pos:], p)
	return len(p), nil
}

func (m *memWriteSeeker) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		m.pos = int(off)
	case io.SeekCurrent:
		m.pos += int(off)
	case io.SeekEnd:
		m.pos = len(m.buf) + int(off)
	}
	return int64(m.pos), nil
}

// BenchmarkGoAudioEncodeWAV is go-audio/wav's encoder on the same input as
// BenchmarkEncodeWAV, for comparison (it is not used by the package).
func BenchmarkGoAudioEncodeWAV(b *testing.B) {
	c := testChunk(Rate24k, Rate24k)
	ints := make([]int, len(c.Samples))
	for i, s := range c.Samples {
		ints[i] = int(s)
	}
	b.SetBytes(int64(wavHeaderLen + 2*len(c.Samples)))
	b.ReportAllocs()
	for b.Loop() {
		w := &memWriteSeeker{}
		e := wav.NewEncoder(w, Rate24k, 16, 1, 1)
		if err := e.Write(&audio.IntBuffer{Data: ints, Format: &audio.Format{NumChannels: 1, SampleRate: Rate24k}}); err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoAudioDecodeWAV is go-audio/wav's decoder on the same input as
// BenchmarkDecodeWAV, for comparison.
func BenchmarkGoAudioDecodeWAV(b *testing.B) {
	in, err := EncodeWAV(testChunk(Rate24k, Rate24k))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wav.NewDecoder(bytes.NewReader(in)).FullPCMBuffer(); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeBoth decodes b with DecodeWAV and with ReadWAV, which take
// different paths to the samples, and fails unless they agree.
func decodeBoth(t testing.TB, b []byte) (Chunk, error) {
	t.Helper()
	c, err := DecodeWAV(b)
	rc, rerr := ReadWAV(bytes.NewReader(b))
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Fatalf("DecodeWAV error %v, ReadWAV error %v", err, rerr)
	}
	if c.Rate != rc.Rate || (c.Samples == nil) != (rc.Samples == nil) || firstSampleDiff(c.Samples, rc.Samples) != "" {
		t.Fatalf("DecodeWAV and ReadWAV return different audio")
	}
	return c, err
}

// BenchmarkReadWAV reads the same file as BenchmarkDecodeWAV through an
// io.ReadSeeker (the path ReadWAVFile takes).
func BenchmarkReadWAV(b *testing.B) {
	in, err := EncodeWAV(testChunk(Rate24k, Rate24k))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadWAV(bytes.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}
