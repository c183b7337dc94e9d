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

// func classify64(blk *[64]byte) (bs, stop, odd, high uint64)
//
// Bit k of each mask is for blk[k]: bs the backslashes, stop the
// quotes and control bytes (< 0x20), odd the bytes that are not a simple
// escape's second byte ("\/bfnrt), high the bytes >= 0x80.
TEXT ·classify64(SB), NOSPLIT, $0-40
	MOVQ    blk+0(FP), SI
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1

	// high: the sign bits themselves.
	VPMOVMSKB Y0, AX
	VPMOVMSKB Y1, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, high+32(FP)

	// bs
	VMOVDQU   bslash<>(SB), Y2
	VPCMPEQB  Y2, Y0, Y3
	VPCMPEQB  Y2, Y1, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, bs+8(FP)

	// stop: v == '"' or min(v, 0x1f) == v.
	VMOVDQU   quote<>(SB), Y2
	VMOVDQU   ctlmax<>(SB), Y5
	VPCMPEQB  Y2, Y0, Y3
	VPCMPEQB  Y2, Y1, Y4
	VPMINUB   Y5, Y0, Y6
	VPMINUB   Y5, Y1, Y7
	VPCMPEQB  Y6, Y0, Y6
	VPCMPEQB  Y7, Y1, Y7
	VPOR      Y6, Y3, Y3
	VPOR      Y7, Y4, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, stop+16(FP)

	// odd: lotab[v&0xf] & hitab[v>>4] == 0 (a byte >= 0x80 has a high
	// nibble of 8 or more, whose entry is 0).
	VMOVDQU   lownib<>(SB), Y2
	VMOVDQU   lotab<>(SB), Y5
	VMOVDQU   hitab<>(SB), Y6
	VPAND     Y2, Y0, Y3
	VPAND     Y2, Y1, Y4
	VPSHUFB   Y3, Y5, Y3
	VPSHUFB   Y4, Y5, Y4
	VPSRLW    $4, Y0, Y7
	VPSRLW    $4, Y1, Y8
	VPAND     Y2, Y7, Y7
	VPAND     Y2, Y8, Y8
	VPSHUFB   Y7, Y6, Y7
	VPSHUFB   Y8, Y6, Y8
	VPAND     Y7, Y3, Y3
	VPAND     Y8, Y4, Y4
	VPXOR     Y9, Y9, Y9
	VPCMPEQB  Y9, Y3, Y3
	VPCMPEQB  Y9, Y4, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, odd+24(FP)

	VZEROUPPER
	RET
