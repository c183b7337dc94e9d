package qwen

import (
	"io"

	"github.com/tailproof/tailproof/events"
)

// Reading ahead: when the transcript's reader is an events.ReadAheader
// (adapters/jsonl offers one for a large regular file and runs its reads
// on a goroutine), the framer asks for the next chunk before it parses
// the current one, so the read system calls (a third of a 600 MB
// reconcile's CPU once strings are scanned by blocks, ADR 0038) overlap
// the decoding instead of adding to its wall time. Memory stays bounded
// (two buffers of aheadRoom+aheadChunk bytes, plus a line's own buffer
// when a line is longer than aheadRoom), and the lines are the same bytes
// at the same positions as the synchronous framer's: only when the reads
// happen changes.
//
// Each buffer holds aheadRoom bytes of room, then the chunk read ahead.
// The partial line at the end of the buffer being parsed is copied into
// the room just before the next chunk (as fill's compaction copies it to
// the front), so lines stay contiguous; a partial line longer than the
// room goes to a buffer of its own, grown geometrically, until a line
// ends.

// The room covers a line of up to 512 KiB (the bench shapes' longest tool
// outputs run to 469 KB) without a buffer of its own; 256 KiB chunks keep
// the buffers in a core's cache (a 1 MiB chunk measured the same CPU and
// 7 MiB more peak RSS, the GC pacing on the larger live heap).
const (
	aheadRoom  = 512 << 10
	aheadChunk = 256 << 10
)

// ahead is the framer's reader ahead and its buffers.
type ahead struct {
	r    events.ReadAheader
	room int // bytes before each chunk
	size int // chunk size
	// filling: the buffer being read into (its chunk is filling[room:]);
	// idle: the other one, while the framer parses a line's own buffer.
	filling, idle []byte
	pending       bool
	own           bool // the framer's buf is a line's own buffer, not one of the two
	// spare is the last line's own buffer, kept for the next long line:
	// a transcript with one long line usually has more (the published
	// qwen-code package's files shape: 239 lines over 512 KiB in 600 MB),
	// and allocating each one's buffer afresh — zeroed, page-faulted in,
	// then garbage — cost 12% of that reconcile's CPU. At most one is
	// kept, of at most maxSpare bytes.
	spare []byte
}

// maxSpare bounds the long-line buffer kept for the next long line (a
// line of up to about 3.5 MiB fits it).
const maxSpare = 4 << 20

// startAhead makes f read through r, room and chunk bytes per buffer
// (aheadRoom and aheadChunk; the tests use small ones). Call it before the
// first next; release waits for the read in flight.
func (f *framer) startAhead(r events.ReadAheader, room, chunk int) {
	a := &ahead{r: r, room: room, size: chunk, filling: make([]byte, room+chunk)}
	f.release() // the pooled buffer is not used
	f.buf, f.ahead = make([]byte, room+chunk), a
	f.start, f.scan, f.end = room, room, room
	f.off = -int64(room)
	a.request()
}

func (a *ahead) request() {
	a.r.StartRead(a.filling[a.room:])
	a.pending = true
}

// wait returns the read in flight, asking again (as fill does) when a
// reader returns 0, nil.
func (a *ahead) wait() (int, error) {
	for range 100 {
		n, err := a.r.WaitRead()
		a.pending = false
		if n > 0 || err != nil {
			return n, err
		}
		a.request()
	}
	a.r.WaitRead()
	a.pending = false
	return 0, io.ErrNoProgress
}

// stop waits for the read in flight, so that no read runs into a buffer
// after the framer is done.
func (a *ahead) stop() {
	if a.pending {
		a.r.WaitRead()
		a.pending = false
	}
}

// fillAhead takes the chunk read ahead, moves the partial line in front
// of it, and asks for the next chunk.
func (f *framer) fillAhead() {
	a := f.ahead
	n, err := a.wait()
	data := a.filling[a.room : a.room+n]
	partial := f.end - f.start
	scanned := f.scan - f.start
	at := f.off + int64(f.end) // the file offset of the chunk's first byte
	if partial <= a.room {
		// The usual case: the partial line goes into the room before the
		// chunk, and the buffer just parsed is read into next.
		next := a.filling
		copy(next[a.room-partial:], f.buf[f.start:f.end])
		old := f.buf
		if a.own {
			if len(old) <= maxSpare {
				a.spare = old
			}
			old, a.idle, a.own = a.idle, nil, false
		}
		f.buf, a.filling = next, old
		f.start = a.room - partial
		f.end = a.room + n
		f.off = at - int64(a.room)
	} else {
		// A line longer than the room: its own buffer, grown
		// geometrically (never past the line limit and a chunk).
		if !a.own {
			a.idle = f.buf
		}
		if a.own && len(f.buf) >= partial+n {
			if len(f.buf)-f.end < n {
				k := copy(f.buf, f.buf[f.start:f.end])
				f.off += int64(f.start)
				f.start, f.end = 0, k
			}
		} else {
			size := min(max(2*len(f.buf), partial+n), f.max+1+a.size)
			grown := a.spare
			if len(grown) < size {
				grown = make([]byte, size)
			}
			a.spare = nil
			k := copy(grown, f.buf[f.start:f.end])
			f.off += int64(f.start)
			f.buf, f.start, f.end = grown, 0, k
		}
		a.own = true
		f.end += copy(f.buf[f.end:], data)
	}
	f.scan = f.start + scanned
	if err != nil {
		f.err = err
		return
	}
	a.request()
}
