package pcm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNoFFmpeg reports an audio file that only ffmpeg can decode (MP3, Ogg,
// FLAC, …), on a machine where ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("pcm: ffmpeg is not installed")

const (
	// maxDecodedBytes bounds the audio ffmpeg may decode from one file:
	// 32-bit float samples, so 256 MiB is about 23 minutes of 48 kHz
	// stereo or 70 minutes of 16 kHz mono.
	maxDecodedBytes = 256 << 20
	// maxFFmpegStderr bounds the ffmpeg messages kept for an error.
	maxFFmpegStderr = 4 << 10
	// ffmpegWaitDelay bounds the wait for ffmpeg's output pipes to close
	// once its context has ended or it has exited (exec.Cmd.WaitDelay).
	ffmpegWaitDelay = time.Second
)

// ReadAudioFile reads the audio file at path as 16-bit mono at the file's
// own sample rate. A WAV file that ReadWAV decodes is read directly, with
// its channels downmixed as ReadWAV does. Anything else (MP3, Ogg Vorbis or
// Opus, FLAC, AAC, and WAV files in encodings ReadWAV does not decode, such
// as ADPCM) is decoded by ffmpeg to 32-bit float, all channels at the
// stream's own rate, and converted here as ReadWAV converts a float WAV
// file, which gives what ffmpeg itself gives for 16-bit output (ReadWAV
// describes the rounding); if every decoded sample is an
// exact 16-bit value (16-bit FLAC, ADPCM), the channels are mixed as 16-bit
// channels are. ffmpeg must be on the PATH (Debian package ffmpeg), or the
// error wraps ErrNoFFmpeg and says so. The first audio stream of the file
// is read, and at most 256 MiB of decoded audio. ctx bounds the ffmpeg run.
//
// A file may decode to no samples; the Chunk is then empty, not an error.
func ReadAudioFile(ctx context.Context, path string) (Chunk, error) {
	s, err := readAudioFile(ctx, path, false)
	return s.mono(), err
}

// ReadAudioFileChannels is ReadAudioFile with the channels kept apart, as
// ReadWAVChannels returns them (for stereo, left then right).
func ReadAudioFileChannels(ctx context.Context, path string) ([]Chunk, error) {
	s, err := readAudioFile(ctx, path, true)
	return s.channels(), err
}

// readAudioFile reads path into a wavSink: directly if it is a WAV file
// ReadWAV decodes, through ffmpeg otherwise.
func readAudioFile(ctx context.Context, path string, split bool) (*wavSink, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pcm: reading audio file: %w", err)
	}
	defer fh.Close()
	why := "not a WAV file"
	var head [12]byte
	if n, _ := io.ReadFull(fh, head[:]); n == 12 && string(head[:4]) == "RIFF" && string(head[8:]) == "WAVE" {
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("pcm: reading audio file %s: %w", path, err)
		}
		f, size, err := readWAVHeader(fh)
		if err == nil {
			s, err := readWAVData(fh, f, size, split)
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
			return s, err
		}
		if !errors.Is(err, ErrWAVUnsupported) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		why = "a WAV file in an encoding this package does not decode (" + err.Error() + ")"
	}
	b, err := decodeWithFFmpeg(ctx, path, why, maxDecodedBytes)
	if err != nil {
		return nil, err
	}
	s, err := decodeFFmpegWAV(b, split)
	if err != nil {
		return nil, fmt.Errorf("pcm: reading what ffmpeg decoded from %s: %w", path, err)
	}
	return s, nil
}

// decodeFFmpegWAV decodes the float WAV file that decodeWithFFmpeg made
// (whose data size, written to a pipe, is 0xFFFFFFFF: it runs to the end).
// When every sample is an exact 16-bit value, the source was 16-bit (a
// lossless codec), and the samples are decoded as 16-bit PCM, so that
// their downmix rounds as that of a 16-bit WAV file does.
func decodeFFmpegWAV(b []byte, split bool) (*wavSink, error) {
	return decodeWAV(b, split, func(f *wavFormat, data []byte) []byte {
		if f.tag != wavFormatFloat || f.bytes != 4 {
			return data
		}
		s16, ok := exact16(data)
		if !ok {
			return data
		}
		f.tag, f.bytes, f.blockAlign = wavFormatPCM, 2, 2*f.channels
		return s16
	})
}

// exact16 returns the little-endian float32 samples of b as 16-bit PCM
// bytes, and true, if each of them times 32768 is a whole number in the
// int16 range.
func exact16(b []byte) ([]byte, bool) {
	out := make([]byte, 0, len(b)/2)
	for i := 0; i+4 <= len(b); i += 4 {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))) * 32768
		if v != math.Trunc(v) || v < math.MinInt16 || v > math.MaxInt16 {
			return nil, false
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(int16(v)))
	}
	return out, true
}

// decodeWithFFmpeg has ffmpeg decode the first audio stream of path into a
// 32-bit float WAV file, all channels at the stream's rate, and returns it,
// failing if it is longer than max bytes. why says why ffmpeg is needed,
// for the error when it is missing.
func decodeWithFFmpeg(ctx context.Context, path, why string, max int) ([]byte, error) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is %s; decoding it needs ffmpeg (Debian package ffmpeg: apt-get install ffmpeg), or convert it to a WAV file first", ErrNoFFmpeg, path, why)
	}
	return runFFmpeg(ctx, bin, path, max)
}

// runFFmpeg runs the ffmpeg at bin as decodeWithFFmpeg describes.
func runFFmpeg(ctx context.Context, bin, path string, max int) ([]byte, error) {
	return runFFmpegWait(ctx, bin, path, max, ffmpegWaitDelay)
}

// runFFmpegWait is runFFmpeg with the wait for ffmpeg's pipes bounded by
// waitDelay.
func runFFmpegWait(ctx context.Context, bin, path string, max int, waitDelay time.Duration) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-i", path, "-map", "0:a:0", "-c:a", "pcm_f32le", "-f", "wav", "-bitexact", "pipe:1")
	// Once ctx ends (or ffmpeg exits), its pipes are closed after
	// waitDelay even if a process it left behind holds them open (an
	// "ffmpeg" that is a wrapper running the real one as its child):
	// cancelling kills only the process started here.
	cmd.WaitDelay = waitDelay
	stderr := &headBuffer{max: maxFFmpegStderr}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("pcm: running ffmpeg on %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pcm: running ffmpeg on %s: %w", path, err)
	}
	b, rerr := io.ReadAll(io.LimitReader(out, int64(max)+1))
	tooLong := len(b) > max
	if tooLong || rerr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("pcm: decoding %s with ffmpeg: %w", path, ctx.Err())
	case tooLong:
		return nil, fmt.Errorf("pcm: %s decodes to more than %d bytes of audio (32-bit float); cut it shorter (the bound keeps one file from filling memory)", path, max)
	case rerr != nil:
		return nil, fmt.Errorf("pcm: reading ffmpeg's output for %s: %w", path, rerr)
	case werr != nil:
		return nil, fmt.Errorf("pcm: decoding %s with ffmpeg failed (is it an audio file?): %w: %s", path, werr, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// headBuffer keeps the first max bytes written to it and drops the rest.
type headBuffer struct {
	bytes.Buffer
	max int
}

// Write keeps what fits and reports all of p written.
func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.Len(); room > 0 {
		h.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
