package pcm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
)

// WAV input and output.
//
// Reading accepts the WAV files that recorders, TTS engines, ffmpeg and sox
// write: any sample rate; any number of channels; 8-bit unsigned and 16-,
// 24- and 32-bit signed integer PCM; 32- and 64-bit IEEE float; G.711 µ-law
// and A-law; each either as a plain format tag or inside
// WAVE_FORMAT_EXTENSIBLE. Chunks other than "fmt " and "data" (LIST, fact,
// JUNK, bext, …) are skipped, wherever they are. The result is 16-bit:
// ReadWAV returns mono, downmixing a file of several channels to their mean;
// ReadWAVChannels returns every channel on its own.
//
// Samples become 16-bit in one rounding step; ReadWAV says how.
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

// ReadWAV reads a WAV file from r and returns its audio as 16-bit mono. A
// file of several channels is downmixed: each output sample is the mean of
// the frame's channels, taken from the file's samples at their full
// precision and rounded once. To keep the channels apart, for example the
// two sides of a call recording, use ReadWAVChannels; Downmix mixes them
// afterwards.
//
// Samples become 16-bit in one rounding step, from their exact value, with
// the rules ffmpeg applies (its -ac 1 output is the reference the tests
// check against, sample for sample):
//
//   - 24- and 32-bit integer and float samples, and the mean of several
//     of them, round to the nearest 16-bit value, ties to even, as ffmpeg's
//     conversion through float does (lrintf). Float samples are scaled by
//     32768, so ±1.0 is full scale, and mixed before the result is clipped
//     to the int16 range (values beyond 65536 times full scale, infinities
//     included, count as that).
//   - The mean of several 8-bit, 16-bit or G.711 channels rounds ties up
//     (towards +∞), as ffmpeg's and sox's integer mixers do. Their single
//     samples are exact.
//
// ffmpeg departs from these rules in three places, where this package does
// not follow it: it converts a 24- or 32-bit channel on its own by
// truncating it (this package rounds, as ffmpeg does through float), it
// mixes float channels in float32 (one more rounding; this package takes
// the exact mean), and it mixes more than two channels with its
// channel-layout matrices (this package takes the plain mean of all
// channels). sox rounds every tie up.
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
	s, err := readWAVData(r, f, dataSize, false)
	return s.mono(), err
}

// ReadWAVChannels reads a WAV file from r and returns each of its channels
// as a 16-bit Chunk at the file's rate, in the file's order (for stereo,
// left then right). Every channel has the same number of samples. A sample
// wider than 16 bits is rounded as ReadWAV rounds it (ties to even).
//
// Errors are those of ReadWAV; with ErrWAVDataTruncated every channel holds
// the complete frames that were present.
func ReadWAVChannels(r io.ReadSeeker) ([]Chunk, error) {
	f, dataSize, err := readWAVHeader(r)
	if err != nil {
		return nil, err
	}
	s, err := readWAVData(r, f, dataSize, true)
	return s.channels(), err
}

// ReadWAVChannelsFile reads the WAV file at path; see ReadWAVChannels.
func ReadWAVChannelsFile(path string) ([]Chunk, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pcm: reading WAV: %w", err)
	}
	defer fh.Close()
	c, err := ReadWAVChannels(fh)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// DecodeWAVChannels decodes the WAV file held in b; see ReadWAVChannels.
func DecodeWAVChannels(b []byte) ([]Chunk, error) {
	s, err := decodeWAV(b, true, nil)
	return s.channels(), err
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
	s, err := decodeWAV(b, false, nil)
	return s.mono(), err
}

