//go:build amd64 && !purego

#include "textflag.h"

// Register use. SI, DI: the two inputs of the single forms. In the
// four-row forms, which run over groups of four consecutive rows: BX: q,
// SI: the current element of q, R8..R11: the four rows, DI: the start of
// the group, R12: the row length, R13: groups left, DX: out. CX: elements
// left.
// Accumulators start at Z0/Y0; a run of independent accumulators hides the
// four-cycle latency of a fused multiply-add. Only Z0..Z15 are used, so
// VZEROUPPER leaves no dirty upper state behind. These are ABI0 functions:
// the wrappers Go calls them through restore X15 (used here as Y15) and R14.

// ---------------------------------------------------------------- AVX-512

// REDUCE512 sums the 16 lanes of Z0 into the low lane of X0 (clobbers Z1).
#define REDUCE512 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS        Y1, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VADDPS        X1, X0, X0 \
	VMOVHLPS      X0, X0, X1 \
	VADDPS        X1, X0, X0 \
	VMOVSHDUP     X0, X1     \
	VADDSS        X1, X0, X0

// TAILMASK sets K1 to the low CX bits (0 < CX < 16; clobbers AX).
#define TAILMASK \
	MOVL  $1, AX  \
	SHLL  CX, AX  \
	DECL  AX      \
	KMOVW AX, K1

// func dotAVX512(a, b []float32) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	CMPQ   CX, $64
	JLT    dot512_16

dot512_64:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JGE         dot512_64

dot512_16:
	CMPQ        CX, $16
	JLT         dot512_tail
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         dot512_16

dot512_tail:
	TESTQ       CX, CX
	JEQ         dot512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1

dot512_sum:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	REDUCE512
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// func l2AVX512(a, b []float32) float32
TEXT ·l2AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	CMPQ   CX, $64
	JLT    l2512_16

