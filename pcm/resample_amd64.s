//go:build amd64 && !purego

#include "textflag.h"

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
// Several outputs are computed together, so that their dependency chains
// overlap and their reductions and rounding share instructions; the last
// few go one at a time. Float addition is commutative, so which operand
// of an add comes first does not matter; the pairing does.
//
// Outputs j and j+l use the same filter row (the same phase), on windows
// M = mi·l + mr samples apart. The shared-row kernels (polyRunSharedAVX,
// polyRunSharedAVX512, polyRunPairAVX, polyRunPairAVX512) compute four (or
// two) such outputs with one load of their row, which is most of the work
// for whole runs of 4·l (2·l) outputs; polyRun gives them those runs and
// polyRunAVX the rest. They need k to be a multiple of 16 (NewResampler
// makes it so).
//
// Arguments (all kernels): dst+0 (base, len), coef+24, x+48, xo+72, ph+80,
// k+88, l+96, mi+104, mr+112. polyRun has checked that k is a positive
// multiple of 4 and that every row and window lies inside coef and x.
//
// Registers: BX the row offset ph·k·4, DX xo, R8 dst, R9 outputs left,
// CX the tap offset in bytes (running from -blocks to 0 through the 16-tap
// blocks, then from 0 through the quads); the rows of up to four outputs are SI, DI, R10, R11 and their windows
// R12, R13, R14, R15, each pointing just past its 16-tap blocks. Constants
// in all four lanes: X15 sign mask, X14 0.5, X13 65536, X12 -65536.
// Locals: cb = coef + blocks, xb = x + blocks, nbb = -blocks, qb = quads,
// where blocks = (k &^ 15)·4 and quads = (k & 15)·4 bytes; mrk = mr·k·4
// and lk = l·k·4, the row step and the table size in bytes.

// SETUP loads the arguments and fills the locals (frame $48).
#define SETUP \
	MOVQ dst_base+0(FP), R8; \
	MOVQ dst_len+8(FP), R9; \
	MOVQ xo+72(FP), DX; \
	MOVQ ph+80(FP), BX; \
	MOVQ k+88(FP), AX; \
	MOVQ AX, CX; \
	ANDQ $-16, AX; \
	SHLQ $2, AX; \
	ANDQ $15, CX; \
	SHLQ $2, CX; \
	MOVQ CX, qb-32(SP); \
	MOVQ AX, CX; \
	NEGQ CX; \
	MOVQ CX, nbb-24(SP); \
	MOVQ coef_base+24(FP), CX; \
	ADDQ AX, CX; \
	MOVQ CX, cb-8(SP); \
	MOVQ x_base+48(FP), CX; \
	ADDQ AX, CX; \
	MOVQ CX, xb-16(SP); \
	MOVQ k+88(FP), AX; \
	SHLQ $2, AX; \
	IMULQ AX, BX; \
	MOVQ mr+112(FP), CX; \
	IMULQ AX, CX; \
	MOVQ CX, mrk-40(SP); \
	IMULQ l+96(FP), AX; \
	MOVQ AX, lk-48(SP)

// ROW points creg and xreg at the row and window of the output at (BX, DX),
// past its blocks, and steps BX, DX to the next output without a branch:
// after BX += mr·k·4, SUBQ sets the carry when BX < l·k·4, so DX +=
// mi+1-carry and BX -= l·k·4 unless the carry is set.
#define ROW(creg, xreg) \
	MOVQ    cb-8(SP), creg; \
	ADDQ    BX, creg; \
	MOVQ    xb-16(SP), xreg; \
	LEAQ    (xreg)(DX*4), xreg; \
	ADDQ    mrk-40(SP), BX; \
	ADDQ    mi+104(FP), DX; \
	MOVQ    BX, AX; \
	SUBQ    lk-48(SP), AX; \
	CMOVQCC AX, BX; \
	SBBQ    $-1, DX

