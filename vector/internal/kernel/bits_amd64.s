//go:build amd64 && !purego

#include "textflag.h"

// func bitsGatherVPOPCNT(planes *uint64, codes **byte, count, words int, out *int32)
//
// For each code, four accumulators (Z0–Z3) take the popcounts of the
// code's words ANDed with each plane, eight words (64 bytes) a step; the
// last step loads only the code's remaining words (a zero-masked load,
// which reads nothing past them), so the planes' bytes past words are
// ANDed with zeros. Then Z0 + 2·Z1 + 4·Z2 + 8·Z3 is summed across lanes.
TEXT ·bitsGatherVPOPCNT(SB), NOSPLIT, $0-40
	MOVQ planes+0(FP), SI
	MOVQ codes+8(FP), BX
	MOVQ count+16(FP), R10
	MOVQ words+24(FP), DX
	MOVQ out+32(FP), DI

	MOVQ DX, R8
	SHRQ $3, R8           // whole steps
	MOVQ DX, CX
	ANDQ $7, CX           // words in the last, partial step
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1          // its mask
	MOVQ DX, R11
	SHLQ $3, R11          // a plane's length in bytes
	LEAQ (R11)(R11*2), R9 // three planes' length

codeloop:
	MOVQ  (BX), R12
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ  SI, R13
	MOVQ  R8, R15
	TESTQ R15, R15
	JZ    tail

steploop:
	VMOVDQU64 (R12), Z4
	VPANDQ    (R13), Z4, Z5
	VPANDQ    (R13)(R11*1), Z4, Z6
	VPANDQ    (R13)(R11*2), Z4, Z7
	VPANDQ    (R13)(R9*1), Z4, Z8
	VPOPCNTQ  Z5, Z5
	VPOPCNTQ  Z6, Z6
	VPOPCNTQ  Z7, Z7
	VPOPCNTQ  Z8, Z8
	VPADDQ    Z5, Z0, Z0
	VPADDQ    Z6, Z1, Z1
	VPADDQ    Z7, Z2, Z2
	VPADDQ    Z8, Z3, Z3
	ADDQ      $64, R12
	ADDQ      $64, R13
	DECQ      R15
	JNZ       steploop

tail:
	TESTQ CX, CX
	JZ    sum
	VMOVDQU64.Z (R12), K1, Z4
	VPANDQ    (R13), Z4, Z5
	VPANDQ    (R13)(R11*1), Z4, Z6
	VPANDQ    (R13)(R11*2), Z4, Z7
	VPANDQ    (R13)(R9*1), Z4, Z8
	VPOPCNTQ  Z5, Z5
	VPOPCNTQ  Z6, Z6
	VPOPCNTQ  Z7, Z7
	VPOPCNTQ  Z8, Z8
	VPADDQ    Z5, Z0, Z0
	VPADDQ    Z6, Z1, Z1
	VPADDQ    Z7, Z2, Z2
	VPADDQ    Z8, Z3, Z3

sum:
	VPSLLQ $1, Z1, Z1
	VPSLLQ $2, Z2, Z2
	VPSLLQ $3, Z3, Z3
	VPADDQ Z1, Z0, Z0
	VPADDQ Z3, Z2, Z2
	VPADDQ Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	MOVL  AX, (DI)

	ADDQ $8, BX
	ADDQ $4, DI
	DECQ R10
	JNZ  codeloop
	VZEROUPPER
	RET
