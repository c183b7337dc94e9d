package dshlog

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// Bounds of the parallel v0 read: batches in flight (being read, decoded or
// applied), what one batch gathers, and the most decoding workers. dsh
// writes a frame per 200 ms append batch, often a few hundred bytes, so a
// hand-over per frame would cost more than decoding it; but a batch whose
// plaintext outgrows the cache is parsed from memory (at 64 KiB of
// compressed bytes a pass cost half as much CPU again as inline), so a
// batch stops at 64 KiB of plaintext as its frames declare it, or 16 KiB
// compressed, or 256 frames (ADR 0037, amended by dsh). A batch's memory is
// its compressed bytes and their plaintext (plus at most one frame of
// v0.Options.MaxFrameBytes beyond the bounds), so a read holds at most
// batchesInFlight of them.
const (
	batchesInFlight = 6
	maxWorkers      = 4
)

var batchLimits = v0.BatchLimits{Compressed: 16 << 10, Plain: 64 << 10, Frames: 256}

// ScanV0 reads a dsh v0 log exactly as v0.Scan does — the same visits in the
// same order, the same Result, the same error at the same position — and,
// for a compressed log with more than one processor (GOMAXPROCS), as a
// pipeline: a splitter goroutine cuts the file into batches of frames,
// GOMAXPROCS − 1 workers (at most 4) decompress them (checksums verified),
// and this goroutine parses and applies the plaintext strictly in file
// order (v0.ZstdScanner, on its compact path; ADR 0037). Decoding costs
// more than parsing on every shape measured, so while a worker decodes the
// batch this goroutine needs next, it decodes a later one no worker has
// taken rather than wait: on two processors both then decode and the
// parse is spread over them, where a parser that only waited left one
// worker the whole decode. Every goroutine it starts has stopped reading r
// when it returns. Its visits are v0.ScanRecords's: by pointer, the record
// valid only during the call and not to be modified, always on the
// caller's goroutine.
func ScanV0(r io.Reader, enc v0.Encoding, opts v0.Options, visit func(*v0.Record) error) (v0.Result, error) {
	workers := min(runtime.GOMAXPROCS(0)-1, maxWorkers)
	if enc == v0.Raw || workers < 1 {
		return v0.ScanRecords(r, enc, opts, visit)
	}
	return scanV0Parallel(r, opts, visit, parallelLimits{workers: workers, inFlight: batchesInFlight, batch: batchLimits})
}

// parallelLimits are the bounds of one parallel read (tests shrink them to
// cross many batch boundaries on small logs; with no workers this
// goroutine decodes every batch). parseAhead has the workers
// parse each frame's lines too (v0.Batch.Decode with a parser), leaving the
// scanner only the in-order apply: ADR 0037's first parallel read, kept for
// machines with more cores than this one and not used by ScanV0, since on
// two cores it spent more CPU than it saved (ADR 0037, amended).
type parallelLimits struct {
	workers, inFlight int
	batch             v0.BatchLimits
	parseAhead        bool
	// beforeDecode, when set (tests), runs on a worker before each batch
	// it decodes.
	beforeDecode func()
}

// batch is one unit of work: filled by the splitter, decoded by a worker or
// by the scanner's goroutine, applied by the scanner, then back to the pool.
type batch struct {
	b v0.Batch
	// claimed is set by whoever decodes the batch: a worker, or the
	// scanner's goroutine when no worker took it yet; the splitter clears
	// it once the batch is filled.
	claimed atomic.Bool
	done    chan struct{} // one value once a worker decoded it
	decoded bool          // the scanner's: decoded, by it or a worker
}

// claim reports whether the caller is the one to decode j.
func (j *batch) claim() bool { return j.claimed.CompareAndSwap(false, true) }

// parallelReads counts the reads that took the pipeline: the tests check
// that recovery takes it with two processors and not with one.
var parallelReads atomic.Int64

// scannerDecodes counts the batches the scanner's goroutine decoded itself.
var scannerDecodes atomic.Int64

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
		j := &batch{done: make(chan struct{}, 1)}
		j.claimed.Store(true) // until the splitter fills it
		pool <- j
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
			last := j.b.Read(fr, lim.batch)
			j.claimed.Store(false)
			if !send(order, j) || lim.workers > 0 && !send(work, j) || last {
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
				if !j.claim() {
					// The scanner decoded it itself, and may have
					// reused it since: only a claim touches a batch.
					continue
				}
				if lim.beforeDecode != nil {
					lim.beforeDecode()
				}
				j.b.Decode(d, p)
				j.done <- struct{}{} // never blocks: one value per claim
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
	var own *v0.FrameDecoder // the scanner's, made when it first decodes
	var ownParser *v0.Parser
	if lim.parseAhead {
		ownParser = new(v0.Parser)
	}
	defer func() {
		if own != nil {
			own.Close()
		}
	}()
	decode := func(j *batch) {
		if own == nil {
			own = v0.NewFrameDecoder(opts.MaxFrameBytes)
		}
		j.b.Decode(own, ownParser)
		j.decoded = true
		scannerDecodes.Add(1)
	}
	// pending are the batches received from order and not yet applied, in
	// file order. While a worker decodes the first, this goroutine decodes
	// a later one no worker has taken, rather than wait: with one worker
	// on two processors, decoding costs more than parsing on every shape
	// measured, so a scanner that only waited left the worker the whole
	// decode (ADR 0037, amended by dsh).
	var pending []*batch
	for {
		if len(pending) == 0 {
			pending = append(pending, <-order) // the splitter sends until the last batch, which ends the read
		}
		j := pending[0]
		if !j.decoded && j.claim() {
			decode(j)
		}
		for !j.decoded {
			var spare *batch
			for _, k := range pending[1:] {
				if !k.decoded && k.claim() {
					spare = k
					break
				}
			}
			if spare != nil {
				decode(spare)
				continue
			}
			select {
			case <-j.done:
				j.decoded = true
			case k := <-order:
				pending = append(pending, k)
			}
		}
		pending = pending[1:]
		done, err := z.Apply(&j.b)
		if done || err != nil {
			return z.Result(), err
		}
		j.decoded = false
		pool <- j // never blocks: the pool has room for every batch
	}
}