// SBLOCK accumulates one 16-tap block of one output into xa..xd (a0..a3),
// using temporaries t and u (SSE memory operands must be aligned, so both
// vectors are loaded with MOVUPS).
#define SBLOCK(creg, xreg, xa, xb, xc, xd, t, u) \
	MOVUPS (creg)(CX*1), t; \
	MOVUPS (xreg)(CX*1), u; \
	MULPS  u, t; \
	ADDPS  t, xa; \
	MOVUPS 16(creg)(CX*1), t; \
	MOVUPS 16(xreg)(CX*1), u; \
	MULPS  u, t; \
	ADDPS  t, xb; \
	MOVUPS 32(creg)(CX*1), t; \
	MOVUPS 32(xreg)(CX*1), u; \
	MULPS  u, t; \
	ADDPS  t, xc; \
	MOVUPS 48(creg)(CX*1), t; \
	MOVUPS 48(xreg)(CX*1), u; \
	MULPS  u, t; \
	ADDPS  t, xd

// SQUAD adds four taps of one output into xa (a0).
#define SQUAD(creg, xreg, xa, t, u) \
	MOVUPS (creg)(CX*1), t; \
	MOVUPS (xreg)(CX*1), u; \
	MULPS  u, t; \
	ADDPS  t, xa

// SROUND rounds the sums in xs as ROUND does, using temporary t.
#define SROUND(xs, t) \
	MOVAPS    xs, t; \
	ANDPS     X15, t; \
	ORPS      X14, t; \
	ADDPS     t, xs; \
	MINPS     X13, xs; \
	MAXPS     X12, xs; \
	CVTTPS2PL xs, xs; \
	PACKSSLW  xs, xs

// SBCAST puts the float32 with bits c in all four lanes of xr.
#define SBCAST(c, xr) \
	MOVL   c, AX; \
	MOVQ   AX, xr; \
	SHUFPS $0, xr, xr

// BLOCK accumulates one 16-tap block of one output into ya (a0|a1) and yb
// (a2|a3), using temporaries yt and yu.
#define BLOCK(creg, xreg, ya, yb, yt, yu) \
	VMOVUPS (creg)(CX*1), yt; \
	VMULPS  (xreg)(CX*1), yt, yt; \
	VADDPS  yt, ya, ya; \
	VMOVUPS 32(creg)(CX*1), yu; \
	VMULPS  32(xreg)(CX*1), yu, yu; \
	VADDPS  yu, yb, yb

// QUAD adds four taps of one output into a0 (low lane of ya).
#define QUAD(creg, xreg, ya, xt, yt) \
	VMOVUPS (creg)(CX*1), xt; \
	VMULPS  (xreg)(CX*1), xt, xt; \
	VADDPS  yt, ya, ya

// ROUND rounds the four sums in X2 half away from zero, saturates them and
// leaves them as int16 in the low 64 bits of X2.
#define ROUND \
	VANDPS     X15, X2, X3; \
	VORPS      X14, X3, X3; \
	VADDPS     X3, X2, X2; \
	VMINPS     X13, X2, X2; \
	VMAXPS     X12, X2, X2; \
	VCVTTPS2DQ X2, X2; \
	VPACKSSDW  X2, X2, X2

// BCAST puts the float32 with bits c in all four lanes of xr.
#define BCAST(c, xr) \
	MOVL    c, AX; \
	VMOVD   AX, xr; \
	VSHUFPS $0, xr, xr, xr

// REDUCE4 reduces four outputs A, B, C, D, in Y0:Y1, Y2:Y3, Y4:Y5, Y6:Y7
// (a0|a1 and a2|a3 each), to their sums in X2 = [sA sB sC sD], using Y0..Y3
// and Y8..Y11. A is paired with C and B with D across the lanes: Y0 =
// [rA | rC], Y1 = [rB | rD], r = (a0+a1) + (a2+a3); then per lane
// [rA0+rA2, rA1+rA3, rB0+rB2, rB1+rB3], and s = (r0+r2) + (r1+r3) in
// elements 0 and 2: [sA . sB . | sC . sD .].
#define REDUCE4 \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x31, Y4, Y0, Y9; \
	VADDPS     Y9, Y8, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y10; \
	VPERM2F128 $0x31, Y5, Y1, Y11; \
	VADDPS     Y11, Y10, Y10; \
	VADDPS     Y10, Y8, Y0; \
	VPERM2F128 $0x20, Y6, Y2, Y8; \
	VPERM2F128 $0x31, Y6, Y2, Y9; \
	VADDPS     Y9, Y8, Y8; \
	VPERM2F128 $0x20, Y7, Y3, Y10; \
	VPERM2F128 $0x31, Y7, Y3, Y11; \
	VADDPS     Y11, Y10, Y10; \
	VADDPS     Y10, Y8, Y1; \
	VSHUFPS    $0x44, Y1, Y0, Y2; \
	VSHUFPS    $0xee, Y1, Y0, Y3; \
	VADDPS     Y3, Y2, Y2; \
	VMOVSHDUP  Y2, Y3; \
	VADDPS     Y3, Y2, Y2; \
	VSHUFPS    $0x88, Y2, Y2, Y2; \
	VEXTRACTF128 $1, Y2, X3; \
	VUNPCKLPD  X3, X2, X2

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

