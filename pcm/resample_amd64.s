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

// func polyBatchSSE(out, coef, x []float32, cOff, xOff []int32, k int)
//
// For each j < len(out): out[j] = dot(coef[cOff[j]:][:k], x[xOff[j]:][:k]).
// k is a positive multiple of 4; the caller guarantees every offset range
// lies inside its slice and len(cOff), len(xOff) >= len(out).
TEXT ·polyBatchSSE(SB), NOSPLIT, $0-128
	MOVQ out_base+0(FP), R8
	MOVQ out_len+8(FP), R9
	MOVQ coef_base+24(FP), R10
	MOVQ x_base+48(FP), R11
	MOVQ cOff_base+72(FP), R12
	MOVQ xOff_base+96(FP), R13
	MOVQ k+120(FP), R14
	TESTQ R9, R9
	JEQ   bdone
bouter:
	MOVLQSX (R12), AX
	LEAQ    (R10)(AX*4), SI
	MOVLQSX (R13), AX
	LEAQ    (R11)(AX*4), DI
	MOVQ    R14, CX
	XORPS   X0, X0
	XORPS   X1, X1
	XORPS   X2, X2
	XORPS   X3, X3
	CMPQ    CX, $16
	JLT     bquad
bloop16:
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
	JGE    bloop16
bquad:
	CMPQ   CX, $4
	JLT    breduce
	MOVUPS (SI), X4
	MOVUPS (DI), X5
	MULPS  X5, X4
	ADDPS  X4, X0
	ADDQ   $16, SI
	ADDQ   $16, DI
	SUBQ   $4, CX
	JMP    bquad
breduce:
	ADDPS   X1, X0
	ADDPS   X3, X2
	ADDPS   X2, X0
	MOVHLPS X0, X1
	ADDPS   X1, X0
	MOVAPS  X0, X1
	SHUFPS  $0x55, X1, X1
	ADDSS   X1, X0
	MOVSS   X0, (R8)
	ADDQ    $4, R8
	ADDQ    $4, R12
	ADDQ    $4, R13
	DECQ    R9
	JNE     bouter
bdone:
	RET
