//go:build !amd64 || purego

package jsonscan

// haveVector is false off amd64 and under the purego build tag: String
// uses swar.go's word-at-a-time block skipper alone.
const haveVector = false

// classify64 is classifyBytes where there is no vector code; String never
// calls it (haveVector is false), the tests do, to hold vectorBlocks to the
// same checks on every architecture.
func classify64(blk *[64]byte) (bs, stop, odd, high uint64) { return classifyBytes(blk) }

// plainBlocks is plainBlocksSpec where there is no vector code (called by
// the tests only, as classify64).
func plainBlocks(b []byte, i int, carry uint64) (j int, carryOut, seen, high, bs, stop, odd, blkHigh uint64) {
	return plainBlocksSpec(b, i, carry)
}
