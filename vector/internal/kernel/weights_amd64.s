//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 kernels of weights.go: sixteen elements a step, n a positive
// multiple of 16 (the Go wrappers add the tail), each sum in sixteen lanes
// folded at the end.

// HSUM16 folds the sixteen float32 lanes of z (whose low halves are y and
// x) into the low lane of x with op (VADDPS or VMAXPS); yt and xt are
// scratch.
#define HSUM16(op, z, y, x, yt, xt) \
	VEXTRACTF64X4 $1, z, yt    \
	op            yt, y, y     \
	VEXTRACTF128  $1, y, xt    \
	op            xt, x, x     \
	VPERMILPS     $0x4E, x, xt \
	op            xt, x, x     \
	VPERMILPS     $0xB1, x, xt \
	op            xt, x, x

// func weightSumsAVX512(v, lo, step *float32, n int, out *float32)
//
// out[0..3] = Σ v·lo, max |v·step|, Σ |v·step|, Σ (v·step)².
TEXT ·weightSumsAVX512(SB), NOSPLIT, $0-40
	MOVQ         v+0(FP), SI
	MOVQ         lo+8(FP), DI
	MOVQ         step+16(FP), R8
	MOVQ         n+24(FP), CX
	MOVQ         out+32(FP), DX
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z7
	XORQ         BX, BX

ws_16:
	VMOVUPS     (SI)(BX*4), Z4
	VMULPS      (R8)(BX*4), Z4, Z5
	VFMADD231PS (DI)(BX*4), Z4, Z0
	VPANDD      Z7, Z5, Z5
	VMAXPS      Z5, Z1, Z1
	VADDPS      Z5, Z2, Z2
	VFMADD231PS Z5, Z5, Z3
	ADDQ        $16, BX
	CMPQ        BX, CX
	JLT         ws_16

	HSUM16(VADDPS, Z0, Y0, X0, Y8, X8)
	HSUM16(VMAXPS, Z1, Y1, X1, Y8, X8)
	HSUM16(VADDPS, Z2, Y2, X2, Y8, X8)
	HSUM16(VADDPS, Z3, Y3, X3, Y8, X8)
	VMOVSS X0, 0(DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET

// func roundWeightsAVX512(v, step *float32, n int, inv, alpha float32, out *int8) (below, above float32)
//
// out[j] = the weight v·step·inv rounded to even (VCVTPS2DQ under the
// default rounding mode), and the sums of max(0, w − out[j]·alpha) and
// of max(0, out[j]·alpha − w).
TEXT ·roundWeightsAVX512(SB), NOSPLIT, $0-48
	MOVQ         v+0(FP), SI
	MOVQ         step+8(FP), R8
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Z6
	VBROADCASTSS alpha+28(FP), Z7
	MOVQ         out+32(FP), DX
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z9, Z9, Z9
	XORQ         BX, BX

rw_16:
	VMOVUPS   (SI)(BX*4), Z4
	VMULPS    (R8)(BX*4), Z4, Z4
	VMULPS    Z6, Z4, Z5
	VCVTPS2DQ Z5, Z5
	VPMOVDB   Z5, (DX)(BX*1)
	VCVTDQ2PS Z5, Z5
	VMULPS    Z7, Z5, Z5
	VSUBPS    Z4, Z5, Z10
	VSUBPS    Z5, Z4, Z5
	VMAXPS    Z9, Z5, Z5
	VADDPS    Z5, Z0, Z0
	VMAXPS    Z9, Z10, Z10
	VADDPS    Z10, Z1, Z1
	ADDQ      $16, BX
	CMPQ      BX, CX
	JLT       rw_16

	HSUM16(VADDPS, Z0, Y0, X0, Y8, X8)
	HSUM16(VADDPS, Z1, Y1, X1, Y8, X8)
	VMOVSS X0, below+40(FP)
	VMOVSS X1, above+44(FP)
	VZEROUPPER
	RET
