//go:build amd64 && !purego

#include "textflag.h"

// The int8 kernels: dot products of int8 queries (each in [-64, 64]) with
// uint8 codes, exact in int32. VPMADDUBSW multiplies 32 code bytes
// (unsigned, the register operand) by 32 query bytes (signed) and adds
// neighbouring pairs into 16 int16 lanes: with |q| ≤ 64 a pair is at most
// 2·64·255 = 32,640, so the int16 sums never saturate. VPMADDWD by a
// vector of ones widens each pair of lanes into an int32 sum. That is
// three arithmetic instructions per 32 bytes, half the work of widening
// both inputs to int16 first. (AVX-512 VNNI's VPDPBUSD does the three in
// one, for any int8 query.) AX indexes all inputs; n is a positive multiple
// of 32 (the Go wrappers add the tail).

// ONES16 sets Y14 to sixteen int16 ones.
#define ONES16 \
	MOVL         $0x00010001, BX \
	VMOVD        BX, X14         \
	VPBROADCASTD X14, Y14

// HSUMD sums the eight int32 lanes of y (whose low half is x) into the low
// lane of x; t is a scratch X register.
#define HSUMD(y, x, t) \
	VEXTRACTI128 $1, y, t    \
	VPADDD       t, x, x     \
	VPSHUFD      $0x4E, x, t \
	VPADDD       t, x, x     \
	VPSHUFD      $0xB1, x, t \
	VPADDD       t, x, x

// func dotU8I8AVX2(q *int8, c *uint8, n int) int32
TEXT ·dotU8I8AVX2(SB), NOSPLIT, $0-28
	MOVQ  q+0(FP), SI
	MOVQ  c+8(FP), DI
	MOVQ  n+16(FP), CX
	XORQ  AX, AX
	ONES16
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  CX, DX
	ANDQ  $-64, DX
	JEQ   du8_32

du8_64:
	VMOVDQU    (DI)(AX*1), Y4
	VMOVDQU    32(DI)(AX*1), Y5
	VPMADDUBSW (SI)(AX*1), Y4, Y4
	VPMADDUBSW 32(SI)(AX*1), Y5, Y5
	VPMADDWD   Y14, Y4, Y4
	VPMADDWD   Y14, Y5, Y5
	VPADDD     Y4, Y0, Y0
	VPADDD     Y5, Y1, Y1
	ADDQ       $64, AX
	CMPQ       AX, DX
	JLT        du8_64

du8_32:
	CMPQ       AX, CX
	JGE        du8_sum
	VMOVDQU    (DI)(AX*1), Y4
	VPMADDUBSW (SI)(AX*1), Y4, Y4
	VPMADDWD   Y14, Y4, Y4
	VPADDD     Y4, Y0, Y0

du8_sum:
	VPADDD Y1, Y0, Y0
	HSUMD(Y0, X0, X1)
	VMOVD  X0, AX
	MOVL   AX, ret+24(FP)
	VZEROUPPER
	RET

// func dotU8I8Gather4AVX2(q *int8, a, b, c, d *uint8, n int, out *int32)
//
// Each 32 bytes of q are loaded once for the four codes.
TEXT ·dotU8I8Gather4AVX2(SB), NOSPLIT, $0-56
	MOVQ  q+0(FP), SI
	MOVQ  a+8(FP), R8
	MOVQ  b+16(FP), R9
	MOVQ  c+24(FP), R10
	MOVQ  d+32(FP), R11
	MOVQ  n+40(FP), CX
	MOVQ  out+48(FP), DX
	XORQ  AX, AX
	ONES16
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

dg8_32:
	VMOVDQU    (SI)(AX*1), Y4
	VMOVDQU    (R8)(AX*1), Y5
	VMOVDQU    (R9)(AX*1), Y6
	VMOVDQU    (R10)(AX*1), Y7
	VMOVDQU    (R11)(AX*1), Y8
	VPMADDUBSW Y4, Y5, Y5
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y4, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDWD   Y14, Y5, Y5
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y7, Y7
	VPMADDWD   Y14, Y8, Y8
	VPADDD     Y5, Y0, Y0
	VPADDD     Y6, Y1, Y1
	VPADDD     Y7, Y2, Y2
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, AX
	CMPQ       AX, CX
	JLT        dg8_32

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