// func polyRunSSE(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// Two outputs at a time: A in X0..X3, B in X4..X7.
TEXT ·polyRunSSE(SB), NOSPLIT, $48-120
	SETUP
	SBCAST($0x80000000, X15)
	SBCAST($0x3f000000, X14)
	SBCAST($0x47800000, X13)
	SBCAST($0xc7800000, X12)
	CMPQ R9, $2
	JLT  ssingle

spair:
	ROW(SI, R12)
	ROW(DI, R13)
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	MOVQ  nbb-24(SP), CX
	TESTQ CX, CX
	JEQ   spquads
spblock:
	SBLOCK(SI, R12, X0, X1, X2, X3, X8, X9)
	SBLOCK(DI, R13, X4, X5, X6, X7, X10, X11)
	ADDQ $64, CX
	JNE  spblock
spquads:
	CMPQ CX, qb-32(SP)
	JGE  spreduce
spquad:
	SQUAD(SI, R12, X0, X8, X9)
	SQUAD(DI, R13, X4, X10, X11)
	ADDQ $16, CX
	CMPQ CX, qb-32(SP)
	JLT  spquad
spreduce:
	ADDPS   X1, X0
	ADDPS   X3, X2
	ADDPS   X2, X0         // rA
	ADDPS   X5, X4
	ADDPS   X7, X6
	ADDPS   X6, X4         // rB
	MOVAPS  X0, X8
	MOVLHPS X4, X8         // [rA0 rA1 rB0 rB1]
	SHUFPS  $0xee, X4, X0  // [rA2 rA3 rB2 rB3]
	ADDPS   X0, X8         // [rA0+rA2, rA1+rA3, rB0+rB2, rB1+rB3]
	MOVAPS  X8, X9
	SHUFPS  $0xf5, X9, X9  // odd elements onto even ones
	ADDPS   X9, X8         // sA in element 0, sB in 2
	SHUFPS  $0x08, X8, X8  // [sA sB . .]
	SROUND(X8, X9)
	MOVQ    X8, AX
	MOVL    AX, (R8)
	ADDQ    $4, R8
	SUBQ    $2, R9
	CMPQ    R9, $2
	JGE     spair

ssingle:
	TESTQ R9, R9
	JEQ   sdone
	ROW(SI, R12)
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	MOVQ  nbb-24(SP), CX
	TESTQ CX, CX
	JEQ   ssquads
ssblock:
	SBLOCK(SI, R12, X0, X1, X2, X3, X8, X9)
	ADDQ $64, CX
	JNE  ssblock
ssquads:
	CMPQ CX, qb-32(SP)
	JGE  ssreduce
ssquad:
	SQUAD(SI, R12, X0, X8, X9)
	ADDQ $16, CX
	CMPQ CX, qb-32(SP)
	JLT  ssquad
ssreduce:
	ADDPS   X1, X0
	ADDPS   X3, X2
	ADDPS   X2, X0
	MOVHLPS X0, X1
	ADDPS   X1, X0
	MOVAPS  X0, X1
	SHUFPS  $0x55, X1, X1
	ADDSS   X1, X0
	SROUND(X0, X1)
	MOVQ    X0, AX
	MOVW    AX, (R8)
sdone:
	RET

