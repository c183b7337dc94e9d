//go:build amd64 && !purego

#include "textflag.h"

// Byte classes for classify64, each 32 bytes (one YMM register): the
// quote, the backslash and 0x1f broadcast, the low-nibble mask, and the two
// nibble tables of the simple escapes "\/bfnrt (see block_amd64.go).
DATA quote<>+0(SB)/8, $0x2222222222222222
DATA quote<>+8(SB)/8, $0x2222222222222222
DATA quote<>+16(SB)/8, $0x2222222222222222
DATA quote<>+24(SB)/8, $0x2222222222222222
GLOBL quote<>(SB), RODATA|NOPTR, $32

DATA bslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL bslash<>(SB), RODATA|NOPTR, $32

DATA ctlmax<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlmax<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlmax<>+16(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlmax<>+24(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL ctlmax<>(SB), RODATA|NOPTR, $32

DATA lownib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lownib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lownib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lownib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL lownib<>(SB), RODATA|NOPTR, $32

// By low nibble (byte k of each 16-byte lane for nibble k): 2 -> 0x0d,
// 4 -> 0x08, 6 -> 0x04, 0xc -> 0x02, 0xe -> 0x04, 0xf -> 0x01.
DATA lotab<>+0(SB)/8, $0x00040008000d0000
DATA lotab<>+8(SB)/8, $0x0104000200000000
DATA lotab<>+16(SB)/8, $0x00040008000d0000
DATA lotab<>+24(SB)/8, $0x0104000200000000
GLOBL lotab<>(SB), RODATA|NOPTR, $32

// By high nibble: 2 -> 0x01, 5 -> 0x02, 6 -> 0x04, 7 -> 0x08.
DATA hitab<>+0(SB)/8, $0x0804020000010000
DATA hitab<>+8(SB)/8, $0x0000000000000000
DATA hitab<>+16(SB)/8, $0x0804020000010000
DATA hitab<>+24(SB)/8, $0x0000000000000000
GLOBL hitab<>(SB), RODATA|NOPTR, $32

// The masks of the block in Y0 (bytes 0-31) and Y1 (32-63), bit k for
// byte k, each into a general register (clobbering Y3-Y8 and the
// scratch register named; plainBlocks keeps Y9). BSLASH needs the
// backslashes broadcast in Y10, STOPS the quotes in Y11 and 0x1f in Y12,
// ODDS the low-nibble mask in Y13 and the two nibble tables in Y14 and
// Y15 (CLASSES loads them all).

// MASK64 joins the byte masks of two YMM registers (bytes 0-31, 32-63)
// into 64 bits in dst.
#define MASK64(ya, yb, dst, t) \
	VPMOVMSKB ya, dst; \
	VPMOVMSKB yb, t; \
	SHLQ      $32, t; \
	ORQ       t, dst

#define HIGHS(dst, t) \
	MASK64(Y0, Y1, dst, t)

#define BSLASH(dst, t) \
	VPCMPEQB  Y10, Y0, Y3; \
	VPCMPEQB  Y10, Y1, Y4; \
	MASK64(Y3, Y4, dst, t)

// stop: v == '"' or min(v, 0x1f) == v.
#define STOPS(dst, t) \
	VPCMPEQB  Y11, Y0, Y3; \
	VPCMPEQB  Y11, Y1, Y4; \
	VPMINUB   Y12, Y0, Y6; \
	VPMINUB   Y12, Y1, Y7; \
	VPCMPEQB  Y6, Y0, Y6; \
	VPCMPEQB  Y7, Y1, Y7; \
	VPOR      Y6, Y3, Y3; \
	VPOR      Y7, Y4, Y4; \
	MASK64(Y3, Y4, dst, t)

// odd: lotab[v&0xf] & hitab[v>>4] == 0 (a byte >= 0x80 has a high
// nibble of 8 or more, whose entry is 0).
#define ODDS(dst, t) \
	VPAND     Y13, Y0, Y3; \
	VPAND     Y13, Y1, Y4; \
	VPSHUFB   Y3, Y14, Y3; \
	VPSHUFB   Y4, Y14, Y4; \
	VPSRLW    $4, Y0, Y7; \
	VPSRLW    $4, Y1, Y8; \
	VPAND     Y13, Y7, Y7; \
	VPAND     Y13, Y8, Y8; \
	VPSHUFB   Y7, Y15, Y7; \
	VPSHUFB   Y8, Y15, Y8; \
	VPAND     Y7, Y3, Y3; \
	VPAND     Y8, Y4, Y4; \
	VPXOR     Y5, Y5, Y5; \
	VPCMPEQB  Y5, Y3, Y3; \
	VPCMPEQB  Y5, Y4, Y4; \
	MASK64(Y3, Y4, dst, t)

#define CLASSES \
	VMOVDQU bslash<>(SB), Y10; \
	VMOVDQU quote<>(SB), Y11; \
	VMOVDQU ctlmax<>(SB), Y12; \
	VMOVDQU lownib<>(SB), Y13; \
	VMOVDQU lotab<>(SB), Y14; \
	VMOVDQU hitab<>(SB), Y15

// func classify64(blk *[64]byte) (bs, stop, odd, high uint64)
//
// Bit k of each mask is for blk[k]: bs the backslashes, stop the
// quotes and control bytes (< 0x20), odd the bytes that are not a simple
// escape's second byte ("\/bfnrt), high the bytes >= 0x80.
TEXT ·classify64(SB), NOSPLIT, $0-40
	MOVQ    blk+0(FP), SI
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	CLASSES
	HIGHS(AX, BX)
	MOVQ    AX, high+32(FP)
	BSLASH(AX, BX)
	MOVQ    AX, bs+8(FP)
	STOPS(AX, BX)
	MOVQ    AX, stop+16(FP)
	ODDS(AX, BX)
	MOVQ    AX, odd+24(FP)
	VZEROUPPER
	RET

// func plainBlocks(b []byte, i int, carry uint64) (j int, carryOut, seen, high, bs, stop, odd, blkHigh uint64)
//
// plainBlocksSpec (block.go) is its specification: from b[i], carry the
// escape carried in, it passes every 64-byte block that holds no stop
// (quote or control byte) outside an escape and no escaped odd byte,
// with EscapedBits's carries (computed here in general registers), and
// stops at the first other block (returning its masks, as classify64's,
// and the carry into it) or where fewer than 64 bytes are left (masks
// 0). seen is the OR of the passed blocks' backslash masks, high is not 0
// exactly when a passed byte is >= 0x80.
TEXT ·plainBlocks(SB), NOSPLIT, $0-104
	MOVQ  b_base+0(FP), SI
	MOVQ  b_len+8(FP), DX
	MOVQ  i+24(FP), CX
	MOVQ  carry+32(FP), R8
	XORQ  R9, R9
	CLASSES
	VPXOR Y9, Y9, Y9
	MOVQ  $0xAAAAAAAAAAAAAAAA, R13

loop:
	LEAQ    64(CX), AX
	CMPQ    AX, DX
	JHI     tail
	VMOVDQU (SI)(CX*1), Y0
	VMOVDQU 32(SI)(CX*1), Y1
	BSLASH(AX, BX)
	STOPS(BX, R10)

	// EscapedBits(bs = AX, carry = R8): R12 escaped, R11 next.
	MOVQ R8, R10
	NOTQ R10
	ANDQ AX, R10  // potential = bs &^ carry
	MOVQ R10, R11
	SHLQ $1, R11  // maybeEscaped
	ORQ  R13, R11
	SUBQ R10, R11
	XORQ R13, R11 // code
	MOVQ AX, R12
	ORQ  R8, R12
	XORQ R11, R12 // escaped = code ^ (bs | carry)
	ANDQ AX, R11
	SHRQ $63, R11 // next = (code & bs) >> 63

	// A stop no backslash escapes ends the run.
	MOVQ R12, R10
	NOTQ R10
	ANDQ BX, R10
	JNZ  stopped
	TESTQ R12, R12
	JNZ  escapes

plain:
	ORQ  AX, R9
	VPOR Y0, Y9, Y9
	VPOR Y1, Y9, Y9
	MOVQ R11, R8
	ADDQ $64, CX
	JMP  loop

escapes:
	// Escaped bytes and no stop: plain unless one is odd.
	ODDS(DI, R10)
	ANDQ R12, DI
	JZ   plain

stopped:
	ODDS(DI, R10)
	HIGHS(R10, R11)
	JMP done

tail:
	XORQ AX, AX
	XORQ BX, BX
	XORQ DI, DI
	XORQ R10, R10

done:
	MOVQ      CX, j+40(FP)
	MOVQ      R8, carryOut+48(FP)
	MOVQ      R9, seen+56(FP)
	VPMOVMSKB Y9, R11
	MOVQ      R11, high+64(FP)
	MOVQ      AX, bs+72(FP)
	MOVQ      BX, stop+80(FP)
	MOVQ      DI, odd+88(FP)
	MOVQ      R10, blkHigh+96(FP)
	VZEROUPPER
	RET
