package v0

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// frame is one step of reading a compressed log, as the scanner sees it: a
// complete frame decoded (and, on the parallel path, its lines parsed), the
// salvaged prefix of a torn last frame, the end, or an error.
type frame struct {
	index  int   // the frame's index
	offset int64 // the frame's byte offset
	size   int64 // bytes of the file read once this frame was split off
	torn   bool  // the file ends inside this frame; plain is its prefix
	err    error // io.EOF at the end
	plain  []byte

	// parsed: lines hold ParseLine's answer for every complete line of
	// plain, their records in recs (ADR 0037).
	parsed bool
	lines  []parsedLine
	recs   []Record
}

// parsedLine is one complete line of a frame's plaintext: it ends at
// plain[end] (the newline), its records are recs[a:b], err is ParseLine's.
type parsedLine struct {
	end, a, b int
	err       error
}

// job is a batch of consecutive frames, the unit the goroutines hand over:
// dsh writes a frame per 200 ms append batch, often a few hundred bytes, and
// a hand-over per frame would cost more than decoding it.
type job struct {
	frames []frame
	spans  []frameSpan // per frame: its bytes in comp, plain, lines
	comp   []byte
	plain  []byte
	lines  []parsedLine
	recs   []Record
	done   chan struct{} // one value when the job is ready
}

// frameSpan is where a job keeps one frame: its bytes in comp and plain,
// its lines in lines.
type frameSpan struct{ comp, plain, lines [2]int }

// frameSource yields the frames of a log decoded, in order. Frames are
// independent Zstandard frames, so neither decoding nor parsing frame N+1
// needs frame N: with more than one processor a splitter goroutine cuts
// the file into batches of frames and workers decode and parse them,
// several at once, while Scan applies the results strictly in order (seq
// checks, visits, recovery's decisions). What is read is the same either
// way; only when the work is done differs. With one processor it decodes
// inline, a frame at a time.
type frameSource struct {
	fr    *FrameReader
	dec   *FrameDecoder // inline path
	cur   *job
	pos   int // next frame of cur
	ended bool
	last  frame

	// parallel path
	pool, order, work chan *job
	stop              chan struct{}
	wg                sync.WaitGroup
}

// Bounds of the parallel path: jobs in flight, the compressed bytes and
// frames a job gathers, and the largest plaintext a worker parses ahead
// (a larger frame is parsed as it is applied, line by line). Memory stays a
// few jobs; a job's buffers over keepBuffer go back to the garbage
// collector rather than the pool.
const (
	jobsInFlight = 6
	jobBytes     = 16 << 10
	jobFrames    = 256
	preparseMax  = 4 << 20
	keepBuffer   = 4 << 20
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

// fill appends frames from the file to j (at most one on the inline path)
// until it holds enough work or the file ends; it reports the end.
func (s *frameSource) fill(j *job, max int) (last bool) {
	j.frames, j.spans, j.comp = j.frames[:0], j.spans[:0], j.comp[:0]
	for len(j.frames) < max && len(j.comp) < jobBytes {
		f, err := s.fr.Next()
		fm := frame{index: f.Index, offset: f.Offset, size: s.fr.Offset(), err: err}
		b := f.Bytes
		var torn *TornFrame
		if errors.As(err, &torn) {
			fm.index, fm.offset, fm.torn, fm.err, b = torn.Index, torn.Offset, true, nil, torn.Bytes
		}
		c0 := len(j.comp)
		if max == 1 {
			j.comp = b // the inline path decodes it before the next read
		} else {
			j.comp = append(j.comp, b...)
		}
		j.frames = append(j.frames, fm)
		j.spans = append(j.spans, frameSpan{comp: [2]int{c0, len(j.comp)}})
		if fm.err != nil || fm.torn {
			return true
		}
	}
	return false
}

// decodeAll decodes every frame of j and, with p, parses the lines of those
// under preparseMax (never the header frame).
func (j *job) decodeAll(d *FrameDecoder, p *Parser) {
	j.plain, j.lines, j.recs = j.plain[:0], j.lines[:0], j.recs[:0]
	for k := range j.frames {
		f, sp := &j.frames[k], &j.spans[k]
		if f.err != nil {
			continue
		}
		comp := j.comp[sp.comp[0]:sp.comp[1]]
		p0 := len(j.plain)
		if f.torn {
			j.plain = append(j.plain, d.DecodePrefix(&TornFrame{Index: f.index, Offset: f.offset, Bytes: comp})...)
		} else {
			j.plain, f.err = d.Decode(j.plain, Frame{Index: f.index, Offset: f.offset, Bytes: comp})
		}
		sp.plain = [2]int{p0, len(j.plain)}
		l0 := len(j.lines)
		if p != nil && f.err == nil && !f.torn && f.index > 0 && len(j.plain)-p0 <= preparseMax {
			f.parsed = true
			j.preparse(p, j.plain[p0:])
		}
		sp.lines = [2]int{l0, len(j.lines)}
	}
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
		last := s.fill(j, jobFrames)
		for _, dest := range []chan *job{s.order, s.work} {
			select {
			case dest <- j:
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
		j.decodeAll(d, &p)
		j.done <- struct{}{} // never blocks: one value per use of the job
	}
}

// preparse parses every complete line of plain, as the scanner's consume
// would (a line inside one frame is never cut for length).
func (j *job) preparse(p *Parser, plain []byte) {
	for start := 0; ; {
		nl := bytes.IndexByte(plain[start:], '\n')
		if nl < 0 {
			return
		}
		pl := parsedLine{end: start + nl, a: len(j.recs)}
		j.recs, pl.err = p.ParseLine(j.recs, plain[start:pl.end])
		pl.b = len(j.recs)
		j.lines = append(j.lines, pl)
		start = pl.end + 1
	}
}

// next returns the next frame; its plaintext and records are valid until
// the next call. After a torn frame, an error or the end it returns the end
// (err io.EOF).
func (s *frameSource) next() *frame {
	if s.ended {
		s.last = frame{err: io.EOF, size: s.last.size}
		return &s.last
	}
	if s.order == nil {
		s.fill(s.cur, 1)
		s.cur.decodeAll(s.dec, nil)
		s.pos = 0
	} else if s.cur == nil || s.pos == len(s.cur.frames) {
		if s.cur != nil {
			if cap(s.cur.plain) > keepBuffer || cap(s.cur.recs) > keepBuffer/int(unsafe.Sizeof(Record{})) {
				s.cur.plain, s.cur.recs, s.cur.lines = nil, nil, nil
			}
			s.pool <- s.cur // never blocks: the pool has room for every job
		}
		s.cur, s.pos = <-s.order, 0
		<-s.cur.done
	}
	j, k := s.cur, s.pos
	s.pos++
	sp := j.spans[k]
	s.last = j.frames[k]
	s.last.plain = j.plain[sp.plain[0]:sp.plain[1]]
	s.last.lines, s.last.recs = j.lines[sp.lines[0]:sp.lines[1]], j.recs
	s.ended = s.last.err != nil || s.last.torn
	return &s.last
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

// writeFrame feeds a frame's plaintext to the scanner: the lines a worker
// parsed are applied as they are, unless the plaintext continues a line
// the previous frame left open (dsh never writes one, but a reader takes
// it), which is scanned as the inline path scans it.
func (s *lineScanner) writeFrame(j *frame) error {
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