// func dotU8I8StridedAVX2(q *int8, codes *uint8, n, stride, groups int, out *int32)
//
// The gather loop over groups of four consecutive codes stride bytes
// apart (a scan of contiguous codes), writing 4*groups sums. Each
// iteration also prefetches 128 bytes of the group two ahead, so that the
// whole of it (4*stride bytes, n/32 iterations) is on its way before it is
// needed: the interleaved reads of four codes within a few KiB defeat the
// hardware's stream prefetcher.
TEXT ·dotU8I8StridedAVX2(SB), NOSPLIT, $0-48
	MOVQ  q+0(FP), SI
	MOVQ  codes+8(FP), R8
	MOVQ  n+16(FP), CX
	MOVQ  stride+24(FP), R12
	MOVQ  groups+32(FP), R13
	MOVQ  out+40(FP), DX
	ONES16

ds8_group:
	LEAQ  (R8)(R12*1), R9
	LEAQ  (R9)(R12*1), R10
	LEAQ  (R10)(R12*1), R11
	LEAQ  (R11)(R12*4), DI // DI: the group after next
	LEAQ  (DI)(R12*1), DI
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

ds8_32:
	PREFETCHT0 (DI)(AX*4)
	PREFETCHT0 64(DI)(AX*4)
	VMOVDQU    (SI)(AX*1), Y4
	VMOVDQU    (R8)(AX*1), Y5
	VMOVDQU    (R9)(AX*1), Y6
	VMOVDQU    (R10)(AX*1), Y7
	VMOVDQU    (R11)(AX*1), Y8
	VPMADDUBSW Y4, Y5, Y5
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y4, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDWD   Y14, Y5, Y5
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y7, Y7
	VPMADDWD   Y14, Y8, Y8
	VPADDD     Y5, Y0, Y0
	VPADDD     Y6, Y1, Y1
	VPADDD     Y7, Y2, Y2
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, AX
	CMPQ       AX, CX
	JLT        ds8_32

	HSUMD(Y0, X0, X9)
	HSUMD(Y1, X1, X9)
	HSUMD(Y2, X2, X9)
	HSUMD(Y3, X3, X9)
	VMOVD X0, 0(DX)
	VMOVD X1, 4(DX)
	VMOVD X2, 8(DX)
	VMOVD X3, 12(DX)
	ADDQ  $16, DX
	LEAQ  (R11)(R12*1), R8
	DECQ  R13
	JNZ   ds8_group
	VZEROUPPER
	RET

// func dotU8I8GatherNAVX2(q *int8, codes **uint8, groups, n int, out *int32)
//
// The four-code loop of dotU8I8Gather4AVX2 over each group of four
// pointers at codes (groups > 0, n a positive multiple of 32), writing
// four sums a group from out on: one call scores a node's neighbours.
TEXT ·dotU8I8GatherNAVX2(SB), NOSPLIT, $0-40
	ONES16 // uses BX: before BX is loaded
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), BX
	MOVQ groups+16(FP), R13
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX

dgn8_group:
	MOVQ  0(BX), R8
	MOVQ  8(BX), R9
	MOVQ  16(BX), R10
	MOVQ  24(BX), R11
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

dgn8_32:
	VMOVDQU    (SI)(AX*1), Y4
	VMOVDQU    (R8)(AX*1), Y5
	VMOVDQU    (R9)(AX*1), Y6
	VMOVDQU    (R10)(AX*1), Y7
	VMOVDQU    (R11)(AX*1), Y8
	VPMADDUBSW Y4, Y5, Y5
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y4, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDWD   Y14, Y5, Y5
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y7, Y7
	VPMADDWD   Y14, Y8, Y8
	VPADDD     Y5, Y0, Y0
	VPADDD     Y6, Y1, Y1
	VPADDD     Y7, Y2, Y2
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, AX
	CMPQ       AX, CX
	JLT        dgn8_32

	// Sum the four codes' lanes together: three adds and a horizontal
	// step for all four, not four horizontal sums.
	VPHADDD      Y1, Y0, Y0 // [a01 a23 b01 b23 | a45 a67 b45 b67]
	VPHADDD      Y3, Y2, Y2 // the same for c and d
	VPHADDD      Y2, Y0, Y0 // [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7]
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVDQU      X0, 0(DX)
	ADDQ         $16, DX
	ADDQ         $32, BX
	DECQ         R13
	JNZ          dgn8_group
	VZEROUPPER
	RET

