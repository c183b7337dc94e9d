package events

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"iter"
	"sync"
)

// DefaultMaxLineBytes bounds one physical line. A Qwen record holding a large
// tool output can run to megabytes; 64 MiB is far past anything a sane writer
// emits and still keeps a hostile file from exhausting memory.
const DefaultMaxLineBytes = 64 << 20

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// bigReaderPool serves the fused read of files of bigFile bytes or more. A
// line longer than the buffer is copied out of it piece by piece, and at
// each fill the part of the last line already read is moved to the
// buffer's front, about half a line per fill. With tool outputs of 100 KB
// to 500 KB held once or twice per line (a Claude Code tool result holds
// it twice), a 256 KiB buffer moved a large share of a session's bytes a
// second time (12% of the CPU of a fused Claude decode of the dense shape,
// against 2% of Qwen's framed one); 1 MiB holds such lines whole and moves
// a quarter as much. Only the fused read takes it: a framed line is read
// twice (the newline search, then the codec), and a chunk larger than the
// core's cache made the second read slower (Qwen's codec on dense: 1,710 /
// 1,724 / 1,982 MB per CPU-second with 256 KiB, 1,674 / 1,591 / 1,895 with
// 1 MiB, 1,458 / 1,679 / 1,464 with 4 MiB, load average 20), so its reader
// is unchanged.
var bigReaderPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

const bigFile = 4 << 20

// large reports whether r is known to hold at least bigFile bytes: an
// *os.File (or anything with Stat) of a regular file that size, or a
// reader that tells its Size (bytes.Reader, strings.Reader).
func large(r io.Reader) bool {
	switch v := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		st, err := v.Stat()
		return err == nil && st.Mode().IsRegular() && st.Size() >= bigFile
	case interface{ Size() int64 }:
		return v.Size() >= bigFile
	}
	return false
}

// Line is one physical line of a JSONL stream, without its newline.
// Bytes is only valid until the iteration advances: copy what you keep.
type Line struct {
	Bytes []byte
	Pos   Position
	// Terminated is false for a final segment that had no newline.
	Terminated bool
	// TooLong is set when the line exceeded the limit; Bytes is then empty.
	TooLong bool
	// Size is the line's length in bytes (without the newline), even when TooLong.
	Size int64
}

// Lines splits r into physical lines, streaming, with at most max bytes held
// for any one line (max <= 0 means DefaultMaxLineBytes). An I/O error from r is
// yielded once, after which the sequence ends.
func Lines(r io.Reader, max int) iter.Seq2[Line, error] {
	return lines(r, max, nil)
}

// fuser decodes the line that starts b where it lies in the reader's
// buffer (Decode's call of FusedCodec.DecodeFused): n is the index of the
// newline that ends it; ok false has the line framed and yielded as any
// other; stop ends the iteration (the consumer is done).
type fuser func(b []byte, pos Position, max int) (n int, ok, stop bool)

