package dshlog

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// Bounds of the parallel v0 read: batches in flight (being read, decoded or
// applied), the compressed bytes and frames one batch gathers, and the most
// decoding workers. dsh writes a frame per 200 ms append batch, often a few
// hundred bytes, so a hand-over per frame would cost more than decoding it.
// A batch's memory is its compressed bytes and their plaintext (plus at
// most one frame of v0.Options.MaxFrameBytes beyond batchBytes), so a read
// holds at most batchesInFlight of them.
const (
	batchesInFlight = 6
	batchBytes      = 16 << 10
	batchFrames     = 256
	maxWorkers      = 4
)

// ScanV0 reads a dsh v0 log exactly as v0.Scan does — the same visits in the
// same order, the same Result, the same error at the same position — and,
// for a compressed log with more than one processor (GOMAXPROCS), as a
// pipeline: worker goroutines decompress batches of frames (checksums
// verified) while this goroutine parses and applies the plaintext strictly
// in file order (v0.ZstdScanner, on its compact path; ADR 0037). On two
// processors that is one decoder beside the parser, the split that halves
// the wall time when decoding and parsing cost about the same. Every
// goroutine it starts has stopped reading r when it returns. Its visits
// are v0.ScanRecords's: by pointer, the record valid only during the call
// and not to be modified, always on the caller's goroutine.
func ScanV0(r io.Reader, enc v0.Encoding, opts v0.Options, visit func(*v0.Record) error) (v0.Result, error) {
	workers := min(runtime.GOMAXPROCS(0)-1, maxWorkers)
	if enc == v0.Raw || workers < 1 {
		return v0.ScanRecords(r, enc, opts, visit)
	}
	return scanV0Parallel(r, opts, visit, parallelLimits{workers, batchesInFlight, batchBytes, batchFrames, false})
}

// parallelLimits are the bounds of one parallel read (tests shrink them to
// cross many batch boundaries on small logs). parseAhead has the workers
// parse each frame's lines too (v0.Batch.Decode with a parser), leaving the
// scanner only the in-order apply: ADR 0037's first parallel read, kept for
// machines with more cores than this one and not used by ScanV0, since on
// two cores it spent more CPU than it saved (ADR 0037, amended).
type parallelLimits struct {
	workers, inFlight, bytes, frames int
	parseAhead                       bool
}

// batch is one unit of work: filled by the splitter, decoded by a worker,
// applied by the scanner, then back to the pool.
type batch struct {
	b    v0.Batch
	done chan struct{} // one value once decoded
}

// parallelReads counts the reads that took the pipeline: the tests check
// that recovery takes it with two processors and not with one.
var parallelReads atomic.Int64

func scanV0Parallel(r io.Reader, opts v0.Options, visit func(*v0.Record) error, lim parallelLimits) (v0.Result, error) {
	parallelReads.Add(1)
	var (
		pool  = make(chan *batch, lim.inFlight)
		order = make(chan *batch, lim.inFlight) // file order, for the scanner
		work  = make(chan *batch, lim.inFlight) // any order, for the workers
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for range lim.inFlight {
		pool <- &batch{done: make(chan struct{}, 1)}
	}
	// send delivers j on c unless the read is being stopped.
	send := func(c chan *batch, j *batch) bool {
		select {
		case c <- j:
			return true
		case <-stop:
			return false
		}
	}
	wg.Add(1 + lim.workers)
	go func() { // the splitter: the only reader of r
		defer wg.Done()
		defer close(work)
		fr := v0.NewFrameReader(r, opts.MaxFrameBytes)
		for {
			var j *batch
			select {
			case j = <-pool:
			case <-stop:
				return
			}
			last := j.b.Read(fr, lim.bytes, lim.frames)
			if !send(order, j) || !send(work, j) || last {
				return
			}
		}
	}()
	for range lim.workers {
		go func() {
			defer wg.Done()
			d := v0.NewFrameDecoder(opts.MaxFrameBytes)
			defer d.Close()
			var p *v0.Parser
			if lim.parseAhead {
				p = new(v0.Parser)
			}
			for j := range work {
				j.b.Decode(d, p)
				j.done <- struct{}{} // never blocks: one value per use
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	z := v0.NewZstdScanner(opts, visit)
	for {
		j := <-order // the splitter sends until the last batch, which ends the read
		<-j.done
		done, err := z.Apply(&j.b)
		if done || err != nil {
			return z.Result(), err
		}
		pool <- j // never blocks: the pool has room for every batch
	}
}