// func dotU8I8GatherAffineAVX2(q *int8, codes **uint8, count, n int, out *float32, alpha, base float32)
//
// The gather loop of dotU8I8GatherNAVX2 over count > 0 codes (n a positive
// multiple of 32), a last group of one to three codes repeating its last
// pointer, each sum turned into base + alpha·float32(sum) as Go computes
// it (a conversion, a multiply, an add: no fused multiply-add, so the bits
// are Go's), and only count values written.
TEXT ·dotU8I8GatherAffineAVX2(SB), NOSPLIT, $0-48
	ONES16 // uses BX: before BX is loaded
	MOVQ         q+0(FP), SI
	MOVQ         codes+8(FP), BX
	MOVQ         count+16(FP), R13
	MOVQ         n+24(FP), CX
	MOVQ         out+32(FP), DX
	VBROADCASTSS alpha+40(FP), X12
	VBROADCASTSS base+44(FP), X13

dga_group:
	MOVQ 0(BX), R8
	CMPQ R13, $4
	JLT  dga_short
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	JMP  dga_start

dga_short:
	// One to three codes: repeat the last.
	MOVQ R8, R9
	MOVQ R8, R10
	MOVQ R8, R11
	CMPQ R13, $2
	JLT  dga_start
	MOVQ 8(BX), R9
	MOVQ R9, R10
	MOVQ R9, R11
	CMPQ R13, $3
	JLT  dga_start
	MOVQ 16(BX), R10
	MOVQ R10, R11

dga_start:
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

dga_32:
	VMOVDQU    (SI)(AX*1), Y4
	VMOVDQU    (R8)(AX*1), Y5
	VMOVDQU    (R9)(AX*1), Y6
	VMOVDQU    (R10)(AX*1), Y7
	VMOVDQU    (R11)(AX*1), Y8
	VPMADDUBSW Y4, Y5, Y5
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y4, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDWD   Y14, Y5, Y5
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y7, Y7
	VPMADDWD   Y14, Y8, Y8
	VPADDD     Y5, Y0, Y0
	VPADDD     Y6, Y1, Y1
	VPADDD     Y7, Y2, Y2
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, AX
	CMPQ       AX, CX
	JLT        dga_32

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	VMULPS       X12, X0, X0
	VADDPS       X13, X0, X0
	CMPQ         R13, $4
	JLT          dga_tail
	VMOVUPS      X0, 0(DX)
	ADDQ         $16, DX
	ADDQ         $32, BX
	SUBQ         $4, R13
	JNZ          dga_group
	VZEROUPPER
	RET

dga_tail:
	VMOVSS    X0, 0(DX)
	CMPQ      R13, $2
	JLT       dga_done
	VEXTRACTPS $1, X0, 4(DX)
	CMPQ      R13, $3
	JLT       dga_done
	VEXTRACTPS $2, X0, 8(DX)

dga_done:
	VZEROUPPER
	RET