// decodeWAV decodes the WAV file in b into a wavSink, split into channels
// or downmixed. If adjust is not nil, it may change the format and the
// sample data (whole frames) before they are converted.
func decodeWAV(b []byte, split bool, adjust func(*wavFormat, []byte) []byte) (*wavSink, error) {
	r := bytes.NewReader(b)
	f, declared, err := readWAVHeader(r)
	if err != nil {
		return nil, err
	}
	data := b[len(b)-r.Len():]
	have, want := wavDataExtent(declared, int64(len(data)))
	data = data[:have-have%int64(f.blockAlign)]
	if adjust != nil {
		data = adjust(&f, data)
	}
	s := newWAVSink(f, split, int64(len(data)/f.blockAlign))
	if err := s.add(data); err != nil {
		return nil, err
	}
	return s, finishWAVData(s, declared, have, want)
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

// readWAVData reads the sample data that starts at r's position into a
// wavSink, split into channels or downmixed. With an error the sink is nil,
// except with ErrWAVDataTruncated (and a read error after some data): then
// it holds the complete frames that were read.
func readWAVData(r io.ReadSeeker, f wavFormat, declared int64, split bool) (*wavSink, error) {
	// Find out how much is really there before allocating for it, so a
	// corrupt size cannot make us allocate gigabytes.
	here, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	if _, err := r.Seek(here, io.SeekStart); err != nil {
		return nil, fmt.Errorf("pcm: reading WAV data: %w", err)
	}
	have, want := wavDataExtent(declared, max(end-here, 0))

	frames := have / int64(f.blockAlign)
	s := newWAVSink(f, split, frames)
	bufSize := min(int64(wavReadBlock/f.blockAlign*f.blockAlign), frames*int64(f.blockAlign))
	buf := make([]byte, max(bufSize, int64(f.blockAlign)))
	for left := frames * int64(f.blockAlign); left > 0; {
		block := buf[:min(int64(len(buf)), left)]
		n, err := io.ReadFull(r, block)
		if err != nil {
			// The input shrank under us, or failed; keep what we have.
			if cerr := s.add(block[:n-n%f.blockAlign]); cerr != nil {
				return nil, cerr
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return s, fmt.Errorf("%w: the data chunk declares %d bytes but the input ended early; returning the first %d frames", ErrWAVDataTruncated, declared, s.frames())
			}
			return s, fmt.Errorf("pcm: reading WAV data: %w", err)
		}
		if err := s.add(block); err != nil {
			return nil, err
		}
		left -= int64(n)
	}
	return s, finishWAVData(s, declared, have, want)
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

// finishWAVData returns the error for a data chunk of which have bytes of
// the want declared were decoded into s: nil if they were all there and
// made whole frames.
func finishWAVData(s *wavSink, declared, have, want int64) error {
	ba := int64(s.f.blockAlign)
	switch {
	case have < want:
		return fmt.Errorf("%w: the data chunk declares %d bytes but only %d are present; returning the %d complete frames (%v)", ErrWAVDataTruncated, declared, have, s.frames(), DurationOf(s.frames(), s.f.rate))
	case have%ba != 0:
		return fmt.Errorf("%w: the data is %d bytes, not a whole number of %d-byte frames (the last %d bytes are an incomplete frame); returning the %d complete frames", ErrWAVDataTruncated, have, ba, have%ba, s.frames())
	}
	return nil
}

// wavSink collects the decoded samples of a WAV file: downmixed to mono,
// or one slice per channel (split).
type wavSink struct {
	f     wavFormat
	split bool
	mix   []int16
	chans [][]int16
}

// newWAVSink returns a sink for about frames frames of format f.
func newWAVSink(f wavFormat, split bool, frames int64) *wavSink {
	s := &wavSink{f: f, split: split}
	if !split {
		s.mix = make([]int16, 0, frames)
		return s
	}
	s.chans = make([][]int16, f.channels)
	for ch := range s.chans {
		s.chans[ch] = make([]int16, 0, frames)
	}
	return s
}

// frames returns how many frames the sink holds.
func (s *wavSink) frames() int {
	if s.split {
		return len(s.chans[0])
	}
	return len(s.mix)
}

// add converts b, which holds whole frames.
func (s *wavSink) add(b []byte) error {
	var err error
	if s.split {
		err = convertWAVChannels(s.chans, b, s.f)
	} else {
		s.mix, err = convertWAV(s.mix, b, s.f)
	}
	return err
}

// mono returns the downmixed samples as a Chunk (empty for a nil sink).
func (s *wavSink) mono() Chunk {
	if s == nil {
		return Chunk{}
	}
	return Chunk{Rate: s.f.rate, Samples: s.mix}
}

// channels returns the channels as Chunks (nil for a nil sink).
func (s *wavSink) channels() []Chunk {
	if s == nil {
		return nil
	}
	out := make([]Chunk, len(s.chans))
	for ch, c := range s.chans {
		out[ch] = Chunk{Rate: s.f.rate, Samples: c}
	}
	return out
}

// narrow reports whether f's samples are at most 16 bits wide (8- and
// 16-bit PCM, G.711), so that each is exact as a 16-bit value.
func (f wavFormat) narrow() bool {
	return f.tag == wavFormatMulaw || f.tag == wavFormatAlaw || f.tag == wavFormatPCM && f.bytes <= 2
}

// convertWAV appends to dst the mono 16-bit samples of b, which holds whole
// frames in format f: the mean of each frame's channels, rounded as the
// package documentation says.
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
	frames := len(b) / f.blockAlign
	n := len(dst)
	dst = grow(dst, frames)
	out := dst[n:]
	nch := int64(f.channels)
	switch {
	case f.narrow():
		// Exact 16-bit values: the mean rounds ties up, like ffmpeg's and
		// sox's integer mixers.
		for i := range out {
			frame := b[i*f.blockAlign : (i+1)*f.blockAlign]
			var sum int64
			for ch := range f.channels {
				sum += int64(wavSample16(frame[ch*f.bytes:(ch+1)*f.bytes], f.tag))
			}
			out[i] = int16(roundDiv(sum, nch)) // a mean of int16 values
		}
	case f.tag == wavFormatPCM:
		// 24- and 32-bit: exact on a 2³¹ scale, one rounding, ties to even.
		div := nch << 16
		for i := range out {
			frame := b[i*f.blockAlign : (i+1)*f.blockAlign]
			var sum int64
			for ch := range f.channels {
				sum += wavSample31(frame[ch*f.bytes : (ch+1)*f.bytes])
			}
			out[i] = clamp16(int32(roundDivEven(sum, div))) // |mean| ≤ 2³¹, so within ±32768
		}
	default:
		vs := make([]float64, f.channels)
		for i := range out {
			frame := b[i*f.blockAlign : (i+1)*f.blockAlign]
			for ch := range f.channels {
				v, ok := wavSampleFloat(frame[ch*f.bytes : (ch+1)*f.bytes])
				if !ok {
					return dst[:n], fmt.Errorf("%w: float sample %d of channel %d is not a number (NaN)", ErrWAVMalformed, i, ch)
				}
				vs[ch] = v
			}
			out[i] = roundMean16(vs)
		}
	}
	return dst, nil
}

// convertWAVChannels appends the samples of b, which holds whole frames in
// format f, to the channels' slices, each rounded on its own. On an error
// the slices are left as they were.
func convertWAVChannels(chans [][]int16, b []byte, f wavFormat) error {
	frames := len(b) / f.blockAlign
	n := len(chans[0])
	for ch := range chans {
		chans[ch] = grow(chans[ch], frames)
	}
	var one [1]float64
	for i := range frames {
		frame := b[i*f.blockAlign : (i+1)*f.blockAlign]
		for ch := range chans {
			s := frame[ch*f.bytes : (ch+1)*f.bytes]
			var v int16
			switch {
			case f.narrow():
				v = wavSample16(s, f.tag)
			case f.tag == wavFormatPCM:
				v = clamp16(int32(roundDivEven(wavSample31(s), 1<<16)))
			default:
				x, ok := wavSampleFloat(s)
				if !ok {
					for c := range chans {
						chans[c] = chans[c][:n]
					}
					return fmt.Errorf("%w: float sample %d of channel %d is not a number (NaN)", ErrWAVMalformed, i, ch)
				}
				one[0] = x
				v = roundMean16(one[:])
			}
			chans[ch][n+i] = v
		}
	}
	return nil
}

// wavSample16 returns one little-endian 8-bit, 16-bit or G.711 sample of
// format tag as a 16-bit value.
func wavSample16(s []byte, tag uint16) int16 {
	switch tag {
	case wavFormatMulaw:
		return MulawToLinear(s[0])
	case wavFormatAlaw:
		return AlawToLinear(s[0])
	}
	if len(s) == 1 {
		return int16(int(s[0])-128) << 8 // 8-bit PCM is unsigned
	}
	return int16(binary.LittleEndian.Uint16(s))
}

// wavSample31 returns one little-endian 24- or 32-bit integer sample on a
// scale where full scale is ±2³¹.
func wavSample31(s []byte) int64 {
	if len(s) == 3 {
		return int64(int32(uint32(s[0])<<8 | uint32(s[1])<<16 | uint32(s[2])<<24))
	}
	return int64(int32(binary.LittleEndian.Uint32(s)))
}

// wavFloatLimit bounds a scaled float sample (65536 times full scale), so
// that sums of any number of channels stay finite; larger values, ±Inf
// included, count as the limit.
const wavFloatLimit = 1 << 31

// wavSampleFloat returns one little-endian 32- or 64-bit float sample on
// the 16-bit scale (times 32768, exactly), limited to ±wavFloatLimit. It
// reports false for NaN.
func wavSampleFloat(s []byte) (float64, bool) {
	var x float64
	if len(s) == 4 {
		x = float64(math.Float32frombits(binary.LittleEndian.Uint32(s)))
	} else {
		x = math.Float64frombits(binary.LittleEndian.Uint64(s))
	}
	if math.IsNaN(x) {
		return 0, false
	}
	return max(min(x*32768, wavFloatLimit), -wavFloatLimit), true
}

// roundMean16 returns the mean of vs (finite values on the 16-bit scale)
// rounded once to the nearest integer, ties to even, and clipped to the
// int16 range. The float64 sum is exact unless the values are of very
// different sizes; when its rounding error could decide the result, the
// mean is computed exactly.
func roundMean16(vs []float64) int16 {
	var sum, abs float64
	for _, v := range vs {
		sum += v
		abs += math.Abs(v)
	}
	n := float64(len(vs))
	m := sum / n
	switch {
	case m >= 32767.5:
		return 32767
	case m <= -32768.5:
		return -32768
	}
	if len(vs) > 1 {
		// Bound on the error of m: the sum's, (n-1)·u·Σ|v| divided by n,
		// plus the division's, u·|m|, with u = 2⁻⁵³, and a factor 2 to
		// spare.
		eb := (abs + math.Abs(m)) * 0x1p-52
		if frac := m - math.Floor(m); math.Abs(frac-0.5) <= eb+0x1p-40 {
			return clamp16(int32(exactMeanRoundEven(vs)))
		}
	}
	return clamp16(int32(math.RoundToEven(m)))
}

// exactMeanPrec is the precision, in bits, at which exactMeanRoundEven
// works: the exact sum of up to 65535 float64 values between 2⁻¹⁰⁵⁹ (the
// smallest float64 times 32768) and 2³¹ (wavFloatLimit) needs
// 1059 + 31 + 16 bits, and the quotient 32 more to spare (see below).
const exactMeanPrec = 1059 + 31 + 16 + 32

// exactMeanRoundEven returns the mean of vs (at most 65535 values, |v| ≤
// 2³¹) rounded to the nearest integer, ties to even, in exact arithmetic.
func exactMeanRoundEven(vs []float64) int64 {
	sum := new(big.Float).SetPrec(exactMeanPrec)
	var v big.Float
	for _, x := range vs {
		sum.Add(sum, v.SetFloat64(x)) // exact at this precision
	}
	n := int64(len(vs))
	// The sum is a multiple of 2⁻¹⁰⁵⁹, so a mean that is not a whole number
	// is at least 2⁻¹⁰⁵⁹/65535 from one, far more than the quotient's
	// rounding error (2³¹·2⁻¹¹³⁸): its floor is the mean's.
	mean := new(big.Float).SetPrec(exactMeanPrec).Quo(sum, new(big.Float).SetInt64(n))
	q, acc := mean.Int64() // truncated towards zero
	if acc == big.Above {
		q-- // a negative mean that is not whole: the floor is one lower
	}
	// q = ⌊mean⌋, and the mean is at or past the tie q + ½ when
	// 2·sum ≥ (2q+1)·n, compared exactly.
	twice := new(big.Float).SetMantExp(sum, 1)
	switch twice.Cmp(new(big.Float).SetInt64((2*q + 1) * n)) {
	case 1:
		q++
	case 0:
		if q&1 != 0 {
			q++
		}
	}
	return q
}

// roundDiv returns a/d rounded to the nearest integer, halves up, for d > 0.
func roundDiv(a, d int64) int64 {
	q := a + d/2
	if q >= 0 {
		return q / d
	}
	return -((-q + d - 1) / d)
}

// roundDivEven returns a/d rounded to the nearest integer, ties to even,
// for d > 0.
func roundDivEven(a, d int64) int64 {
	q, r := a/d, a%d
	if r < 0 {
		q, r = q-1, r+d
	}
	if 2*r > d || 2*r == d && q&1 != 0 {
		q++
	}
	return q
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
