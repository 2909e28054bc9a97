package fakeopenai

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// speechFormats maps each response_format of /v1/audio/speech to its
// Content-Type and, for the compressed ones, the ffmpeg arguments that
// encode 24 kHz mono PCM16 into it: mp3 (the API's default), Ogg Opus,
// AAC in ADTS and FLAC, as OpenAI's speech endpoint answers them.
var speechFormats = map[string]struct {
	contentType string
	ffmpeg      []string
}{
	"mp3":  {"audio/mpeg", []string{"-c:a", "libmp3lame", "-b:a", "64k", "-id3v2_version", "0", "-f", "mp3"}},
	"opus": {"audio/opus", []string{"-c:a", "libopus", "-b:a", "32k", "-f", "ogg"}},
	"aac":  {"audio/aac", []string{"-c:a", "aac", "-b:a", "64k", "-f", "adts"}},
	"flac": {"audio/flac", []string{"-c:a", "flac", "-f", "flac"}},
	"wav":  {"audio/wav", nil},
	"pcm":  {"audio/pcm", nil},
}

// encodeSpeech returns the speech samples (24 kHz mono PCM16 LE) in
// format, and its Content-Type. pcm and wav are written here; the
// compressed formats are encoded by ffmpeg with bit-exact flags, so equal
// requests still give equal bytes.
func encodeSpeech(ctx context.Context, format string, pcm16 []byte) ([]byte, string, error) {
	f, ok := speechFormats[format]
	if !ok {
		return nil, "", fmt.Errorf("unknown format %q", format)
	}
	switch format {
	case "pcm":
		return pcm16, f.contentType, nil
	case "wav":
		return wavBytes(pcm16, SpeechRate), f.contentType, nil
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, "", fmt.Errorf("encoding %s needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg); ask for response_format \"pcm\" or \"wav\" instead", format)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	args := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin",
		"-f", "s16le", "-ar", fmt.Sprint(SpeechRate), "-ac", "1", "-i", "pipe:0",
		"-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"}, f.ffmpeg...)
	cmd := exec.CommandContext(ctx, ffmpeg, append(args, "pipe:1")...)
	cmd.Stdin = bytes.NewReader(pcm16)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("ffmpeg encoding %s: %v: %s", format, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), f.contentType, nil
}

// wavBytes wraps mono PCM16 LE samples in a canonical 44-byte WAV header.
func wavBytes(pcm16 []byte, rate int) []byte {
	b := make([]byte, 44, 44+len(pcm16))
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+len(pcm16)))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(len(pcm16)))
	return append(b, pcm16...)
}

// wavDuration returns the length of a PCM WAV file's audio, read from its
// fmt and data chunks, and whether it could.
func wavDuration(b []byte) (time.Duration, bool) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, false
	}
	var byteRate uint32
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), binary.LittleEndian.Uint32(b[off+4:])
		body := off + 8
		switch id {
		case "fmt ":
			if body+12 <= len(b) {
				byteRate = binary.LittleEndian.Uint32(b[body+8:])
			}
		case "data":
			if byteRate == 0 {
				return 0, false
			}
			n := min(int(size), len(b)-body)
			return time.Duration(int64(n) * int64(time.Second) / int64(byteRate)), true
		}
		off = body + int(size) + int(size&1)
	}
	return 0, false
}