// func polyRunAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// As polyRunSSE, with a0|a1 in one YMM register and a2|a3 in another: a
// 256-bit load of taps 16b..16b+7 feeds a0 (low lane) and a1 (high lane),
// the same element-wise products and sums as the SSE kernel's. Four outputs
// at a time, in Y0:Y1, Y2:Y3, Y4:Y5, Y6:Y7. The groups write their float
// sums to buf, 64 at most, which are then rounded eight at a time (with the
// constants in all eight lanes of Y12..Y15) into dst; that keeps the
// rounding off each group's dependency chain. Extra locals: dstp, the next
// output in dst; end, one past the last sum of this chunk in buf.
//
// The groups of four remaining taps go into a0 with a 256-bit add whose
// high lane is +0 (a VEX.128 load or multiply zeroes bits 128-255), which
// leaves a1 unchanged: a1 is a round-to-nearest sum starting from +0, so it
// is never -0, and a1 + (+0) = a1 exactly.
TEXT ·polyRunAVX(SB), $320-120
	SETUP
	BCAST($0x80000000, X15)
	BCAST($0x3f000000, X14)
	BCAST($0x47800000, X13)
	BCAST($0xc7800000, X12)
	VINSERTF128 $1, X15, Y15, Y15
	VINSERTF128 $1, X14, Y14, Y14
	VINSERTF128 $1, X13, Y13, Y13
	VINSERTF128 $1, X12, Y12, Y12
	MOVQ R8, dstp-56(SP)

chunk:
	// Up to 64 outputs (a multiple of 4) into buf as float32, then
	// rounded into dst eight at a time.
	CMPQ R9, $4
	JLT  single
	MOVQ R9, AX
	ANDQ $-4, AX
	CMPQ AX, $64
	JLE  chunkn
	MOVQ $64, AX
chunkn:
	SUBQ AX, R9
	LEAQ buf-320(SP), R8
	LEAQ (R8)(AX*4), AX
	MOVQ AX, end-64(SP)

group:
	ROW(SI, R12)
	ROW(DI, R13)
	ROW(R10, R14)
	ROW(R11, R15)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   nbb-24(SP), CX
	TESTQ  CX, CX
	JEQ    gquads
gblock:
	BLOCK(SI, R12, Y0, Y1, Y8, Y9)
	BLOCK(DI, R13, Y2, Y3, Y10, Y11)
	BLOCK(R10, R14, Y4, Y5, Y8, Y9)
	BLOCK(R11, R15, Y6, Y7, Y10, Y11)
	ADDQ $64, CX
	JNE  gblock
gquads:
	CMPQ CX, qb-32(SP)
	JGE  greduce
gquad:
	QUAD(SI, R12, Y0, X8, Y8)
	QUAD(DI, R13, Y2, X9, Y9)
	QUAD(R10, R14, Y4, X10, Y10)
	QUAD(R11, R15, Y6, X11, Y11)
	ADDQ $16, CX
	CMPQ CX, qb-32(SP)
	JLT  gquad
greduce:
	REDUCE4
	VMOVUPS    X2, (R8)
	ADDQ       $16, R8
	CMPQ       R8, end-64(SP)
	JLT        group

	LEAQ buf-320(SP), SI
	MOVQ dstp-56(SP), DI
	MOVQ end-64(SP), AX
	SUBQ $16, AX
round8:
	CMPQ         SI, AX
	JGE          round4
	VMOVUPS      (SI), Y2
	VANDPS       Y15, Y2, Y3
	VORPS        Y14, Y3, Y3
	VADDPS       Y3, Y2, Y2
	VMINPS       Y13, Y2, Y2
	VMAXPS       Y12, Y2, Y2
	VCVTTPS2DQ   Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VPACKSSDW    X3, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $32, SI
	ADDQ         $16, DI
	JMP          round8
round4:
	CMPQ    SI, end-64(SP)
	JGE     rounded
	VMOVUPS (SI), X2
	ROUND
	VMOVQ   X2, (DI)
	ADDQ    $8, DI
rounded:
	MOVQ DI, dstp-56(SP)
	JMP  chunk

single:
	MOVQ  dstp-56(SP), R8
	TESTQ R9, R9
	JEQ   done
one:
	ROW(SI, R12)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   nbb-24(SP), CX
	TESTQ  CX, CX
	JEQ    oquads
oblock:
	BLOCK(SI, R12, Y0, Y1, Y8, Y9)
	ADDQ $64, CX
	JNE  oblock