// func dotU8I8GatherAffineVNNI(q *int8, codes **uint8, count, n int, out *float32, alpha, base float32)
//
// dotU8I8GatherAffineAVX2 with AVX-512 VNNI: VPDPBUSD multiplies 64 code
// bytes by 64 query bytes and adds each group of four products into one
// of 16 int32 lanes, one instruction for the AVX2 loop's three. The sums
// are exact, the same as the AVX2 kernel's. The loop takes 64 bytes a
// step; a last 32 (n is a multiple of 32) takes one 256-bit step, after
// the accumulators are folded to 256 bits (a 256-bit EVEX write clears
// the upper half of its register).
TEXT ·dotU8I8GatherAffineVNNI(SB), NOSPLIT, $0-48
	MOVQ         q+0(FP), SI
	MOVQ         codes+8(FP), BX
	MOVQ         count+16(FP), R13
	MOVQ         n+24(FP), CX
	MOVQ         out+32(FP), DX
	VBROADCASTSS alpha+40(FP), X12
	VBROADCASTSS base+44(FP), X13
	MOVQ         CX, R12
	ANDQ         $-64, R12

dgv_group:
	MOVQ 0(BX), R8
	CMPQ R13, $4
	JLT  dgv_short
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	JMP  dgv_start

dgv_short:
	// One to three codes: repeat the last.
	MOVQ R8, R9
	MOVQ R8, R10
	MOVQ R8, R11
	CMPQ R13, $2
	JLT  dgv_start
	MOVQ 8(BX), R9
	MOVQ R9, R10
	MOVQ R9, R11
	CMPQ R13, $3
	JLT  dgv_start
	MOVQ 16(BX), R10
	MOVQ R10, R11

dgv_start:
	XORQ   AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   R12, $0
	JEQ    dgv_fold

dgv_64:
	VMOVDQU64 (SI)(AX*1), Z4
	VMOVDQU64 (R8)(AX*1), Z5
	VMOVDQU64 (R9)(AX*1), Z6
	VMOVDQU64 (R10)(AX*1), Z7
	VMOVDQU64 (R11)(AX*1), Z8
	VPDPBUSD  Z4, Z5, Z0
	VPDPBUSD  Z4, Z6, Z1
	VPDPBUSD  Z4, Z7, Z2
	VPDPBUSD  Z4, Z8, Z3
	ADDQ      $64, AX
	CMPQ      AX, R12
	JLT       dgv_64

dgv_fold:
	VEXTRACTI64X4 $1, Z0, Y5
	VEXTRACTI64X4 $1, Z1, Y6
	VEXTRACTI64X4 $1, Z2, Y7
	VEXTRACTI64X4 $1, Z3, Y8
	VPADDD        Y5, Y0, Y0
	VPADDD        Y6, Y1, Y1
	VPADDD        Y7, Y2, Y2
	VPADDD        Y8, Y3, Y3
	CMPQ          AX, CX
	JGE           dgv_sum
	VMOVDQU       (SI)(AX*1), Y4
	VMOVDQU       (R8)(AX*1), Y5
	VMOVDQU       (R9)(AX*1), Y6
	VMOVDQU       (R10)(AX*1), Y7
	VMOVDQU       (R11)(AX*1), Y8
	VPDPBUSD      Y4, Y5, Y0
	VPDPBUSD      Y4, Y6, Y1
	VPDPBUSD      Y4, Y7, Y2
	VPDPBUSD      Y4, Y8, Y3

dgv_sum:
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	VMULPS       X12, X0, X0
	VADDPS       X13, X0, X0
	CMPQ         R13, $4
	JLT          dgv_tail
	VMOVUPS      X0, 0(DX)
	ADDQ         $16, DX
	ADDQ         $32, BX
	SUBQ         $4, R13
	JNZ          dgv_group
	VZEROUPPER
	RET

dgv_tail:
	VMOVSS     X0, 0(DX)
	CMPQ       R13, $2
	JLT        dgv_done
	VEXTRACTPS $1, X0, 4(DX)
	CMPQ       R13, $3
	JLT        dgv_done
	VEXTRACTPS $2, X0, 8(DX)

dgv_done:
	VZEROUPPER
	RET

// func dotU8I8StridedVNNI(q *int8, codes *uint8, n, stride, groups int, out *int32)
//
// dotU8I8StridedAVX2 with AVX-512 VNNI (see dotU8I8GatherAffineVNNI):
// 64 bytes a step and a last 32 after folding; each step prefetches 256
// bytes of the group two ahead, the AVX2 loop's rate.
TEXT ·dotU8I8StridedVNNI(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), R8
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), R12
	MOVQ groups+32(FP), R13
	MOVQ out+40(FP), DX
	MOVQ CX, BX
	ANDQ $-64, BX

