package wire

import (
	"encoding/binary"
	"unsafe"

	"github.com/voicetest-go/voicetest/pcm"
)

// AppendPCM16 appends samples to dst as little-endian 16-bit PCM, the
// bytes pcm.EncodePCM16 gives. On a little-endian machine (amd64, arm64)
// the samples are already those bytes in memory, so it copies them in
// one memmove rather than storing them two bytes at a time, which costs
// about a microsecond per 20 ms frame at 24 kHz.
func AppendPCM16(dst []byte, samples []int16) []byte {
	if len(samples) == 0 || !littleEndian() {
		return pcm.EncodePCM16(dst, samples)
	}
	return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&samples[0])), 2*len(samples))...)
}

// littleEndian reports whether the machine stores integers little end
// first.
func littleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}
