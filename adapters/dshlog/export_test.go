package dshlog

import (
	"io"

	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// ScanV0Parallel is the parallel read with its bounds given: workers (0:
// the scanner's goroutine decodes every batch), batches in flight, what a
// batch gathers, and whether the workers parse ahead.
func ScanV0Parallel(r io.Reader, opts v0.Options, visit func(*v0.Record) error, workers, inFlight int, batch v0.BatchLimits, parseAhead bool) (v0.Result, error) {
	return scanV0Parallel(r, opts, visit, parallelLimits{workers: workers, inFlight: inFlight, batch: batch, parseAhead: parseAhead})
}

// ScanV0Held is the parallel read with one worker that runs hold before
// each batch it decodes, and the production batch bounds.
func ScanV0Held(r io.Reader, visit func(*v0.Record) error, hold func()) (v0.Result, error) {
	return scanV0Parallel(r, v0.Options{}, visit, parallelLimits{workers: 1, inFlight: batchesInFlight, batch: batchLimits, beforeDecode: hold})
}

// ScannerDecodes is how many batches the scanner's goroutine decoded so far.
func ScannerDecodes() int64 { return scannerDecodes.Load() }

// ParallelReads is how many reads took the pipeline so far.
func ParallelReads() int64 { return parallelReads.Load() }

// BatchesInFlight and Batch are the production bounds.
const BatchesInFlight = batchesInFlight

var Batch = batchLimits

// RecoverV1Max is RecoverV1 with a line limit (as Log.Load passes its own).
func RecoverV1Max(fsys vfs.FS, path string, maxLine int) (Recovery, error) {
	return recoverV1(fsys, path, maxLine, true)
}
