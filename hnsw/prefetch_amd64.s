#include "textflag.h"

// func prefetchLines(p unsafe.Pointer, n int)
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET

// func prefetchAll(addrs []*float32, n int)
TEXT ·prefetchAll(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ addrs_base+0(FP), SI
	MOVQ addrs_len+8(FP), DX
	MOVQ n+24(FP), BX
	TESTQ BX, BX
	JLE all_done
	TESTQ DX, DX
	JLE all_done
next:
	MOVQ (SI), AX
	MOVQ BX, CX
lines:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ lines
	ADDQ $8, SI
	DECQ DX
	JNZ next
all_done:
	RET
