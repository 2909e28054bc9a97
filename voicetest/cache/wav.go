package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// wavHeaderSize is the size of the canonical header: RIFF, "fmt " with 16
// bytes of PCM format, and the "data" chunk header.
const wavHeaderSize = 44

// encodeWAV returns a canonical 16-bit mono PCM WAV file holding pcm.
func encodeWAV(rate int, pcm []byte) ([]byte, error) {
	if rate <= 0 || rate > 1<<24 {
		return nil, fmt.Errorf("sample rate %d is out of range (1 to 16777216)", rate)
	}
	if len(pcm)%2 != 0 {
		return nil, fmt.Errorf("odd number of PCM16 bytes (%d): the last sample is incomplete", len(pcm))
	}
	if uint64(len(pcm)) > 0xFFFFFFFF-wavHeaderSize {
		return nil, fmt.Errorf("%d bytes of audio do not fit in a WAV file", len(pcm))
	}
	out := make([]byte, wavHeaderSize, wavHeaderSize+len(pcm))
	le := binary.LittleEndian
	copy(out[0:], "RIFF")
	le.PutUint32(out[4:], uint32(36+len(pcm)))
	copy(out[8:], "WAVE")
	copy(out[12:], "fmt ")
	le.PutUint32(out[16:], 16)
	le.PutUint16(out[20:], 1) // PCM
	le.PutUint16(out[22:], 1) // mono
	le.PutUint32(out[24:], uint32(rate))
	le.PutUint32(out[28:], uint32(rate*2)) // byte rate
	le.PutUint16(out[32:], 2)              // block align
	le.PutUint16(out[34:], 16)             // bits per sample
	copy(out[36:], "data")
	le.PutUint32(out[40:], uint32(len(pcm)))
	return append(out, pcm...), nil
}

// errWAV is wrapped by every decodeWAV error.
var errWAV = errors.New("not a canonical 16-bit mono PCM WAV file")

// decodeWAV parses a WAV file written by encodeWAV and returns its rate and
// samples (aliasing data). It is strict: any other layout, a truncated file
// or trailing bytes are errors.
func decodeWAV(data []byte) (rate int, pcm []byte, err error) {
	bad := func(format string, args ...any) (int, []byte, error) {
		return 0, nil, fmt.Errorf("%w: %s", errWAV, fmt.Sprintf(format, args...))
	}
	if len(data) < wavHeaderSize {
		return bad("%d bytes, shorter than the %d-byte header", len(data), wavHeaderSize)
	}
	le := binary.LittleEndian
	switch {
	case string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE":
		return bad("no RIFF/WAVE signature")
	case int64(le.Uint32(data[4:])) != int64(len(data))-8:
		return bad("RIFF size %d does not match file size %d (truncated?)", le.Uint32(data[4:]), len(data))
	case string(data[12:16]) != "fmt " || le.Uint32(data[16:]) != 16:
		return bad("no 16-byte fmt chunk at offset 12")
	case le.Uint16(data[20:]) != 1:
		return bad("format tag %d, want 1 (PCM)", le.Uint16(data[20:]))
	case le.Uint16(data[22:]) != 1:
		return bad("%d channels, want 1", le.Uint16(data[22:]))
	case le.Uint16(data[34:]) != 16:
		return bad("%d bits per sample, want 16", le.Uint16(data[34:]))
	}
	r := le.Uint32(data[24:])
	if r == 0 || r > 1<<24 {
		return bad("sample rate %d out of range", r)
	}
	if le.Uint32(data[28:]) != r*2 || le.Uint16(data[32:]) != 2 {
		return bad("byte rate or block align inconsistent with 16-bit mono at %d Hz", r)
	}
	if string(data[36:40]) != "data" {
		return bad("no data chunk at offset 36")
	}
	n := le.Uint32(data[40:])
	if int64(n) != int64(len(data))-wavHeaderSize {
		return bad("data chunk of %d bytes but %d bytes follow (truncated?)", n, len(data)-wavHeaderSize)
	}
	if n%2 != 0 {
		return bad("odd data size %d", n)
	}
	return int(r), data[wavHeaderSize:], nil
}