l2512_64:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VSUBPS      (DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JGE         l2512_64

l2512_16:
	CMPQ        CX, $16
	JLT         l2512_tail
	VMOVUPS     (SI), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         l2512_16

l2512_tail:
	TESTQ       CX, CX
	JEQ         l2512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z1

l2512_sum:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	REDUCE512
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// HSUM4 reduces the accumulators Z0..Z3 (one per row) to four sums and
// stores them at (DX). It clobbers Z8.
#define HSUM4 \
	VEXTRACTF64X4 $1, Z0, Y8 \
	VADDPS        Y8, Y0, Y0 \
	VEXTRACTF64X4 $1, Z1, Y8 \
	VADDPS        Y8, Y1, Y1 \
	VEXTRACTF64X4 $1, Z2, Y8 \
	VADDPS        Y8, Y2, Y2 \
	VEXTRACTF64X4 $1, Z3, Y8 \
	VADDPS        Y8, Y3, Y3 \
	HSUM4Y

// HSUM4Y reduces the accumulators Y0..Y3 (one per row) to four sums and
// stores them at (DX). It clobbers Y8.
#define HSUM4Y \
	VEXTRACTF128 $1, Y0, X8 \
	VADDPS       X8, X0, X0 \
	VEXTRACTF128 $1, Y1, X8 \
	VADDPS       X8, X1, X1 \
	VEXTRACTF128 $1, Y2, X8 \
	VADDPS       X8, X2, X2 \
	VEXTRACTF128 $1, Y3, X8 \
	VADDPS       X8, X3, X3 \
	VHADDPS      X1, X0, X0 \
	VHADDPS      X3, X2, X2 \
	VHADDPS      X2, X0, X0 \
	VMOVUPS      X0, (DX)

// ROWS4 sets R9..R11 to the rows after R8, CX elements apart (clobbers AX).
#define ROWS4 \
	LEAQ (CX*4), AX     \
	LEAQ (R8)(AX*1), R9 \
	LEAQ (R9)(AX*1), R10 \
	LEAQ (R10)(AX*1), R11

// func dot4AVX512(q, r *float32, n, groups int, out *float32)
TEXT ·dot4AVX512(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), BX
	MOVQ r+8(FP), R8
	MOVQ n+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ out+32(FP), DX

dot4AVX512_group:
	MOVQ BX, SI
	MOVQ R8, DI
	MOVQ R12, CX
	ROWS4
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	CMPQ   CX, $32
	JLT    dot4512_16

dot4512_32:
	VMOVUPS     (SI), Z8
	VMOVUPS     64(SI), Z9
	VFMADD231PS (R8), Z8, Z0
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS (R11), Z8, Z3
	VFMADD231PS 64(R8), Z9, Z4
	VFMADD231PS 64(R9), Z9, Z5
	VFMADD231PS 64(R10), Z9, Z6
	VFMADD231PS 64(R11), Z9, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, R10
	ADDQ        $128, R11
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         dot4512_32

dot4512_16:
	CMPQ        CX, $16
	JLT         dot4512_tail
	VMOVUPS     (SI), Z8
	VFMADD231PS (R8), Z8, Z0
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS (R11), Z8, Z3
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX

dot4512_tail:
	TESTQ       CX, CX
	JEQ         dot4512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z8
	VMOVUPS.Z   (R8), K1, Z10
	VMOVUPS.Z   (R9), K1, Z11
	VMOVUPS.Z   (R10), K1, Z12
	VMOVUPS.Z   (R11), K1, Z13
	VFMADD231PS Z10, Z8, Z4
	VFMADD231PS Z11, Z8, Z5
	VFMADD231PS Z12, Z8, Z6
	VFMADD231PS Z13, Z8, Z7

dot4512_sum:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	HSUM4
	ADDQ $16, DX
	LEAQ (R12*4), AX
	LEAQ (DI)(AX*4), R8
	DECQ R13
	JNZ  dot4AVX512_group
	VZEROUPPER
	RET

// func l2x4AVX512(q, r *float32, n, groups int, out *float32)
TEXT ·l2x4AVX512(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), BX
	MOVQ r+8(FP), R8
	MOVQ n+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ out+32(FP), DX

l2x4AVX512_group:
	MOVQ BX, SI
	MOVQ R8, DI
	MOVQ R12, CX
	ROWS4
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	CMPQ   CX, $32
	JLT    l2x4512_16

l2x4512_32:
	VMOVUPS     (SI), Z8
	VMOVUPS     64(SI), Z9
	VSUBPS      (R8), Z8, Z10
	VSUBPS      (R9), Z8, Z11
	VSUBPS      (R10), Z8, Z12
	VSUBPS      (R11), Z8, Z13
	VFMADD231PS Z10, Z10, Z0
	VFMADD231PS Z11, Z11, Z1
	VFMADD231PS Z12, Z12, Z2
	VFMADD231PS Z13, Z13, Z3
	VSUBPS      64(R8), Z9, Z10
	VSUBPS      64(R9), Z9, Z11
	VSUBPS      64(R10), Z9, Z12
	VSUBPS      64(R11), Z9, Z13
	VFMADD231PS Z10, Z10, Z4
	VFMADD231PS Z11, Z11, Z5
	VFMADD231PS Z12, Z12, Z6
	VFMADD231PS Z13, Z13, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, R10
	ADDQ        $128, R11
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         l2x4512_32

l2x4512_16:
	CMPQ        CX, $16
	JLT         l2x4512_tail
	VMOVUPS     (SI), Z8
	VSUBPS      (R8), Z8, Z10
	VSUBPS      (R9), Z8, Z11
	VSUBPS      (R10), Z8, Z12
	VSUBPS      (R11), Z8, Z13
	VFMADD231PS Z10, Z10, Z0
	VFMADD231PS Z11, Z11, Z1
	VFMADD231PS Z12, Z12, Z2
	VFMADD231PS Z13, Z13, Z3
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX

l2x4512_tail:
	TESTQ       CX, CX
	JEQ         l2x4512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z8
	VMOVUPS.Z   (R8), K1, Z10
	VMOVUPS.Z   (R9), K1, Z11
	VMOVUPS.Z   (R10), K1, Z12
	VMOVUPS.Z   (R11), K1, Z13
	VSUBPS      Z10, Z8, Z10
	VSUBPS      Z11, Z8, Z11
	VSUBPS      Z12, Z8, Z12
	VSUBPS      Z13, Z8, Z13
	VFMADD231PS Z10, Z10, Z4
	VFMADD231PS Z11, Z11, Z5
	VFMADD231PS Z12, Z12, Z6
	VFMADD231PS Z13, Z13, Z7

l2x4512_sum:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	HSUM4
	ADDQ $16, DX
	LEAQ (R12*4), AX
	LEAQ (DI)(AX*4), R8
	DECQ R13
	JNZ  l2x4AVX512_group
	VZEROUPPER
	RET

// ------------------------------------------------------------ AVX2 + FMA

// tailmask<> is eight all-ones words then eight zeros: the eight words at
// tailmask<>+32-4r select the first r lanes of a Y register for VMASKMOVPS,
// which neither reads nor faults on the lanes it leaves out.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// YTAILMASK loads into Y15 the mask of the first CX lanes (0 < CX < 8;
// clobbers AX and CX).
#define YTAILMASK \
	LEAQ    tailmask<>+32(SB), AX \
	SHLQ    $2, CX                \
	SUBQ    CX, AX                \
	VMOVDQU (AX), Y15

// REDUCE256 sums the 8 lanes of Y0 into the low lane of X0 (clobbers Y1).
#define REDUCE256 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1     \
	VADDSS       X1, X0, X0

// func dotAVX2(a, b []float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    dot256_8

dot256_32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         dot256_32

dot256_8:
	CMPQ        CX, $8
	JLT         dot256_tail
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dot256_8

dot256_tail:
	TESTQ       CX, CX
	JEQ         dot256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y4
	VMASKMOVPS  (DI), Y15, Y5
	VFMADD231PS Y5, Y4, Y1

dot256_sum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE256
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// func l2AVX2(a, b []float32) float32
TEXT ·l2AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    l2256_8

l2256_32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VSUBPS      (DI), Y4, Y4
	VSUBPS      32(DI), Y5, Y5
	VSUBPS      64(DI), Y6, Y6
	VSUBPS      96(DI), Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         l2256_32

l2256_8:
	CMPQ        CX, $8
	JLT         l2256_tail
	VMOVUPS     (SI), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         l2256_8

l2256_tail:
	TESTQ       CX, CX
	JEQ         l2256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y4
	VMASKMOVPS  (DI), Y15, Y5
	VSUBPS      Y5, Y4, Y4
	VFMADD231PS Y4, Y4, Y1

l2256_sum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE256
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// func dot4AVX2(q, r *float32, n, groups int, out *float32)
TEXT ·dot4AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), BX
	MOVQ r+8(FP), R8
	MOVQ n+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ out+32(FP), DX

