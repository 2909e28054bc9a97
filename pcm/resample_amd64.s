//go:build amd64 && !purego

#include "textflag.h"

// func dotSSE(h, x []float32) float32
//
// SSE (baseline amd64): 16 products per iteration in four packed
// accumulators, then 4 at a time, then one at a time. The caller
// guarantees len(x) >= len(h).
TEXT ·dotSSE(SB), NOSPLIT, $0-52
	MOVQ h_base+0(FP), SI
	MOVQ h_len+8(FP), CX
	MOVQ x_base+24(FP), DI
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	CMPQ CX, $16
	JLT  quad
loop16:
	MOVUPS (SI), X4
	MOVUPS (DI), X5
	MULPS  X5, X4
	ADDPS  X4, X0
	MOVUPS 16(SI), X6
	MOVUPS 16(DI), X7
	MULPS  X7, X6
	ADDPS  X6, X1
	MOVUPS 32(SI), X8
	MOVUPS 32(DI), X9
	MULPS  X9, X8
	ADDPS  X8, X2
	MOVUPS 48(SI), X10
	MOVUPS 48(DI), X11
	MULPS  X11, X10
	ADDPS  X10, X3
	ADDQ   $64, SI
	ADDQ   $64, DI
	SUBQ   $16, CX
	CMPQ   CX, $16
	JGE    loop16
quad:
	CMPQ   CX, $4
	JLT    reduce
	MOVUPS (SI), X4
	MOVUPS (DI), X5
	MULPS  X5, X4
	ADDPS  X4, X0
	ADDQ   $16, SI
	ADDQ   $16, DI
	SUBQ   $4, CX
	JMP    quad
reduce:
	ADDPS   X1, X0
	ADDPS   X3, X2
	ADDPS   X2, X0
	MOVHLPS X0, X1
	ADDPS   X1, X0
	MOVAPS  X0, X1
	SHUFPS  $0x55, X1, X1
	ADDSS   X1, X0
tail:
	TESTQ  CX, CX
	JEQ    done
	MOVSS  (SI), X4
	MULSS  (DI), X4
	ADDSS  X4, X0
	ADDQ   $4, SI
	ADDQ   $4, DI
	DECQ   CX
	JMP    tail
done:
	MOVSS X0, ret+48(FP)
	RET

// The exact-bank kernels below compute len(dst) outputs of the polyphase
// bank, each exactly as polyRunGo does (and in the same float32 operations,
// in the same order, as dotGo): four packed accumulators a0..a3 take the
// products of each 16-tap block (a_v lane l takes tap 16b+4v+l), the
// remaining groups of four taps go into a0, then
//	r = (a0+a1) + (a2+a3),  s = (r0+r2) + (r1+r3),
// and s is rounded half away from zero and saturated to int16 like round16:
// t = s + copysign(0.5, s) (the same float32 sum as s+0.5 or s-0.5), clamped
// to ±65536 so the conversion cannot overflow, truncated to int32, then
// saturated by PACKSSDW. Then the kernel steps to the next output: phase
// ph += mr and window xo += mi, plus one sample when ph wraps past l.
//
// Arguments (both kernels): dst+0 (base, len), coef+24, x+48, xo+72, ph+80,
// k+88, l+96, mi+104, mr+112. polyRun has checked that k is a positive
// multiple of 4 and that every row and window lies inside coef and x.
//
// Registers: R8 dst, R9 outputs left, R10 coef, R11 x, R12 xo, R13 ph,
// R14 k, BX l, DX mi; SI and DI walk the row and the window, CX counts taps.
// Constants: X15 sign mask, X14 0.5, X13 65536, X12 -65536 (lane 0).

// func polyRunSSE(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
TEXT ·polyRunSSE(SB), NOSPLIT, $0-120
	MOVQ dst_base+0(FP), R8
	MOVQ dst_len+8(FP), R9
	MOVQ coef_base+24(FP), R10
	MOVQ x_base+48(FP), R11
	MOVQ xo+72(FP), R12
	MOVQ ph+80(FP), R13
	MOVQ k+88(FP), R14
	MOVQ l+96(FP), BX
	MOVQ mi+104(FP), DX
	MOVL $0x80000000, AX
	MOVQ AX, X15
	MOVL $0x3f000000, AX
	MOVQ AX, X14
	MOVL $0x47800000, AX
	MOVQ AX, X13
	MOVL $0xc7800000, AX
	MOVQ AX, X12
	TESTQ R9, R9
	JEQ   sdone
souter:
	MOVQ  R13, AX
	IMULQ R14, AX
	LEAQ  (R10)(AX*4), SI
	LEAQ  (R11)(R12*4), DI
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	MOVQ  R14, CX
	SHRQ  $4, CX
	JEQ   squads
sblock:
	MOVUPS (SI), X4
	MOVUPS (DI), X5
	MULPS  X5, X4
	ADDPS  X4, X0
	MOVUPS 16(SI), X6
	MOVUPS 16(DI), X7
	MULPS  X7, X6
	ADDPS  X6, X1
	MOVUPS 32(SI), X8
	MOVUPS 32(DI), X9
	MULPS  X9, X8
	ADDPS  X8, X2
	MOVUPS 48(SI), X10
	MOVUPS 48(DI), X11
	MULPS  X11, X10
	ADDPS  X10, X3
	ADDQ   $64, SI
	ADDQ   $64, DI
	DECQ   CX
	JNE    sblock
