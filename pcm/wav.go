package pcm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// WAV input and output.
//
// Reading accepts the WAV files that recorders, TTS engines, ffmpeg and sox
// write: any sample rate; any number of channels, averaged to mono; 8-bit
// unsigned and 16-, 24- and 32-bit signed integer PCM; 32- and 64-bit IEEE
// float; G.711 µ-law and A-law; each either as a plain format tag or inside
// WAVE_FORMAT_EXTENSIBLE. Chunks other than "fmt " and "data" (LIST, fact,
// JUNK, bext, …) are skipped, wherever they are. The result is always 16-bit
// mono: wider samples are rounded to the nearest 16-bit value (halves round
// up), and float samples are scaled by 32768, rounded and clipped to the
// int16 range.
//
// Writing always produces the canonical 44-byte header followed by 16-bit
// mono PCM, so the same Chunk always gives the same bytes.
//
// The RIFF parsing is this package's own rather than github.com/go-audio/wav's
// Decoder: that decoder returns a short data chunk as if it were complete,
// decodes the pad byte of an odd-sized 8-bit data chunk as a sample, drops
// the sub-format of WAVE_FORMAT_EXTENSIBLE files (so it cannot tell float
// from integer), and allocates whatever size a chunk header declares, which
// a corrupt or hostile file can set to 4 GiB. Its output is still used in
// the tests as an independent check of this reader and writer.

// Errors reported when reading WAV data. Use errors.Is to test for them;
// the message of the returned error says what exactly was wrong.
var (
	// ErrNotWAV reports input that is not a RIFF/WAVE file at all.
	ErrNotWAV = errors.New("pcm: not a WAV file")
	// ErrWAVHeaderTruncated reports input that ends before the header (the
	// fmt chunk and the start of the data chunk) is complete.
	ErrWAVHeaderTruncated = errors.New("pcm: WAV header truncated")
	// ErrWAVDataTruncated reports a data chunk shorter than its header
	// declares, or that ends in an incomplete frame. ReadWAV returns the
	// complete frames that were present along with this error.
	ErrWAVDataTruncated = errors.New("pcm: WAV data truncated")
	// ErrWAVUnsupported reports a well-formed WAV file in an encoding this
	// package does not decode, such as ADPCM or MP3.
	ErrWAVUnsupported = errors.New("pcm: unsupported WAV format")
	// ErrWAVMalformed reports a WAV header with impossible values, such as
	// zero channels or a block alignment that does not match the sample
	// size. A zero sample rate is reported as both ErrWAVMalformed and
	// ErrBadRate.
	ErrWAVMalformed = errors.New("pcm: malformed WAV file")
)

// WAV format tags (the wFormatTag field of the fmt chunk).
const (
	wavFormatPCM        = 0x0001
	wavFormatFloat      = 0x0003
	wavFormatAlaw       = 0x0006
	wavFormatMulaw      = 0x0007
	wavFormatExtensible = 0xFFFE
)

// wavFormatName names common format tags this package does not decode, for
// error messages.
func wavFormatName(tag uint16) string {
	switch tag {
	case 0x0002:
		return "Microsoft ADPCM"
	case 0x0011:
		return "IMA ADPCM"
	case 0x0031:
		return "GSM 6.10"
	case 0x0040:
		return "G.721 ADPCM"
	case 0x0050:
		return "MPEG audio"
	case 0x0055:
		return "MP3"
	case 0x00FF, 0x1610:
		return "AAC"
	case 0x0161, 0x0162, 0x0163:
		return "Windows Media Audio"
	case 0x2000:
		return "AC-3"
	case 0xF1AC:
		return "FLAC"
	}
	return "unknown encoding"
}

// wavGUIDSuffix is the tail shared by the KSDATAFORMAT_SUBTYPE GUIDs of
// WAVE_FORMAT_EXTENSIBLE; the first two bytes are the format tag.
var wavGUIDSuffix = [14]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

