//go:build amd64 && !purego

#include "textflag.h"

// The int8 kernels: dot products of int8 queries with uint8 codes, exact in
// int32. AVX2 has no unsigned-by-signed byte multiply that cannot saturate
// (VPMADDUBSW saturates at int16), so each 16 bytes are widened to int16
// (VPMOVSXBW for the query, VPMOVZXBW for the code) and multiplied with
// VPMADDWD, whose pairwise int32 sums cannot overflow. AX indexes both
// inputs; n is a positive multiple of 16 (the Go wrappers add the tail).

// HSUMD sums the eight int32 lanes of y (whose low half is x) into the low
// lane of x; t is a scratch X register.
#define HSUMD(y, x, t) \
	VEXTRACTI128 $1, y, t \
	VPADDD       t, x, x  \
	VPSHUFD      $0x4E, x, t \
	VPADDD       t, x, x  \
	VPSHUFD      $0xB1, x, t \
	VPADDD       t, x, x

// func dotU8I8AVX2(q *int8, c *uint8, n int) int32
TEXT ·dotU8I8AVX2(SB), NOSPLIT, $0-28
	MOVQ  q+0(FP), SI
	MOVQ  c+8(FP), DI
	MOVQ  n+16(FP), CX
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	MOVQ  CX, DX
	ANDQ  $-64, DX
	JEQ   du8_16

du8_64:
	VPMOVSXBW (SI)(AX*1), Y4
	VPMOVZXBW (DI)(AX*1), Y5
	VPMADDWD  Y4, Y5, Y5
	VPADDD    Y5, Y0, Y0
	VPMOVSXBW 16(SI)(AX*1), Y6
	VPMOVZXBW 16(DI)(AX*1), Y7
	VPMADDWD  Y6, Y7, Y7
	VPADDD    Y7, Y1, Y1
	VPMOVSXBW 32(SI)(AX*1), Y8
	VPMOVZXBW 32(DI)(AX*1), Y9
	VPMADDWD  Y8, Y9, Y9
	VPADDD    Y9, Y2, Y2
	VPMOVSXBW 48(SI)(AX*1), Y10
	VPMOVZXBW 48(DI)(AX*1), Y11
	VPMADDWD  Y10, Y11, Y11
	VPADDD    Y11, Y3, Y3
	ADDQ      $64, AX
	CMPQ      AX, DX
	JLT       du8_64

du8_16:
	CMPQ      AX, CX
	JGE       du8_sum
	VPMOVSXBW (SI)(AX*1), Y4
	VPMOVZXBW (DI)(AX*1), Y5
	VPMADDWD  Y4, Y5, Y5
	VPADDD    Y5, Y0, Y0
	ADDQ      $16, AX
	JMP       du8_16

du8_sum:
	VPADDD Y1, Y0, Y0
	VPADDD Y3, Y2, Y2
	VPADDD Y2, Y0, Y0
	HSUMD(Y0, X0, X1)
	VMOVD  X0, AX
	MOVL   AX, ret+24(FP)
	VZEROUPPER
	RET

// func dotU8I8Gather4AVX2(q *int8, a, b, c, d *uint8, n int, out *int32)
//
// Each 16 bytes of q are widened once for the four codes.
TEXT ·dotU8I8Gather4AVX2(SB), NOSPLIT, $0-56
	MOVQ  q+0(FP), SI
	MOVQ  a+8(FP), R8
	MOVQ  b+16(FP), R9
	MOVQ  c+24(FP), R10
	MOVQ  d+32(FP), R11
	MOVQ  n+40(FP), CX
	MOVQ  out+48(FP), DX
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

dg8_16:
	VPMOVSXBW (SI)(AX*1), Y4
	VPMOVZXBW (R8)(AX*1), Y5
	VPMOVZXBW (R9)(AX*1), Y6
	VPMOVZXBW (R10)(AX*1), Y7
	VPMOVZXBW (R11)(AX*1), Y8
	VPMADDWD  Y4, Y5, Y5
	VPMADDWD  Y4, Y6, Y6
	VPMADDWD  Y4, Y7, Y7
	VPMADDWD  Y4, Y8, Y8
	VPADDD    Y5, Y0, Y0
	VPADDD    Y6, Y1, Y1
	VPADDD    Y7, Y2, Y2
	VPADDD    Y8, Y3, Y3
	ADDQ      $16, AX
	CMPQ      AX, CX
	JLT       dg8_16

	HSUMD(Y0, X0, X9)
	HSUMD(Y1, X1, X9)
	HSUMD(Y2, X2, X9)
	HSUMD(Y3, X3, X9)
	VMOVD X0, 0(DX)
	VMOVD X1, 4(DX)
	VMOVD X2, 8(DX)
	VMOVD X3, 12(DX)
	VZEROUPPER
	RET