squads:
	MOVQ R14, CX
	ANDQ $15, CX
	JEQ  sreduce
squad:
	MOVUPS (SI), X4
	MOVUPS (DI), X5
	MULPS  X5, X4
	ADDPS  X4, X0
	ADDQ   $16, SI
	ADDQ   $16, DI
	SUBQ   $4, CX
	JNE    squad
sreduce:
	ADDPS     X1, X0
	ADDPS     X3, X2
	ADDPS     X2, X0
	MOVHLPS   X0, X1
	ADDPS     X1, X0
	MOVAPS    X0, X1
	SHUFPS    $0x55, X1, X1
	ADDSS     X1, X0
	MOVAPS    X0, X1
	ANDPS     X15, X1
	ORPS      X14, X1
	ADDSS     X1, X0
	MINSS     X13, X0
	MAXSS     X12, X0
	CVTTPS2PL X0, X0
	PACKSSLW  X0, X0
	MOVQ      X0, AX
	MOVW      AX, (R8)
	ADDQ      $2, R8
	ADDQ      DX, R12
	ADDQ      mr+112(FP), R13
	CMPQ      R13, BX
	JLT       snext
	SUBQ      BX, R13
	INCQ      R12
snext:
	DECQ R9
	JNE  souter
sdone:
	RET

// func polyRunAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// As polyRunSSE, with a0|a1 in Y0 and a2|a3 in Y1: a 256-bit load of taps
// 16b..16b+7 feeds a0 (low lane) and a1 (high lane), the same element-wise
// products and sums as the SSE kernel's, with half the instructions.
TEXT ·polyRunAVX(SB), NOSPLIT, $0-120
	MOVQ dst_base+0(FP), R8
	MOVQ dst_len+8(FP), R9
	MOVQ coef_base+24(FP), R10
	MOVQ x_base+48(FP), R11
	MOVQ xo+72(FP), R12
	MOVQ ph+80(FP), R13
	MOVQ k+88(FP), R14
	MOVQ l+96(FP), BX
	MOVQ mi+104(FP), DX
	MOVL $0x80000000, AX
	VMOVQ AX, X15
	MOVL $0x3f000000, AX
	VMOVQ AX, X14
	MOVL $0x47800000, AX
	VMOVQ AX, X13
	MOVL $0xc7800000, AX
	VMOVQ AX, X12
	TESTQ R9, R9
	JEQ   adone
aouter:
	MOVQ   R13, AX
	IMULQ  R14, AX
	LEAQ   (R10)(AX*4), SI
	LEAQ   (R11)(R12*4), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   R14, CX
	SHRQ   $4, CX
	JEQ    aquads
ablock:
	VMOVUPS (SI), Y4
	VMULPS  (DI), Y4, Y4
	VADDPS  Y4, Y0, Y0
	VMOVUPS 32(SI), Y5
	VMULPS  32(DI), Y5, Y5
	VADDPS  Y5, Y1, Y1
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNE     ablock
aquads:
	VEXTRACTF128 $1, Y0, X2
	VEXTRACTF128 $1, Y1, X3
	MOVQ         R14, CX
	ANDQ         $15, CX
	JEQ          areduce
aquad:
	VMOVUPS (SI), X4
	VMULPS  (DI), X4, X4
	VADDPS  X4, X0, X0
	ADDQ    $16, SI
	ADDQ    $16, DI
	SUBQ    $4, CX
	JNE     aquad
areduce:
	VADDPS     X2, X0, X0
	VADDPS     X3, X1, X1
	VADDPS     X1, X0, X0
	VMOVHLPS   X0, X0, X1
	VADDPS     X1, X0, X0
	VMOVSHDUP  X0, X1
	VADDSS     X1, X0, X0
	VANDPS     X15, X0, X1
	VORPS      X14, X1, X1
	VADDSS     X1, X0, X0
	VMINSS     X13, X0, X0
	VMAXSS     X12, X0, X0
	VCVTTPS2DQ X0, X0
	VPACKSSDW  X0, X0, X0
	VMOVQ      X0, AX
	MOVW       AX, (R8)
	ADDQ       $2, R8
	ADDQ       DX, R12
	ADDQ       mr+112(FP), R13
	CMPQ       R13, BX
	JLT        anext
	SUBQ       BX, R13
	INCQ       R12
anext:
	DECQ R9
	JNE  aouter
adone:
	VZEROUPPER
	RET

// func cpuHasAVX() bool
TEXT ·cpuHasAVX(SB), NOSPLIT, $0-1
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	ANDL  $0x18000000, CX // OSXSAVE (bit 27) and AVX (bit 28)
	CMPL  CX, $0x18000000
	JNE   noavx
	XORL  CX, CX
	XGETBV                // XCR0 into DX:AX
	ANDL  $6, AX          // XMM and YMM state enabled by the OS
	CMPL  AX, $6
	JNE   noavx
	MOVB  $1, ret+0(FP)
	RET
noavx:
	MOVB  $0, ret+0(FP)
	RET
