//go:build !(goexperiment.simd && amd64)

package qwen

// haveBlockScan is false: without GOEXPERIMENT=simd (or off amd64) strings
// are skipped by the scalar scanner alone.
const haveBlockScan = false

func skipStringBlocks(b []byte, i int) (int, bool) { return 0, false }