dot4AVX2_group:
	MOVQ BX, SI
	MOVQ R8, DI
	MOVQ R12, CX
	ROWS4
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    dot4256_8

dot4256_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R8), Y9, Y4
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         dot4256_16

dot4256_8:
	CMPQ        CX, $8
	JLT         dot4256_tail
	VMOVUPS     (SI), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

dot4256_tail:
	TESTQ       CX, CX
	JEQ         dot4256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VFMADD231PS Y10, Y8, Y4
	VFMADD231PS Y11, Y8, Y5
	VFMADD231PS Y12, Y8, Y6
	VFMADD231PS Y13, Y8, Y7

dot4256_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y
	ADDQ $16, DX
	LEAQ (R12*4), AX
	LEAQ (DI)(AX*4), R8
	DECQ R13
	JNZ  dot4AVX2_group
	VZEROUPPER
	RET

// func l2x4AVX2(q, r *float32, n, groups int, out *float32)
TEXT ·l2x4AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), BX
	MOVQ r+8(FP), R8
	MOVQ n+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ out+32(FP), DX

l2x4AVX2_group:
	MOVQ BX, SI
	MOVQ R8, DI
	MOVQ R12, CX
	ROWS4
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    l2x4256_8

l2x4256_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	VSUBPS      32(R8), Y9, Y10
	VSUBPS      32(R9), Y9, Y11
	VSUBPS      32(R10), Y9, Y12
	VSUBPS      32(R11), Y9, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         l2x4256_16

l2x4256_8:
	CMPQ        CX, $8
	JLT         l2x4256_tail
	VMOVUPS     (SI), Y8
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

l2x4256_tail:
	TESTQ       CX, CX
	JEQ         l2x4256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VSUBPS      Y10, Y8, Y10
	VSUBPS      Y11, Y8, Y11
	VSUBPS      Y12, Y8, Y12
	VSUBPS      Y13, Y8, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7

l2x4256_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y
	ADDQ $16, DX
	LEAQ (R12*4), AX
	LEAQ (DI)(AX*4), R8
	DECQ R13
	JNZ  l2x4AVX2_group
	VZEROUPPER
	RET

// ------------------------------------------------------------ gather forms

// The gather forms score q against four rows anywhere in memory in one pass
// over q: out[j] = f(q, row j) for the rows a, b, c, d of n elements
// (n > 0). They are the four-row loops above with R8..R11 taken from the
// arguments instead of from consecutive rows.

// func dotGather4AVX512(q, a, b, c, d *float32, n int, out *float32)
TEXT ·dotGather4AVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ a+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ c+24(FP), R10
	MOVQ d+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	CMPQ   CX, $32
	JLT    dotg512_16