oquads:
	CMPQ CX, qb-32(SP)
	JGE  oreduce
oquad:
	QUAD(SI, R12, Y0, X8, Y8)
	ADDQ $16, CX
	CMPQ CX, qb-32(SP)
	JLT  oquad
oreduce:
	VEXTRACTF128 $1, Y0, X8
	VADDPS       X8, X0, X0
	VEXTRACTF128 $1, Y1, X9
	VADDPS       X9, X1, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X2
	ROUND
	VMOVQ        X2, AX
	MOVW         AX, (R8)
	ADDQ         $2, R8
	DECQ         R9
	JNE          one
done:
	VZEROUPPER
	RET

// SHAREDSETUP loads the arguments of the shared-row kernels and fills
// their locals (frame $64; see polyRunSharedAVX).
#define SHAREDSETUP \
	MOVQ  dst_base+0(FP), R8; \
	MOVQ  ph+80(FP), BX; \
	MOVQ  k+88(FP), AX; \
	SHLQ  $2, AX; \
	MOVQ  AX, CX; \
	NEGQ  CX; \
	MOVQ  CX, nbb-24(SP); \
	MOVQ  coef_base+24(FP), CX; \
	ADDQ  AX, CX; \
	MOVQ  CX, cb-8(SP); \
	MOVQ  x_base+48(FP), CX; \
	ADDQ  AX, CX; \
	MOVQ  CX, xb-16(SP); \
	IMULQ AX, BX; \
	MOVQ  mr+112(FP), CX; \
	IMULQ AX, CX; \
	MOVQ  CX, mrk-40(SP); \
	IMULQ l+96(FP), AX; \
	MOVQ  AX, lk-48(SP); \
	MOVQ  l+96(FP), DI; \
	SHLQ  $1, DI; \
	LEAQ  (DI)(DI*2), AX; \
	MOVQ  AX, d3-56(SP); \
	MOVQ  mi+104(FP), AX; \
	IMULQ l+96(FP), AX; \
	ADDQ  mr+112(FP), AX; \
	LEAQ  (AX)(AX*2), CX; \
	MOVQ  CX, m3-64(SP); \
	SHLQ  $2, AX; \
	MOVQ  AX, R11; \
	MOVQ  dst_len+8(FP), AX; \
	XORQ  DX, DX; \
	MOVQ  l+96(FP), CX; \
	SHLQ  $2, CX; \
	DIVQ  CX; \
	MOVQ  AX, R9; \
	MOVQ  xo+72(FP), DX; \
	BCAST($0x80000000, X15); \
	BCAST($0x3f000000, X14); \
	BCAST($0x47800000, X13); \
	BCAST($0xc7800000, X12)

// SBLOCK256 accumulates one 16-tap block of one output whose window is
// xreg into ya (a0|a1) and yb (a2|a3), with the block's row already in Y8
// and Y9 (shared by the outputs of the group); Y10 and Y11 are
// temporaries. SBLOCK512 does the same with the row in Z8, the output's
// sixteen accumulators in za and zt as the temporary.
#define SBLOCK256(xreg, ya, yb) \
	VMULPS (xreg)(CX*1), Y8, Y10; \
	VADDPS Y10, ya, ya; \
	VMULPS 32(xreg)(CX*1), Y9, Y11; \
	VADDPS Y11, yb, yb

#define SBLOCK512(xreg, za, zt) \
	VMULPS (xreg)(CX*1), Z8, zt; \
	VADDPS zt, za, za

// SHAREDGROUP starts a group: the row SI and the four windows R12..R15 of
// the next output and the three that share its row, and zero accumulators
// (SHAREDGROUP512: the four ZMM accumulators; a VEX.256 instruction zeroes
// the whole ZMM register).
#define SHAREDROWS \
	ROW(SI, R12); \
	LEAQ (R12)(R11*1), R13; \
	LEAQ (R13)(R11*1), R14; \
	LEAQ (R14)(R11*1), R15

#define SHAREDGROUP512 \
	SHAREDROWS; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y6, Y6, Y6; \
	MOVQ   nbb-24(SP), CX

#define SHAREDGROUP \
	SHAREDROWS; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	MOVQ   nbb-24(SP), CX

