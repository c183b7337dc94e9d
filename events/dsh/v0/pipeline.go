package v0

import (
	"errors"
	"io"
	"runtime"
)

// decoded is one step of reading a compressed log: a complete frame's
// plaintext, the salvaged prefix of a torn last frame, the end, or an error.
type decoded struct {
	index  int   // the frame's index
	offset int64 // the frame's byte offset
	plain  []byte
	torn   bool  // the file ends inside this frame; plain is its prefix
	size   int64 // bytes read so far
	err    error // io.EOF at the end
}

// frameSource yields the frames of a log decoded, in order. Frames are
// independent Zstandard frames, so decoding frame N+1 needs nothing from
// frame N: with more than one processor the source decodes ahead on its own
// goroutine while the caller parses (ADR 0037). The items and their
// plaintext are the same either way; only when the work is done differs.
type frameSource struct {
	fr   *FrameReader
	dec  *FrameDecoder
	done bool

	// pipelined: items arrive on out; plaintext buffers cycle through free;
	// stop ends the producer early and exited reports it has returned.
	out          chan decoded
	free         chan []byte
	stop, exited chan struct{}
	last         []byte // buffer of the item handed out last
	holding      bool   // last is the caller's, to go back to free
}

// pipelineDepth is how many decoded frames may wait for the parser: enough
// to ride out a frame that parses slowly. With the one being decoded and the
// one being parsed, a pipelined scan holds at most pipelineDepth+2 frames'
// plaintext (each at most MaxFrameBytes); a buffer over keepBuffer goes
// back to the garbage collector rather than the free list.
const (
	pipelineDepth = 2
	keepBuffer    = 1 << 20
)

func newFrameSource(r io.Reader, maxFrame int) *frameSource {
	s := &frameSource{fr: NewFrameReader(r, maxFrame), dec: NewFrameDecoder(maxFrame)}
	if runtime.GOMAXPROCS(0) > 1 {
		s.out = make(chan decoded, pipelineDepth)
		s.free = make(chan []byte, pipelineDepth+2)
		for range pipelineDepth + 2 {
			s.free <- nil
		}
		s.stop, s.exited = make(chan struct{}), make(chan struct{})
		go s.produce()
	}
	return s
}

// step reads and decodes the next frame into buf.
func (s *frameSource) step(buf []byte) decoded {
	f, err := s.fr.Next()
	d := decoded{index: f.Index, offset: f.Offset, size: s.fr.Offset(), err: err}
	var torn *TornFrame
	switch {
	case errors.As(err, &torn):
		d.index, d.offset, d.torn, d.err = torn.Index, torn.Offset, true, nil
		d.plain = append(buf[:0], s.dec.DecodePrefix(torn)...)
	case err == nil:
		d.plain, d.err = s.dec.Decode(buf[:0], f)
	}
	return d
}

func (s *frameSource) produce() {
	defer close(s.exited)
	for {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-s.stop:
			return
		}
		d := s.step(buf)
		select {
		case s.out <- d:
		case <-s.stop:
			return
		}
		if d.err != nil || d.torn {
			return
		}
	}
}

// next returns the next item; its plaintext is valid until the next call.
// After a torn frame, an error or the end it returns io.EOF.
func (s *frameSource) next() decoded {
	if s.done {
		return decoded{err: io.EOF, size: s.fr.Offset()}
	}
	var d decoded
	if s.out == nil {
		d = s.step(s.last)
	} else {
		if s.holding {
			if cap(s.last) > keepBuffer {
				s.last = nil
			}
			s.free <- s.last // never blocks: the free list has room for every buffer
		}
		d = <-s.out
		s.holding = true
	}
	s.last = d.plain
	s.done = d.err != nil || d.torn
	return d
}

// close stops the producer, waits until it no longer reads the input, and
// releases the decoder.
func (s *frameSource) close() {
	if s.out != nil {
		close(s.stop)
		<-s.exited
	}
	s.dec.Close()
}