dotg512_32:
	VMOVUPS     (SI), Z8
	VMOVUPS     64(SI), Z9
	VFMADD231PS (R8), Z8, Z0
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS (R11), Z8, Z3
	VFMADD231PS 64(R8), Z9, Z4
	VFMADD231PS 64(R9), Z9, Z5
	VFMADD231PS 64(R10), Z9, Z6
	VFMADD231PS 64(R11), Z9, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, R10
	ADDQ        $128, R11
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         dotg512_32

dotg512_16:
	CMPQ        CX, $16
	JLT         dotg512_tail
	VMOVUPS     (SI), Z8
	VFMADD231PS (R8), Z8, Z0
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS (R11), Z8, Z3
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX

dotg512_tail:
	TESTQ       CX, CX
	JEQ         dotg512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z8
	VMOVUPS.Z   (R8), K1, Z10
	VMOVUPS.Z   (R9), K1, Z11
	VMOVUPS.Z   (R10), K1, Z12
	VMOVUPS.Z   (R11), K1, Z13
	VFMADD231PS Z10, Z8, Z4
	VFMADD231PS Z11, Z8, Z5
	VFMADD231PS Z12, Z8, Z6
	VFMADD231PS Z13, Z8, Z7

dotg512_sum:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	HSUM4
	VZEROUPPER
	RET

// func l2Gather4AVX512(q, a, b, c, d *float32, n int, out *float32)
TEXT ·l2Gather4AVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ a+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ c+24(FP), R10
	MOVQ d+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	CMPQ   CX, $32
	JLT    l2g512_16

l2g512_32:
	VMOVUPS     (SI), Z8
	VMOVUPS     64(SI), Z9
	VSUBPS      (R8), Z8, Z10
	VSUBPS      (R9), Z8, Z11
	VSUBPS      (R10), Z8, Z12
	VSUBPS      (R11), Z8, Z13
	VFMADD231PS Z10, Z10, Z0
	VFMADD231PS Z11, Z11, Z1
	VFMADD231PS Z12, Z12, Z2
	VFMADD231PS Z13, Z13, Z3
	VSUBPS      64(R8), Z9, Z10
	VSUBPS      64(R9), Z9, Z11
	VSUBPS      64(R10), Z9, Z12
	VSUBPS      64(R11), Z9, Z13
	VFMADD231PS Z10, Z10, Z4
	VFMADD231PS Z11, Z11, Z5
	VFMADD231PS Z12, Z12, Z6
	VFMADD231PS Z13, Z13, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, R10
	ADDQ        $128, R11
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         l2g512_32

l2g512_16:
	CMPQ        CX, $16
	JLT         l2g512_tail
	VMOVUPS     (SI), Z8
	VSUBPS      (R8), Z8, Z10
	VSUBPS      (R9), Z8, Z11
	VSUBPS      (R10), Z8, Z12
	VSUBPS      (R11), Z8, Z13
	VFMADD231PS Z10, Z10, Z0
	VFMADD231PS Z11, Z11, Z1
	VFMADD231PS Z12, Z12, Z2
	VFMADD231PS Z13, Z13, Z3
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX

l2g512_tail:
	TESTQ       CX, CX
	JEQ         l2g512_sum
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z8
	VMOVUPS.Z   (R8), K1, Z10
	VMOVUPS.Z   (R9), K1, Z11
	VMOVUPS.Z   (R10), K1, Z12
	VMOVUPS.Z   (R11), K1, Z13
	VSUBPS      Z10, Z8, Z10
	VSUBPS      Z11, Z8, Z11
	VSUBPS      Z12, Z8, Z12
	VSUBPS      Z13, Z8, Z13
	VFMADD231PS Z10, Z10, Z4
	VFMADD231PS Z11, Z11, Z5
	VFMADD231PS Z12, Z12, Z6
	VFMADD231PS Z13, Z13, Z7

l2g512_sum:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	HSUM4
	VZEROUPPER
	RET

// func dotGather4AVX2(q, a, b, c, d *float32, n int, out *float32)
TEXT ·dotGather4AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ a+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ c+24(FP), R10
	MOVQ d+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    dotg256_8

dotg256_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R8), Y9, Y4
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         dotg256_16

dotg256_8:
	CMPQ        CX, $8
	JLT         dotg256_tail
	VMOVUPS     (SI), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

dotg256_tail:
	TESTQ       CX, CX
	JEQ         dotg256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VFMADD231PS Y10, Y8, Y4
	VFMADD231PS Y11, Y8, Y5
	VFMADD231PS Y12, Y8, Y6
	VFMADD231PS Y13, Y8, Y7

dotg256_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y
	VZEROUPPER
	RET