// lines is Lines, fusing the lines it can with fuse (nil: none). A fused
// line is read where it lies in the buffer, without the search for its
// newline; only when the buffer holds a newline at or after the line's
// start (lastNL), else the line runs past the buffered data and parsing
// it there would only be undone.
func lines(r io.Reader, max int, fuse fuser) iter.Seq2[Line, error] {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return func(yield func(Line, error) bool) {
		br, ok := r.(*bufio.Reader)
		if !ok || br.Size() < 64<<10 {
			// Pooled: a decision reads several small files, and allocating
			// and zeroing a fresh 256 KiB buffer for each dominated the cost
			// of reconciling a small session.
			pool := &readerPool
			if fuse != nil && large(r) {
				pool = &bigReaderPool
			}
			br = pool.Get().(*bufio.Reader)
			br.Reset(r)
			defer func() {
				br.Reset(nil)
				pool.Put(br)
			}()
		}
		var (
			acc    []byte
			offset int64
			line   = 1
			// seen is the offset up to which buffered data was searched
			// for its last newline, lastNL that newline's offset (-1: none).
			seen, lastNL int64 = 0, -1
		)
		for {
			if n := br.Buffered(); fuse != nil && n > 0 {
				buf, _ := br.Peek(n) // buffered: no read, no error
				if end := offset + int64(n); end > seen {
					from := int(max64(seen-offset, 0))
					if k := lastNewline(buf[from:]); k >= 0 {
						lastNL = offset + int64(from+k)
					}
					seen = end
				}
				if lastNL >= offset && buf[0] == '{' {
					m, ok, stop := fuse(buf, Position{Line: line, Offset: offset}, max)
					if stop {
						return
					}
					if ok {
						_, _ = br.Discard(m + 1)
						offset += int64(m + 1)
						line++
						continue
					}
				}
			}
			chunk, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				// A long line: accumulate up to max, then skip the rest.
				start := offset
				size := int64(len(chunk))
				tooLong := size > int64(max)
				if !tooLong {
					acc = appendCapped(acc[:0], chunk, max)
				}
				var rerr error
				terminated := false
				for {
					chunk, rerr = br.ReadSlice('\n')
					n := len(chunk)
					if rerr == nil {
						n-- // drop the newline
						terminated = true
					}
					size += int64(n)
					if !tooLong && size > int64(max) {
						// Over the limit: the line is skipped, and its
						// buffer (up to max) is let go at once rather
						// than held while the rest is read past.
						tooLong = true
						acc = nil
					}
					if !tooLong {
						acc = appendCapped(acc, chunk[:n], max)
					}
					if rerr != bufio.ErrBufferFull {
						break
					}
				}
				l := Line{Pos: Position{Line: line, Offset: start}, Terminated: terminated, TooLong: tooLong, Size: size}
				if !tooLong {
					l.Bytes = acc
				}
				if !yield(l, nil) {
					return
				}
				offset = start + size
				if terminated {
					offset++
				}
				line++
				if rerr != nil {
					if rerr != io.EOF {
						yield(Line{}, rerr)
					}
					return
				}
				continue
			}
			if err != nil && err != io.EOF {
				yield(Line{}, err)
				return
			}
			if len(chunk) == 0 && err == io.EOF {
				return
			}
			terminated := err == nil
			body := chunk
			if terminated {
				body = chunk[:len(chunk)-1]
			}
			l := Line{Bytes: body, Pos: Position{Line: line, Offset: offset}, Terminated: terminated, Size: int64(len(body))}
			if int64(len(body)) > int64(max) {
				l.Bytes, l.TooLong = nil, true
			}
			if !yield(l, nil) {
				return
			}
			offset += int64(len(chunk))
			line++
			if errors.Is(err, io.EOF) {
				return
			}
		}
	}
}

// appendCapped appends b to acc, growing it by doubling but never past
// limit bytes of capacity (append's own growth would reach 1.25× the
// limit), so that a line just under the limit costs at most the limit plus
// the half it grew from, and a line over it no more before it is dropped.
func appendCapped(acc, b []byte, limit int) []byte {
	if need := len(acc) + len(b); need > cap(acc) {
		c := max(2*cap(acc), need, 4096)
		if c > limit && need <= limit {
			c = limit
		}
		grown := make([]byte, len(acc), c)
		copy(grown, acc)
		acc = grown
	}
	return append(acc, b...)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// lastNewline is the index of the last '\n' in b, or -1. bytes.LastIndexByte
// reads a byte at a time; this searches windows from the end forward with
// bytes.IndexByte, which reads many at once, so finding a newline a long
// line back costs about what framing that line would.
func lastNewline(b []byte) int {
	const window = 4 << 10
	for hi := len(b); hi > 0; hi -= window {
		lo := hi - window
		if lo < 0 {
			lo = 0
		}
		at := -1
		for w := b[lo:hi]; ; {
			j := bytes.IndexByte(w, '\n')
			if j < 0 {
				break
			}
			at, w = hi-len(w)+j, w[j+1:]
		}
		if at >= 0 {
			return at
		}
	}
	return -1
}