dsv_group:
	LEAQ   (R8)(R12*1), R9
	LEAQ   (R9)(R12*1), R10
	LEAQ   (R10)(R12*1), R11
	LEAQ   (R11)(R12*4), DI // DI: the group after next
	LEAQ   (DI)(R12*1), DI
	XORQ   AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   BX, $0
	JEQ    dsv_fold

dsv_64:
	PREFETCHT0 (DI)(AX*4)
	PREFETCHT0 64(DI)(AX*4)
	PREFETCHT0 128(DI)(AX*4)
	PREFETCHT0 192(DI)(AX*4)
	VMOVDQU64  (SI)(AX*1), Z4
	VMOVDQU64  (R8)(AX*1), Z5
	VMOVDQU64  (R9)(AX*1), Z6
	VMOVDQU64  (R10)(AX*1), Z7
	VMOVDQU64  (R11)(AX*1), Z8
	VPDPBUSD   Z4, Z5, Z0
	VPDPBUSD   Z4, Z6, Z1
	VPDPBUSD   Z4, Z7, Z2
	VPDPBUSD   Z4, Z8, Z3
	ADDQ       $64, AX
	CMPQ       AX, BX
	JLT        dsv_64

dsv_fold:
	VEXTRACTI64X4 $1, Z0, Y5
	VEXTRACTI64X4 $1, Z1, Y6
	VEXTRACTI64X4 $1, Z2, Y7
	VEXTRACTI64X4 $1, Z3, Y8
	VPADDD        Y5, Y0, Y0
	VPADDD        Y6, Y1, Y1
	VPADDD        Y7, Y2, Y2
	VPADDD        Y8, Y3, Y3
	CMPQ          AX, CX
	JGE           dsv_sum
	VMOVDQU       (SI)(AX*1), Y4
	VMOVDQU       (R8)(AX*1), Y5
	VMOVDQU       (R9)(AX*1), Y6
	VMOVDQU       (R10)(AX*1), Y7
	VMOVDQU       (R11)(AX*1), Y8
	VPDPBUSD      Y4, Y5, Y0
	VPDPBUSD      Y4, Y6, Y1
	VPDPBUSD      Y4, Y7, Y2
	VPDPBUSD      Y4, Y8, Y3

dsv_sum:
	HSUMD(Y0, X0, X9)
	HSUMD(Y1, X1, X9)
	HSUMD(Y2, X2, X9)
	HSUMD(Y3, X3, X9)
	VMOVD X0, 0(DX)
	VMOVD X1, 4(DX)
	VMOVD X2, 8(DX)
	VMOVD X3, 12(DX)
	ADDQ  $16, DX
	LEAQ  (R11)(R12*1), R8
	DECQ  R13
	JNZ   dsv_group
	VZEROUPPER
	RET

// func dotU8I8Gather2VNNI(q1, q2 *int8, codes **uint8, count, n int, out1, out2 *int32)
//
// Two queries against each code in one pass over it, with AVX-512 VNNI
// (see dotU8I8GatherAffineVNNI): four codes at a time, eight
// accumulators, 64 bytes a step and a last 32 (n is a multiple of 32)
// after folding to 256 bits. out1 gets the sums with q1, out2 with q2.
TEXT ·dotU8I8Gather2VNNI(SB), NOSPLIT, $0-56
	MOVQ q1+0(FP), SI
	MOVQ q2+8(FP), DI
	MOVQ codes+16(FP), BX
	MOVQ count+24(FP), R13
	MOVQ n+32(FP), CX
	MOVQ out1+40(FP), DX
	MOVQ out2+48(FP), R14
	MOVQ CX, R12
	ANDQ $-64, R12

dg2_group:
	MOVQ 0(BX), R8
	CMPQ R13, $4
	JLT  dg2_short
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	JMP  dg2_start