const (
	// wavMaxFmtSize bounds the fmt chunk this reader accepts; real ones
	// are 16 to 40 bytes.
	wavMaxFmtSize = 1024
	// wavStreamingSize is the data size ffmpeg writes when it cannot seek
	// back to fill in the real one (output to a pipe): read to the end.
	wavStreamingSize = 0xFFFFFFFF
	// wavReadBlock is how many bytes of sample data are read at a time.
	wavReadBlock = 64 << 10
	// wavHeaderLen is the size of the canonical header that writes produce.
	wavHeaderLen = 44
)

// wavFormat describes the sample data of a WAV file.
type wavFormat struct {
	tag        uint16 // wavFormatPCM, wavFormatFloat, wavFormatAlaw or wavFormatMulaw
	channels   int
	rate       int
	bytes      int // bytes per sample of one channel
	blockAlign int // bytes per frame (one sample of every channel)
}

// ReadWAV reads a WAV file from r and returns its audio as 16-bit mono.
//
// r is read from its current position. On an error the Chunk is empty,
// except with ErrWAVDataTruncated: then it holds the complete frames that
// were present, and the error says how many bytes were declared and found.
// A data chunk whose size is 0xFFFFFFFF, as ffmpeg writes to a pipe, is read
// to the end of r.
func ReadWAV(r io.ReadSeeker) (Chunk, error) {
	f, dataSize, err := readWAVHeader(r)
	if err != nil {
		return Chunk{}, err
	}
	return readWAVData(r, f, dataSize)
}

