package v0

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// job is one step of reading a compressed log: a complete frame decoded
// (and, on the parallel path, its lines parsed), the salvaged prefix of a
// torn last frame, the end, or an error.
type job struct {
	index  int   // the frame's index
	offset int64 // the frame's byte offset
	size   int64 // bytes of the file read once this frame was split off
	torn   bool  // the file ends inside this frame; plain is its prefix
	err    error // io.EOF at the end

	comp  []byte // the compressed frame (parallel path: a copy)
	plain []byte

	// parsed: lines and recs hold ParseLine's answer for every complete
	// line of plain, so the scanner only applies them (ADR 0037).
	parsed bool
	lines  []parsedLine
	recs   []Record
	done   chan struct{} // one value when the job is ready
}

// parsedLine is one complete line of a job's plaintext: it ends at
// plain[end] (the newline), its records are recs[a:b], err is ParseLine's.
type parsedLine struct {
	end, a, b int
	err       error
}

// frameSource yields the frames of a log decoded, in order. Frames are
// independent Zstandard frames, so neither decoding nor parsing frame N+1
// needs frame N: with more than one processor a splitter goroutine cuts
// the file into frames and workers decode and parse them, several at once,
// while Scan applies the results strictly in order (seq checks, visits,
// recovery's decisions). What is read is the same either way; only when the
// work is done differs. With one processor it decodes inline.
type frameSource struct {
	fr    *FrameReader
	dec   *FrameDecoder // inline path
	cur   *job
	ended bool

	// parallel path
	pool, order, work chan *job
	stop              chan struct{}
	wg                sync.WaitGroup
}

// Bounds of the parallel path: jobs in flight (each holds one frame, its
// plaintext and its records), and the largest plaintext a worker parses
// ahead; a larger frame is parsed as it is applied, line by line, so memory
// stays bounded by a few frames as on the inline path.
const (
	jobsInFlight = 6
	preparseMax  = 4 << 20
	keepBuffer   = 1 << 20 // a job's buffers over this go back to the garbage collector
)

func newFrameSource(r io.Reader, maxFrame int) *frameSource {
	s := &frameSource{fr: NewFrameReader(r, maxFrame)}
	workers := min(runtime.GOMAXPROCS(0), 4)
	if workers < 2 {
		s.dec, s.cur = NewFrameDecoder(maxFrame), &job{}
		return s
	}
	s.pool, s.order, s.work = make(chan *job, jobsInFlight), make(chan *job, jobsInFlight), make(chan *job, jobsInFlight)
	s.stop = make(chan struct{})
	for range jobsInFlight {
		s.pool <- &job{done: make(chan struct{}, 1)}
	}
	s.wg.Add(1 + workers)
	go s.split()
	for range workers {
		go s.decode(NewFrameDecoder(maxFrame))
	}
	return s
}

// cut fills j with the next frame (or the end, or an error) from the file.
func (s *frameSource) cut(j *job, copyFrame bool) {
	f, err := s.fr.Next()
	j.index, j.offset, j.size, j.err, j.torn, j.parsed = f.Index, f.Offset, s.fr.Offset(), err, false, false
	j.comp = f.Bytes
	var torn *TornFrame
	if errors.As(err, &torn) {
		j.index, j.offset, j.torn, j.err, j.comp = torn.Index, torn.Offset, true, nil, torn.Bytes
	}
	if copyFrame {
		j.comp = append(j.comp[:0:0], j.comp...)
	}
}

// decodeJob decompresses j's frame (or the prefix of a torn one).
func decodeJob(d *FrameDecoder, j *job) {
	if j.torn {
		j.plain = append(j.plain[:0], d.DecodePrefix(&TornFrame{Index: j.index, Offset: j.offset, Bytes: j.comp})...)
		return
	}
	j.plain, j.err = d.Decode(j.plain[:0], Frame{Index: j.index, Offset: j.offset, Bytes: j.comp})
}

func (s *frameSource) split() {
	defer s.wg.Done()
	defer close(s.work)
	for {
		var j *job
		select {
		case j = <-s.pool:
		case <-s.stop:
			return
		}
		s.cut(j, true)
		select {
		case s.order <- j:
		case <-s.stop:
			return
		}
		last := j.err != nil || j.torn
		if j.err != nil {
			j.done <- struct{}{}
		} else {
			select {
			case s.work <- j:
			case <-s.stop:
				return
			}
		}
		if last {
			return
		}
	}
}

func (s *frameSource) decode(d *FrameDecoder) {
	defer s.wg.Done()
	defer d.Close()
	var p Parser
	for {
		var j *job
		select {
		case j = <-s.work:
		case <-s.stop:
			return
		}
		if j == nil {
			return // the splitter is done
		}
		decodeJob(d, j)
		if j.err == nil && !j.torn && j.index > 0 && len(j.plain) <= preparseMax {
			preparse(&p, j)
		}
		j.done <- struct{}{} // never blocks: one value per use of the job
	}
}

// preparse parses every complete line of j's plaintext, as the scanner's
// consume would (a line inside one frame is never cut for length).
func preparse(p *Parser, j *job) {
	j.lines, j.recs = j.lines[:0], j.recs[:0]
	for start := 0; ; {
		nl := bytes.IndexByte(j.plain[start:], '\n')
		if nl < 0 {
			break
		}
		pl := parsedLine{end: start + nl, a: len(j.recs)}
		j.recs, pl.err = p.ParseLine(j.recs, j.plain[start:pl.end])
		pl.b = len(j.recs)
		j.lines = append(j.lines, pl)
		start = pl.end + 1
	}
	j.parsed = true
}

// next returns the next job; it is valid until the next call. After a torn
// frame, an error or the end it returns a job with err io.EOF.
func (s *frameSource) next() *job {
	if s.ended {
		return &job{err: io.EOF, size: s.cur.size}
	}
	if s.order == nil {
		s.cut(s.cur, false)
		if s.cur.err == nil {
			decodeJob(s.dec, s.cur)
		}
	} else {
		if s.cur != nil {
			if cap(s.cur.plain) > keepBuffer || cap(s.cur.recs) > keepBuffer/int(unsafe.Sizeof(Record{})) {
				s.cur.plain, s.cur.recs, s.cur.lines = nil, nil, nil
			}
			s.pool <- s.cur // never blocks: the pool has room for every job
		}
		s.cur = <-s.order
		<-s.cur.done
	}
	s.ended = s.cur.err != nil || s.cur.torn
	return s.cur
}

// close stops the goroutines, waits until none reads the input any more,
// and releases the decoders.
func (s *frameSource) close() {
	if s.order == nil {
		s.dec.Close()
		return
	}
	close(s.stop)
	s.wg.Wait()
}

// writeJob feeds a job's plaintext to the scanner: the lines a worker
// parsed are applied as they are, unless the plaintext continues a line
// the previous frame left open (dsh never writes one, but a reader takes
// it), which is scanned as the inline path scans it.
func (s *lineScanner) writeJob(j *job) error {
	if !j.parsed || len(s.frag) > 0 || s.tooLong {
		return s.write(j.plain)
	}
	start := s.input
	s.input += int64(len(j.plain))
	prev := 0
	for _, pl := range j.lines {
		s.line++
		if err := s.apply(j.plain[prev:pl.end], start+int64(prev), start+int64(pl.end)+1, j.recs[pl.a:pl.b], pl.err); err != nil {
			return err
		}
		prev = pl.end + 1
	}
	if prev < len(j.plain) {
		s.addFrag(j.plain[prev:])
	}
	return nil
}