// SHAREDSTORE rounds the four sums in X2 (REDUCE4) and stores them to
// dst[q], dst[q+l], dst[q+2l], dst[q+3l], then steps to q+1.
#define SHAREDSTORE \
	ROUND; \
	VMOVQ X2, AX; \
	MOVW  AX, (R8); \
	SHRQ  $16, AX; \
	MOVW  AX, (R8)(DI*1); \
	SHRQ  $16, AX; \
	MOVW  AX, (R8)(DI*2); \
	SHRQ  $16, AX; \
	MOVQ  d3-56(SP), CX; \
	MOVW  AX, (R8)(CX*1); \
	ADDQ  $2, R8

// PAIRSTORE rounds the two sums in the low half of X2 (REDUCE4) and
// stores them to dst[q] and dst[q+l], then steps to q+1.
#define PAIRSTORE \
	ROUND; \
	VMOVQ X2, AX; \
	MOVW  AX, (R8); \
	SHRQ  $16, AX; \
	MOVW  AX, (R8)(DI*1); \
	ADDQ  $2, R8

// SHAREDNEXT ends a group and, after the l-th, the run: ROW has stepped l
// outputs (one row of windows, M samples) on, and the next run starts 4·l
// outputs (4·M samples) after this one.
#define SHAREDNEXT(group, run) \
	DECQ R10; \
	JNE  group; \
	ADDQ d3-56(SP), R8; \
	ADDQ m3-64(SP), DX; \
	DECQ R9; \
	JNE  run

// func polyRunSharedAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// polyRunAVX for outputs that share filter rows: len(dst) is a multiple of
// 4·l and k of 16. Output j and output j+l have the same phase, and their
// windows are M = mi·l + mr input samples apart, so each group of four
// outputs q, q+l, q+2l, q+3l (q = 0..l-1 within each run of 4·l outputs)
// loads its filter row once for all four: 10 loads per 16-tap block of four
// outputs instead of 16. Every output is still the same float32 operations,
// in the same order, as polyRunGo's. Outputs A..D are Y0:Y1 .. Y6:Y7, their
// windows R12..R15 (4·M bytes apart, R11), the row SI; DI is 2·l, the
// distance between their int16 outputs in bytes; R9 counts runs of 4·l
// outputs and R10 the groups left in a run. Locals as SETUP's (without qb),
// and d3 = 3·2·l, m3 = 3·M, to step from one run to the next.
TEXT ·polyRunSharedAVX(SB), NOSPLIT, $64-120
	SHAREDSETUP
	TESTQ R9, R9
	JEQ   hdone

hrun:
	MOVQ l+96(FP), R10

hgroup:
	SHAREDGROUP

hblock:
	VMOVUPS (SI)(CX*1), Y8
	VMOVUPS 32(SI)(CX*1), Y9
	SBLOCK256(R12, Y0, Y1)
	SBLOCK256(R13, Y2, Y3)
	SBLOCK256(R14, Y4, Y5)
	SBLOCK256(R15, Y6, Y7)
	ADDQ    $64, CX
	JNE     hblock

	REDUCE4
	SHAREDSTORE
	SHAREDNEXT(hgroup, hrun)

hdone:
	VZEROUPPER
	RET

// func polyRunSharedAVX512(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// polyRunSharedAVX with each 16-tap block in one ZMM register: lanes 0-3,
// 4-7, 8-11 and 12-15 are a0, a1, a2 and a3, the same lanes as the AVX
// kernel's two YMM registers, so every product and sum is the same float32
// operation. The accumulators of outputs A..D are Z0, Z2, Z4, Z6, whose low
// halves are already Y0, Y2, Y4, Y6 (a0|a1); their high halves (a2|a3) go
// to Y1, Y3, Y5, Y7 for REDUCE4. Only AVX-512F instructions are used.
TEXT ·polyRunSharedAVX512(SB), NOSPLIT, $64-120
	SHAREDSETUP
	TESTQ R9, R9
	JEQ   zdone

zrun:
	MOVQ l+96(FP), R10

zgroup:
	SHAREDGROUP512