dg2_short:
	// One to three codes: repeat the last.
	MOVQ R8, R9
	MOVQ R8, R10
	MOVQ R8, R11
	CMPQ R13, $2
	JLT  dg2_start
	MOVQ 8(BX), R9
	MOVQ R9, R10
	MOVQ R9, R11
	CMPQ R13, $3
	JLT  dg2_start
	MOVQ 16(BX), R10
	MOVQ R10, R11

dg2_start:
	XORQ   AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	CMPQ   R12, $0
	JEQ    dg2_fold

dg2_64:
	VMOVDQU64 (SI)(AX*1), Z8
	VMOVDQU64 (DI)(AX*1), Z9
	VMOVDQU64 (R8)(AX*1), Z10
	VMOVDQU64 (R9)(AX*1), Z11
	VMOVDQU64 (R10)(AX*1), Z12
	VMOVDQU64 (R11)(AX*1), Z13
	VPDPBUSD  Z8, Z10, Z0
	VPDPBUSD  Z8, Z11, Z1
	VPDPBUSD  Z8, Z12, Z2
	VPDPBUSD  Z8, Z13, Z3
	VPDPBUSD  Z9, Z10, Z4
	VPDPBUSD  Z9, Z11, Z5
	VPDPBUSD  Z9, Z12, Z6
	VPDPBUSD  Z9, Z13, Z7
	ADDQ      $64, AX
	CMPQ      AX, R12
	JLT       dg2_64

dg2_fold:
	VEXTRACTI64X4 $1, Z0, Y10
	VEXTRACTI64X4 $1, Z1, Y11
	VEXTRACTI64X4 $1, Z2, Y12
	VEXTRACTI64X4 $1, Z3, Y13
	VPADDD        Y10, Y0, Y0
	VPADDD        Y11, Y1, Y1
	VPADDD        Y12, Y2, Y2
	VPADDD        Y13, Y3, Y3
	VEXTRACTI64X4 $1, Z4, Y10
	VEXTRACTI64X4 $1, Z5, Y11
	VEXTRACTI64X4 $1, Z6, Y12
	VEXTRACTI64X4 $1, Z7, Y13
	VPADDD        Y10, Y4, Y4
	VPADDD        Y11, Y5, Y5
	VPADDD        Y12, Y6, Y6
	VPADDD        Y13, Y7, Y7
	CMPQ          AX, CX
	JGE           dg2_sum
	VMOVDQU       (SI)(AX*1), Y8
	VMOVDQU       (DI)(AX*1), Y9
	VMOVDQU       (R8)(AX*1), Y10
	VMOVDQU       (R9)(AX*1), Y11
	VMOVDQU       (R10)(AX*1), Y12
	VMOVDQU       (R11)(AX*1), Y13
	VPDPBUSD      Y8, Y10, Y0
	VPDPBUSD      Y8, Y11, Y1
	VPDPBUSD      Y8, Y12, Y2
	VPDPBUSD      Y8, Y13, Y3
	VPDPBUSD      Y9, Y10, Y4
	VPDPBUSD      Y9, Y11, Y5
	VPDPBUSD      Y9, Y12, Y6
	VPDPBUSD      Y9, Y13, Y7

dg2_sum:
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPHADDD      Y6, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD       X5, X4, X4
	CMPQ         R13, $4
	JLT          dg2_tail
	VMOVDQU      X0, 0(DX)
	VMOVDQU      X4, 0(R14)
	ADDQ         $16, DX
	ADDQ         $16, R14
	ADDQ         $32, BX
	SUBQ         $4, R13
	JNZ          dg2_group
	VZEROUPPER
	RET

dg2_tail:
	VMOVSS     X0, 0(DX)
	VMOVSS     X4, 0(R14)
	CMPQ       R13, $2
	JLT        dg2_done
	VEXTRACTPS $1, X0, 4(DX)
	VEXTRACTPS $1, X4, 4(R14)
	CMPQ       R13, $3
	JLT        dg2_done
	VEXTRACTPS $2, X0, 8(DX)
	VEXTRACTPS $2, X4, 8(R14)

dg2_done:
	VZEROUPPER
	RET