// ReadWAVFile reads the WAV file at path; see ReadWAV.
func ReadWAVFile(path string) (Chunk, error) {
	fh, err := os.Open(path)
	if err != nil {
		return Chunk{}, fmt.Errorf("pcm: reading WAV: %w", err)
	}
	defer fh.Close()
	c, err := ReadWAV(fh)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// DecodeWAV decodes the WAV file held in b; see ReadWAV. It converts the
// samples straight from b, without copying them first.
func DecodeWAV(b []byte) (Chunk, error) {
	r := bytes.NewReader(b)
	f, declared, err := readWAVHeader(r)
	if err != nil {
		return Chunk{}, err
	}
	data := b[len(b)-r.Len():]
	have, want := wavDataExtent(declared, int64(len(data)))
	whole := have - have%int64(f.blockAlign)
	out, err := convertWAV(make([]int16, 0, whole/int64(f.blockAlign)), data[:whole], f)
	if err != nil {
		return Chunk{}, err
	}
	return finishWAVData(Chunk{Rate: f.rate, Samples: out}, f, declared, have, want)
}

// readWAVHeader reads up to the start of the sample data, leaving r there.
// It returns the format and the declared data size in bytes.
func readWAVHeader(r io.ReadSeeker) (wavFormat, int64, error) {
	var hdr [12]byte
	n, err := io.ReadFull(r, hdr[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return wavFormat{}, 0, fmt.Errorf("pcm: reading WAV header: %w", err)
	}
	switch {
	case n == 0:
		return wavFormat{}, 0, fmt.Errorf("%w: the input is empty", ErrNotWAV)
	case n < 4 && string(hdr[:n]) == "RIFF"[:n]:
		return wavFormat{}, 0, fmt.Errorf("%w: the input is only %d bytes long, a RIFF header needs 12", ErrWAVHeaderTruncated, n)
	case n >= 4 && string(hdr[:4]) == "RIFX":
		return wavFormat{}, 0, fmt.Errorf("%w: big-endian RIFX files are not supported; convert with: ffmpeg -i in.wav -c:a pcm_s16le out.wav", ErrWAVUnsupported)
	case n >= 4 && (string(hdr[:4]) == "RF64" || string(hdr[:4]) == "BW64"):
		return wavFormat{}, 0, fmt.Errorf("%w: %s (64-bit WAV) files are not supported; split the audio into files under 4 GiB", ErrWAVUnsupported, hdr[:4])
	case n < 4 || string(hdr[:4]) != "RIFF":
		return wavFormat{}, 0, fmt.Errorf("%w: it starts with %q, not \"RIFF\"", ErrNotWAV, hdr[:min(n, 4)])
	case n < 12:
		return wavFormat{}, 0, fmt.Errorf("%w: the input is only %d bytes long, a RIFF header needs 12", ErrWAVHeaderTruncated, n)
	case string(hdr[8:12]) != "WAVE":
		return wavFormat{}, 0, fmt.Errorf("%w: a RIFF file of type %q, not \"WAVE\"", ErrNotWAV, hdr[8:12])
	}

	var (
		f                 wavFormat
		haveFmt, haveData bool
		dataPos           int64
		dataSize          int64
		pos               int64 = 12 // offset of the next chunk header, from the start of the file
		chunkHdr          [8]byte
	)
	for {
		if haveFmt && haveData {
			if _, err := r.Seek(dataPos-pos, io.SeekCurrent); err != nil {
				return wavFormat{}, 0, fmt.Errorf("pcm: seeking to the WAV data: %w", err)
			}
			return f, dataSize, nil
		}
		_, err := io.ReadFull(r, chunkHdr[:])
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				missing := "fmt"
				if haveFmt {
					missing = "data"
				}
				return wavFormat{}, 0, fmt.Errorf("%w: the input ends without a %q chunk", ErrWAVHeaderTruncated, missing)
			}
			return wavFormat{}, 0, fmt.Errorf("pcm: reading WAV chunk header at byte %d: %w", pos, err)
		}
		id := string(chunkHdr[:4])
		size := int64(binary.LittleEndian.Uint32(chunkHdr[4:]))
		pos += 8
		// Chunks are padded to an even size; the pad byte is not counted.
		next := pos + size + size&1
		switch {
		case id == "fmt " && !haveFmt:
			if size < 16 || size > wavMaxFmtSize {
				return wavFormat{}, 0, fmt.Errorf("%w: fmt chunk of %d bytes (it must be 16 to %d)", ErrWAVMalformed, size, wavMaxFmtSize)
			}
			body := make([]byte, size) // at most wavMaxFmtSize
			if n, err := io.ReadFull(r, body); err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return wavFormat{}, 0, fmt.Errorf("%w: the fmt chunk declares %d bytes but only %d are present", ErrWAVHeaderTruncated, size, n)
				}
				return wavFormat{}, 0, fmt.Errorf("pcm: reading WAV fmt chunk: %w", err)
			}
			pos += size
			if f, err = parseWAVFmt(body); err != nil {
				return wavFormat{}, 0, err
			}
			haveFmt = true
		case id == "data" && !haveData:
			haveData = true
			dataPos, dataSize = pos, size
			if haveFmt {
				return f, size, nil // positioned at the data
			}
			// Data before fmt is out of order but unambiguous: come back
			// to it once the format is known.
		}
		if pos != next {
			if _, err := r.Seek(next-pos, io.SeekCurrent); err != nil {
				return wavFormat{}, 0, fmt.Errorf("pcm: skipping WAV %q chunk: %w", id, err)
			}
			pos = next
		}
	}
}