zblock:
	VMOVUPS (SI)(CX*1), Z8
	SBLOCK512(R12, Z0, Z9)
	SBLOCK512(R13, Z2, Z10)
	SBLOCK512(R14, Z4, Z11)
	SBLOCK512(R15, Z6, Z9)
	ADDQ    $64, CX
	JNE     zblock

	VEXTRACTF64X4 $1, Z0, Y1
	VEXTRACTF64X4 $1, Z2, Y3
	VEXTRACTF64X4 $1, Z4, Y5
	VEXTRACTF64X4 $1, Z6, Y7
	REDUCE4
	SHAREDSTORE
	SHAREDNEXT(zgroup, zrun)

zdone:
	VZEROUPPER
	RET

// func polyRunPairAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// polyRunSharedAVX for one run of 2·l outputs (len(dst) = 2·l, k a multiple
// of 16): the pairs q, q+l share their row. Outputs A and B are Y0:Y1 and
// Y2:Y3; REDUCE4 also reduces the zero C and D, whose sums are not stored.
TEXT ·polyRunPairAVX(SB), NOSPLIT, $64-120
	SHAREDSETUP
	MOVQ l+96(FP), R10

pgroup:
	SHAREDGROUP

pblock:
	VMOVUPS (SI)(CX*1), Y8
	VMOVUPS 32(SI)(CX*1), Y9
	SBLOCK256(R12, Y0, Y1)
	SBLOCK256(R13, Y2, Y3)
	ADDQ    $64, CX
	JNE     pblock

	REDUCE4
	PAIRSTORE
	DECQ R10
	JNE  pgroup
	VZEROUPPER
	RET

// func polyRunPairAVX512(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
//
// polyRunPairAVX with 512-bit operations, as polyRunSharedAVX512.
TEXT ·polyRunPairAVX512(SB), NOSPLIT, $64-120
	SHAREDSETUP
	MOVQ l+96(FP), R10

qgroup:
	SHAREDGROUP512

qblock:
	VMOVUPS (SI)(CX*1), Z8
	SBLOCK512(R12, Z0, Z9)
	SBLOCK512(R13, Z2, Z10)
	ADDQ    $64, CX
	JNE     qblock

	VEXTRACTF64X4 $1, Z0, Y1
	VEXTRACTF64X4 $1, Z2, Y3
	REDUCE4
	PAIRSTORE
	DECQ R10
	JNE  qgroup
	VZEROUPPER
	RET

// func widenSSE2(dst []float32, src []int16)
//
// Eight samples at a time: each int16 is doubled into a 32-bit lane
// (PUNPCKLWL/PUNPCKHWL), shifted back arithmetically to sign-extend it, and
// converted to float32 exactly; the last few one at a time.
TEXT ·widenSSE2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX

wloop:
	CMPQ      CX, $8
	JLT       wtail
	MOVOU     (SI), X0
	MOVO      X0, X1
	PUNPCKLWL X0, X0
	PUNPCKHWL X1, X1
	PSRAL     $16, X0
	PSRAL     $16, X1
	CVTPL2PS  X0, X0
	CVTPL2PS  X1, X1
	MOVUPS    X0, (DI)
	MOVUPS    X1, 16(DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       wloop

wtail:
	TESTQ    CX, CX
	JEQ      wdone
	MOVWLSX  (SI), AX
	CVTSL2SS AX, X0
	MOVSS    X0, (DI)
	ADDQ     $2, SI
	ADDQ     $4, DI
	DECQ     CX
	JMP      wtail

wdone:
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

// func cpuHasAVX512() bool
TEXT ·cpuHasAVX512(SB), NOSPLIT, $0-1
	XORL  AX, AX
	XORL  CX, CX
	CPUID                 // the highest basic leaf into AX
	CMPL  AX, $7
	JLT   no512
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	ANDL  $0x18000000, CX // OSXSAVE (bit 27) and AVX (bit 28)
	CMPL  CX, $0x18000000
	JNE   no512
	MOVL  $7, AX
	XORL  CX, CX
	CPUID
	BTL   $16, BX         // AVX512F
	JCC   no512
	XORL  CX, CX
	XGETBV                // XCR0 into DX:AX
	ANDL  $0xe6, AX       // XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM state
	CMPL  AX, $0xe6
	JNE   no512
	MOVB  $1, ret+0(FP)
	RET
no512:
	MOVB  $0, ret+0(FP)
	RET
