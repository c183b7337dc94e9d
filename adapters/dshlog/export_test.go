package dshlog

import (
	"io"

	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// ScanV0Parallel is the parallel read with its bounds given: workers,
// batches in flight, compressed bytes and frames per batch, and whether the
// workers parse ahead.
func ScanV0Parallel(r io.Reader, opts v0.Options, visit func(*v0.Record) error, workers, inFlight, bytes, frames int, parseAhead bool) (v0.Result, error) {
	return scanV0Parallel(r, opts, visit, parallelLimits{workers, inFlight, bytes, frames, parseAhead})
}

// ParallelReads is how many reads took the pipeline so far.
func ParallelReads() int64 { return parallelReads.Load() }

// BatchesInFlight, BatchBytes are the production bounds.
const BatchesInFlight, BatchBytes = batchesInFlight, batchBytes

// RecoverV1Max is RecoverV1 with a line limit (as Log.Load passes its own).
func RecoverV1Max(fsys vfs.FS, path string, maxLine int) (Recovery, error) {
	return recoverV1(fsys, path, maxLine, true)
}
