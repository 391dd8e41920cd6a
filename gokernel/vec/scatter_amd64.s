//go:build amd64 && !purego

#include "textflag.h"

// func scatter2Asm(acc, x *[2]float64, c *float64, ab *uint64, m int)
// m > 0; every endpoint of ab[:m] indexes acc and x. Entries are 16 bytes,
// both columns, updated with packed operations (unaligned loads: a slice of
// [2]float64 need not be 16-byte aligned).
TEXT ·scatter2Asm(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ m+32(FP), CX
	MOVQ ab+24(FP), BX
	XORQ AX, AX

loop:
	MOVQ    (BX)(AX*8), R8     // a | b<<32
	MOVL    R8, R9             // a
	SHRQ    $32, R8            // b
	SHLQ    $4, R8             // byte offset of entry b
	SHLQ    $4, R9             // byte offset of entry a
	MOVSD   (DX)(AX*8), X0
	MOVLHPS X0, X0             // c[f] in both lanes
	MOVUPD  (SI)(R8*1), X1
	MULPD   X0, X1
	MOVUPD  (DI)(R9*1), X2
	ADDPD   X2, X1
	MOVUPD  X1, (DI)(R9*1)     // acc_a += c·x_b
	MOVUPD  (SI)(R9*1), X3
	MULPD   X0, X3
	MOVUPD  (DI)(R8*1), X4
	ADDPD   X4, X3
	MOVUPD  X3, (DI)(R8*1)     // acc_b += c·x_a
	INCQ    AX
	CMPQ    AX, CX
	JLT     loop
	RET
