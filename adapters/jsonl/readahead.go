package jsonl

import (
	"runtime"

	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
)

// readAheadMin: a transcript at least this large is opened as an
// events.ReadAheader, so the Qwen decoder's reads run on a goroutine of
// their own while it parses (events/qwen/frame_ahead.go, ADR 0038).
// Smaller files gain nothing from the goroutine and the 1.5 MiB of buffers.
const readAheadMin = 8 << 20

// aheadFile is a regular file whose reads can run on a goroutine, one at a
// time: StartRead hands the goroutine a buffer, WaitRead takes its result.
// Reads of a regular file never block for long, so Close can wait for one
// in flight.
type aheadFile struct {
	vfs.File
	req     chan []byte
	resp    chan aheadResult
	started bool
	pending bool
}

type aheadResult struct {
	n   int
	err error
}

var _ events.ReadAheader = (*aheadFile)(nil)

// readAhead wraps f, a regular file, when it is large enough to gain from
// reading ahead and more than one goroutine can run at once.
func readAhead(f vfs.File) vfs.File {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < readAheadMin || runtime.GOMAXPROCS(0) < 2 {
		return f
	}
	return &aheadFile{File: f}
}

func (a *aheadFile) StartRead(p []byte) {
	if !a.started {
		a.req, a.resp, a.started = make(chan []byte), make(chan aheadResult, 1), true
		go func() {
			for p := range a.req {
				n, err := a.File.Read(p)
				a.resp <- aheadResult{n, err}
			}
		}()
	}
	a.req <- p
	a.pending = true
}

func (a *aheadFile) WaitRead() (int, error) {
	r := <-a.resp
	a.pending = false
	return r.n, r.err
}

// Close waits for a read in flight, ends the goroutine, and closes the file.
func (a *aheadFile) Close() error {
	if a.pending {
		a.WaitRead()
	}
	if a.started {
		close(a.req)
		a.started = false
	}
	return a.File.Close()
}
