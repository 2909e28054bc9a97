//go:build amd64 && !purego

package wire

import "sync"

// hasVBMI reports cpuHasVBMI, asked once (CPUID is slow in a virtual
// machine). It is a constant of the machine, not mutable state.
var hasVBMI = sync.OnceValue(cpuHasVBMI)

// base64Blocks encodes the longest prefix of src that its vector encoder
// takes (48 bytes at a time) into dst, which must have room for its
// encoding, and returns that prefix's length, a multiple of 48 (0 on a
// CPU without AVX-512 VBMI).
func base64Blocks(dst, src []byte) int {
	if len(src) < 64 || !hasVBMI() {
		return 0
	}
	_ = dst[:(len(src)-16)/48*64] // the room the encoder may write
	return base64VBMI(dst, src)
}

// base64VBMI is implemented in base64_amd64.s.
//
//go:noescape
func base64VBMI(dst, src []byte) int

// cpuHasVBMI is implemented in base64_amd64.s.
func cpuHasVBMI() bool
