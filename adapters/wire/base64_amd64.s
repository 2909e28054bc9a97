//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 VBMI base64 encoder of Wojciech Muła and Daniel Lemire
// ("Base64 encoding and decoding at almost the speed of a memory copy",
// 2019): 48 bytes of input make 64 characters in three instructions.

// b64shuf puts input bytes 3i+1, 3i, 3i+2, 3i+1 in the four bytes of
// 32-bit lane i (VPERMB).
DATA b64shuf<>+0(SB)/8, $0x0405030401020001
DATA b64shuf<>+8(SB)/8, $0x0a0b090a07080607
DATA b64shuf<>+16(SB)/8, $0x10110f100d0e0c0d
DATA b64shuf<>+24(SB)/8, $0x1617151613141213
DATA b64shuf<>+32(SB)/8, $0x1c1d1b1c191a1819
DATA b64shuf<>+40(SB)/8, $0x222321221f201e1f
DATA b64shuf<>+48(SB)/8, $0x2829272825262425
DATA b64shuf<>+56(SB)/8, $0x2e2f2d2e2b2c2a2b
GLOBL b64shuf<>(SB), RODATA|NOPTR, $64

// b64shift holds, for each character of a lane pair, the bit offset of
// its six bits in the 64-bit word (VPMULTISHIFTQB takes the eight bits
// there; the alphabet lookup uses the low six).
DATA b64shift<>+0(SB)/8, $0x3036242a1016040a
GLOBL b64shift<>(SB), RODATA|NOPTR, $8

// b64alpha is the standard alphabet (VPERMB's table).
DATA b64alpha<>+0(SB)/8, $"ABCDEFGH"
DATA b64alpha<>+8(SB)/8, $"IJKLMNOP"
DATA b64alpha<>+16(SB)/8, $"QRSTUVWX"
DATA b64alpha<>+24(SB)/8, $"YZabcdef"
DATA b64alpha<>+32(SB)/8, $"ghijklmn"
DATA b64alpha<>+40(SB)/8, $"opqrstuv"
DATA b64alpha<>+48(SB)/8, $"wxyz0123"
DATA b64alpha<>+56(SB)/8, $"456789+/"
GLOBL b64alpha<>(SB), RODATA|NOPTR, $64

// func base64VBMI(dst, src []byte) int
//
// Encodes src 48 bytes at a time into dst, 64 characters each, while 64
// bytes of src are left to load (the last 16 are not used), and returns
// how many bytes of src it encoded. dst must have room for them.
TEXT ·base64VBMI(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	XORQ         AX, AX
	SUBQ         $64, CX
	JLT          bdone
	VMOVDQU64    b64shuf<>(SB), Z1
	VPBROADCASTQ b64shift<>(SB), Z2
	VMOVDQU64    b64alpha<>(SB), Z3

bloop:
	VMOVDQU64      (SI)(AX*1), Z0
	VPERMB         Z0, Z1, Z0
	VPMULTISHIFTQB Z0, Z2, Z0
	VPERMB         Z3, Z0, Z0
	VMOVDQU64      Z0, (DI)
	ADDQ           $64, DI
	ADDQ           $48, AX
	CMPQ           AX, CX
	JLE            bloop
	VZEROUPPER

bdone:
	MOVQ AX, ret+48(FP)
	RET

// func cpuHasVBMI() bool
//
// Reports AVX-512F and AVX-512 VBMI (CPUID.7.0:EBX bit 16, ECX bit 1),
// with the operating system saving the ZMM registers and the opmask
// (OSXSAVE, XCR0 bits 1, 2 and 5 to 7).
TEXT ·cpuHasVBMI(SB), NOSPLIT, $0-1
	XORL  AX, AX
	XORL  CX, CX
	CPUID
	CMPL  AX, $7
	JLT   novbmi
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	BTL   $27, CX     // OSXSAVE
	JCC   novbmi
	MOVL  $7, AX
	XORL  CX, CX
	CPUID
	BTL   $16, BX     // AVX512F
	JCC   novbmi
	BTL   $1, CX      // AVX512_VBMI
	JCC   novbmi
	XORL  CX, CX
	XGETBV
	ANDL  $0xe6, AX
	CMPL  AX, $0xe6
	JNE   novbmi
	MOVB  $1, ret+0(FP)
	RET

novbmi:
	MOVB $0, ret+0(FP)
	RET