// func l2Gather4AVX2(q, a, b, c, d *float32, n int, out *float32)
TEXT ·l2Gather4AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ a+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ c+24(FP), R10
	MOVQ d+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    l2g256_8

l2g256_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	VSUBPS      32(R8), Y9, Y10
	VSUBPS      32(R9), Y9, Y11
	VSUBPS      32(R10), Y9, Y12
	VSUBPS      32(R11), Y9, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         l2g256_16

l2g256_8:
	CMPQ        CX, $8
	JLT         l2g256_tail
	VMOVUPS     (SI), Y8
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

l2g256_tail:
	TESTQ       CX, CX
	JEQ         l2g256_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VSUBPS      Y10, Y8, Y10
	VSUBPS      Y11, Y8, Y11
	VSUBPS      Y12, Y8, Y12
	VSUBPS      Y13, Y8, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7

l2g256_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y
	VZEROUPPER
	RET

// func dotGatherNAVX2(q *float32, rows **float32, groups, n int, out *float32)
// runs the four-row gather loop above on each group of four pointers at
// rows, groups > 0 and n > 0, writing four results a group from out on.
TEXT ·dotGatherNAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), R12
	MOVQ rows+8(FP), BX
	MOVQ groups+16(FP), DI
	MOVQ n+24(FP), R13
	MOVQ out+32(FP), DX

dotgn_group:
	MOVQ R12, SI
	MOVQ R13, CX
	MOVQ 0(BX), R8
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    dotgn_8

dotgn_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R8), Y9, Y4
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         dotgn_16

dotgn_8:
	CMPQ        CX, $8
	JLT         dotgn_tail
	VMOVUPS     (SI), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

dotgn_tail:
	TESTQ       CX, CX
	JEQ         dotgn_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VFMADD231PS Y10, Y8, Y4
	VFMADD231PS Y11, Y8, Y5
	VFMADD231PS Y12, Y8, Y6
	VFMADD231PS Y13, Y8, Y7

dotgn_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y

	ADDQ $32, BX
	ADDQ $16, DX
	DECQ DI
	JNZ  dotgn_group
	VZEROUPPER
	RET

// func l2GatherNAVX2(q *float32, rows **float32, groups, n int, out *float32)
// runs the four-row gather loop above on each group of four pointers at
// rows, groups > 0 and n > 0, writing four results a group from out on.
TEXT ·l2GatherNAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), R12
	MOVQ rows+8(FP), BX
	MOVQ groups+16(FP), DI
	MOVQ n+24(FP), R13
	MOVQ out+32(FP), DX

l2gn_group:
	MOVQ R12, SI
	MOVQ R13, CX
	MOVQ 0(BX), R8
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    l2gn_8

l2gn_16:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	VSUBPS      32(R8), Y9, Y10
	VSUBPS      32(R9), Y9, Y11
	VSUBPS      32(R10), Y9, Y12
	VSUBPS      32(R11), Y9, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R11
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         l2gn_16

l2gn_8:
	CMPQ        CX, $8
	JLT         l2gn_tail
	VMOVUPS     (SI), Y8
	VSUBPS      (R8), Y8, Y10
	VSUBPS      (R9), Y8, Y11
	VSUBPS      (R10), Y8, Y12
	VSUBPS      (R11), Y8, Y13
	VFMADD231PS Y10, Y10, Y0
	VFMADD231PS Y11, Y11, Y1
	VFMADD231PS Y12, Y12, Y2
	VFMADD231PS Y13, Y13, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $32, R11
	SUBQ        $8, CX

l2gn_tail:
	TESTQ       CX, CX
	JEQ         l2gn_sum
	YTAILMASK
	VMASKMOVPS  (SI), Y15, Y8
	VMASKMOVPS  (R8), Y15, Y10
	VMASKMOVPS  (R9), Y15, Y11
	VMASKMOVPS  (R10), Y15, Y12
	VMASKMOVPS  (R11), Y15, Y13
	VSUBPS      Y10, Y8, Y10
	VSUBPS      Y11, Y8, Y11
	VSUBPS      Y12, Y8, Y12
	VSUBPS      Y13, Y8, Y13
	VFMADD231PS Y10, Y10, Y4
	VFMADD231PS Y11, Y11, Y5
	VFMADD231PS Y12, Y12, Y6
	VFMADD231PS Y13, Y13, Y7

l2gn_sum:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4Y

	ADDQ $32, BX
	ADDQ $16, DX
	DECQ DI
	JNZ  l2gn_group
	VZEROUPPER
	RET