// parseWAVFmt validates and decodes the body of a fmt chunk.
func parseWAVFmt(b []byte) (wavFormat, error) {
	tag := binary.LittleEndian.Uint16(b[0:])
	channels := int(binary.LittleEndian.Uint16(b[2:]))
	rate := int(binary.LittleEndian.Uint32(b[4:]))
	blockAlign := int(binary.LittleEndian.Uint16(b[12:]))
	bits := int(binary.LittleEndian.Uint16(b[14:]))

	if tag == wavFormatExtensible {
		if len(b) < 40 || binary.LittleEndian.Uint16(b[16:]) < 22 {
			return wavFormat{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE fmt chunk of %d bytes is too short for its sub-format (it needs 40)", ErrWAVMalformed, len(b))
		}
		guid := b[24:40]
		if !bytes.Equal(guid[2:], wavGUIDSuffix[:]) {
			return wavFormat{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE sub-format GUID % X is not a standard audio sub-type; convert with: ffmpeg -i in.wav -c:a pcm_s16le out.wav", ErrWAVUnsupported, guid)
		}
		tag = binary.LittleEndian.Uint16(guid)
		if tag == wavFormatExtensible {
			return wavFormat{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE names itself as its sub-format", ErrWAVMalformed)
		}
	}

	if channels == 0 {
		return wavFormat{}, fmt.Errorf("%w: the fmt chunk declares 0 channels", ErrWAVMalformed)
	}
	if rate == 0 {
		return wavFormat{}, fmt.Errorf("%w: %w: the fmt chunk declares a sample rate of 0", ErrWAVMalformed, ErrBadRate)
	}

	f := wavFormat{tag: tag, channels: channels, rate: rate, blockAlign: blockAlign}
	switch tag {
	case wavFormatPCM:
		// Samples narrower than their container are left-justified, so a
		// sample can be read as its whole container.
		if bits < 1 || bits > 32 {
			return wavFormat{}, fmt.Errorf("%w: %d-bit integer PCM (supported: 8, 16, 24 and 32 bits)", ErrWAVUnsupported, bits)
		}
		f.bytes = (bits + 7) / 8
	case wavFormatFloat:
		if bits != 32 && bits != 64 {
			return wavFormat{}, fmt.Errorf("%w: %d-bit float PCM (supported: 32 and 64 bits)", ErrWAVUnsupported, bits)
		}
		f.bytes = bits / 8
	case wavFormatMulaw, wavFormatAlaw:
		if bits != 8 {
			return wavFormat{}, fmt.Errorf("%w: G.711 with %d bits per sample (it must be 8)", ErrWAVMalformed, bits)
		}
		f.bytes = 1
	default:
		return wavFormat{}, fmt.Errorf("%w: format tag 0x%04X (%s); only PCM, float and G.711 are decoded; convert with: ffmpeg -i in.wav -c:a pcm_s16le out.wav", ErrWAVUnsupported, tag, wavFormatName(tag))
	}
	if blockAlign != channels*f.bytes {
		return wavFormat{}, fmt.Errorf("%w: block align %d does not match %d channels of %d-byte samples", ErrWAVMalformed, blockAlign, channels, f.bytes)
	}
	return f, nil
}

// readWAVData reads the sample data that starts at r's position.
func readWAVData(r io.ReadSeeker, f wavFormat, declared int64) (Chunk, error) {
	// Find out how much is really there before allocating for it, so a
	// corrupt size cannot make us allocate gigabytes.
	here, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return Chunk{}, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return Chunk{}, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	if _, err := r.Seek(here, io.SeekStart); err != nil {
		return Chunk{}, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	have, want := wavDataExtent(declared, max(end-here, 0))

	frames := have / int64(f.blockAlign)
	out := make([]int16, 0, frames)
	bufSize := min(int64(wavReadBlock/f.blockAlign*f.blockAlign), frames*int64(f.blockAlign))
	buf := make([]byte, max(bufSize, int64(f.blockAlign)))
	for left := frames * int64(f.blockAlign); left > 0; {
		block := buf[:min(int64(len(buf)), left)]
		n, err := io.ReadFull(r, block)
		if err != nil {
			// The input shrank under us, or failed; keep what we have.
			out, cerr := convertWAV(out, block[:n-n%f.blockAlign], f)
			if cerr != nil {
				return Chunk{}, cerr
			}
			c := Chunk{Rate: f.rate, Samples: out}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return c, fmt.Errorf("%w: the data chunk declares %d bytes but the input ended early; returning the first %d frames", ErrWAVDataTruncated, declared, len(out))
			}
			return c, fmt.Errorf("pcm: reading WAV data: %w", err)
		}
		if out, err = convertWAV(out, block, f); err != nil {
			return Chunk{}, err
		}
		left -= int64(n)
	}
	return finishWAVData(Chunk{Rate: f.rate, Samples: out}, f, declared, have, want)
}

// wavDataExtent returns how many bytes of sample data to decode (have) and
// how many the file should hold (want), given the size the data chunk
// declares and the bytes available after its header.
func wavDataExtent(declared, available int64) (have, want int64) {
	want = declared
	if declared == wavStreamingSize {
		want = available
	}
	return min(want, available), want
}

// finishWAVData returns c, the decoded complete frames, with an error if
// the data was shorter than declared or ended in an incomplete frame.
func finishWAVData(c Chunk, f wavFormat, declared, have, want int64) (Chunk, error) {
	switch {
	case have < want:
		return c, fmt.Errorf("%w: the data chunk declares %d bytes but only %d are present; returning the %d complete frames (%v)", ErrWAVDataTruncated, declared, have, len(c.Samples), c.Duration())
	case have%int64(f.blockAlign) != 0:
		return c, fmt.Errorf("%w: the data is %d bytes, not a whole number of %d-byte frames (the last %d bytes are an incomplete frame); returning the %d complete frames", ErrWAVDataTruncated, have, f.blockAlign, have%int64(f.blockAlign), len(c.Samples))
	}
	return c, nil
}

// convertWAV appends to dst the mono 16-bit samples of b, which holds whole
// frames in format f.
func convertWAV(dst []int16, b []byte, f wavFormat) ([]int16, error) {
	if f.channels == 1 {
		switch {
		case f.tag == wavFormatPCM && f.bytes == 2:
			return DecodePCM16(dst, b)
		case f.tag == wavFormatMulaw:
			return DecodeMulaw(dst, b), nil
		case f.tag == wavFormatAlaw:
			return DecodeAlaw(dst, b), nil
		}
	}
	// General case: bring every sample to a 32-bit scale (full scale is
	// ±2³¹), average the channels of a frame, and round to 16 bits.
	frames := len(b) / f.blockAlign
	n := len(dst)
	dst = grow(dst, frames)
	out := dst[n:]
	div := int64(f.channels) << 16
	for i := range out {
		frame := b[i*f.blockAlign : (i+1)*f.blockAlign]
		var sum int64
		for ch := range f.channels {
			s := frame[ch*f.bytes : (ch+1)*f.bytes]
			v, ok := wavSample32(s, f.tag)
			if !ok {
				return dst[:n], fmt.Errorf("%w: float sample %d of channel %d is not a number (NaN)", ErrWAVMalformed, i, ch)
			}
			sum += v
		}
		out[i] = clamp16(int32(roundDiv(sum, div))) // |mean| ≤ 2³¹, so the quotient is within ±32768
	}
	return dst, nil
}

// wavSample32 returns one little-endian sample of format tag on a scale
// where full scale is ±2³¹. It reports false for a NaN float sample.
func wavSample32(s []byte, tag uint16) (int64, bool) {
	switch tag {
	case wavFormatPCM:
		switch len(s) {
		case 1:
			return (int64(s[0]) - 128) << 24, true // 8-bit PCM is unsigned
		case 2:
			return int64(int16(binary.LittleEndian.Uint16(s))) << 16, true
		case 3:
			return int64(int32(uint32(s[0])<<8 | uint32(s[1])<<16 | uint32(s[2])<<24)), true
		default:
			return int64(int32(binary.LittleEndian.Uint32(s))), true
		}
	case wavFormatFloat:
		var x float64
		if len(s) == 4 {
			x = float64(math.Float32frombits(binary.LittleEndian.Uint32(s)))
		} else {
			x = math.Float64frombits(binary.LittleEndian.Uint64(s))
		}
		if math.IsNaN(x) {
			return 0, false
		}
		return int64(math.Round(max(min(x, 1), -1) * (1 << 31))), true
	case wavFormatMulaw:
		return int64(MulawToLinear(s[0])) << 16, true
	default: // wavFormatAlaw
		return int64(AlawToLinear(s[0])) << 16, true
	}
}

// roundDiv returns a/d rounded to the nearest integer, halves up, for d > 0.
func roundDiv(a, d int64) int64 {
	q := a + d/2
	if q >= 0 {
		return q / d
	}
	return -((-q + d - 1) / d)
}

// checkWAVWritable reports whether c fits in a canonical 16-bit mono WAV.
func checkWAVWritable(c Chunk) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("pcm: writing WAV: %w", err)
	}
	if int64(c.Rate)*2 > math.MaxUint32 {
		return fmt.Errorf("pcm: writing WAV: sample rate %d is too high for a WAV header (at most %d)", c.Rate, math.MaxUint32/2)
	}
	if int64(len(c.Samples))*2 > math.MaxUint32-(wavHeaderLen-8) {
		return fmt.Errorf("pcm: writing WAV: %d samples are more than a WAV file can hold (4 GiB); split the audio", len(c.Samples))
	}
	return nil
}

// appendWAVHeader appends the canonical 44-byte header of a 16-bit mono
// PCM WAV file at rate with dataBytes of samples.
func appendWAVHeader(dst []byte, rate int, dataBytes int) []byte {
	le := binary.LittleEndian
	dst = append(dst, "RIFF"...)
	dst = le.AppendUint32(dst, uint32(wavHeaderLen-8+dataBytes))
	dst = append(dst, "WAVEfmt "...)
	dst = le.AppendUint32(dst, 16)             // fmt chunk size
	dst = le.AppendUint16(dst, wavFormatPCM)   // format tag
	dst = le.AppendUint16(dst, 1)              // channels
	dst = le.AppendUint32(dst, uint32(rate))   // sample rate
	dst = le.AppendUint32(dst, uint32(rate*2)) // bytes per second
	dst = le.AppendUint16(dst, 2)              // block align
	dst = le.AppendUint16(dst, 16)             // bits per sample
	dst = append(dst, "data"...)
	return le.AppendUint32(dst, uint32(dataBytes))
}

// EncodeWAV returns c as the bytes of a 16-bit mono PCM WAV file with the
// canonical 44-byte header. The same Chunk always gives the same bytes.
// A rate that is not positive is ErrBadRate.
func EncodeWAV(c Chunk) ([]byte, error) {
	if err := checkWAVWritable(c); err != nil {
		return nil, err
	}
	b := make([]byte, 0, wavHeaderLen+2*len(c.Samples))
	b = appendWAVHeader(b, c.Rate, 2*len(c.Samples))
	return EncodePCM16(b, c.Samples), nil
}

// WriteWAV writes c to w as a 16-bit mono PCM WAV file, byte for byte as
// EncodeWAV returns it. It needs no seeking, so w may be a pipe or a
// network connection.
func WriteWAV(w io.Writer, c Chunk) error {
	if err := checkWAVWritable(c); err != nil {
		return err
	}
	const block = 8 << 10 // samples per write
	buf := make([]byte, 0, wavHeaderLen+2*min(len(c.Samples), block))
	buf = appendWAVHeader(buf, c.Rate, 2*len(c.Samples))
	s := c.Samples
	for {
		k := min(len(s), block)
		buf = EncodePCM16(buf, s[:k])
		s = s[k:]
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("pcm: writing WAV: %w", err)
		}
		if len(s) == 0 {
			return nil
		}
		buf = buf[:0]
	}
}

// WriteWAVFile writes c to path as a 16-bit mono PCM WAV file, atomically:
// it writes a temporary file in the same directory, syncs it and renames it
// over path, so readers see either the old file or the whole new one, never
// part of it. The file's mode is 0644.
func WriteWAVFile(path string, c Chunk) (err error) {
	if err := checkWAVWritable(c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("pcm: writing WAV: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := WriteWAV(bw, c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("pcm: writing WAV %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("pcm: writing WAV %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("pcm: writing WAV %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("pcm: writing WAV %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("pcm: writing WAV: %w", err)
	}
	return nil
}
