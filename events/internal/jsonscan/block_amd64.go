//go:build amd64 && !purego

package jsonscan

import "golang.org/x/sys/cpu"

// haveVector: the CPU has AVX2 (and the OS saves its registers), so
// classify64 is block_amd64.s's vector code. The purego build tag leaves it
// out for the portable word-at-a-time skipper of swar.go.
var haveVector = cpu.X86.HasAVX2

// classify64 classifies the 64 bytes at blk in AVX2 registers, two 32-byte
// halves (block_amd64.s): bit k of each mask is for blk[k]. bs flags the
// backslashes, stop the quotes and control bytes (below 0x20), odd the
// bytes that are not the second byte of a one-character escape (one of
// "\/bfnrt), high the bytes >= 0x80. classifyBytes is its specification.
//
//go:noescape
func classify64(blk *[64]byte) (bs, stop, odd, high uint64)

// plainBlocks is plainBlocksSpec (block.go) as one AVX2 loop
// (block_amd64.s): the blocks of a long string cost no call each.
//
//go:noescape
func plainBlocks(b []byte, i int, carry uint64) (j int, carryOut, seen, high, bs, stop, odd, blkHigh uint64)
