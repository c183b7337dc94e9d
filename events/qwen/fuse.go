package qwen

import (
	"bytes"

	"github.com/tailproof/tailproof/events"
)

// The fused line read (issue #16, ADR 0038's amendment of 2026-12-02).
// The framer's search for each line's newline read every byte a second
// time (17% of a dense 600 MB reconcile's CPU). A line Qwen writes is one
// compact JSON object and its newline, so the loader's framer can first
// parse the record where the line starts in its buffer (fuseLines): when the object
// ends and the next byte is '\n', that is the line, found without a
// search. Anything else takes today's path unchanged (IndexByte, then
// decodeLine), so lines, positions, errors and the torn-tail verdicts are
// the same bytes:
//
//   - a line that does not start with '{' (blank, leading space, a JSON
//     array, junk);
//   - a parse error, or the end of the buffered data before the object
//     ends (a line longer than the buffer, a torn tail, the end of data);
//   - '\n' or '\r' inside the object's whitespace: the scanner's oneLine
//     stops whitespace there, so the parse fails rather than cross a line
//     (strings cannot hold a raw newline: a control byte is invalid);
//   - anything but '\n' after the object ("\r\n", trailing space, a second
//     object on the line, data after it);
//   - a line over the limit (the old path refuses it, positioned, without
//     reading on).
//
// No '\n' lies inside a fused object (not in a string, not in its
// whitespace), so the byte after it is the line's first newline, and the
// line is exactly what decodeLine would parse: a piece with no '\r' and
// nothing to trim, that is one whole object.

// ends reports whether a newline was read at or after f.start: else the
// line runs past the data read so far, and parsing it where it lies would
// only be undone (14% of a dense 600 MB transcript's bytes lie in lines
// that cross a 256 KiB chunk; parsing them twice cost more than the search
// saved). Such a line is parsed where it lies after the fill that brings
// its newline. The backward search runs once per fill, from the end to the
// last newline and never below f.scan, so a long line is searched once.
func (f *framer) ends() bool {
	if f.lastNL == -2 {
		// [f.start, f.scan) holds no newline.
		f.lastNL = lastNewline(f.buf, f.scan, f.end)
	}
	return f.lastNL >= f.start
}

// lastNewline is the index of the last '\n' in b[lo:hi], or -1. It reads
// windows from the end with bytes.IndexByte (assembly): bytes.LastIndexByte
// is a byte loop, which cost more than the search the fused read saves.
func lastNewline(b []byte, lo, hi int) int {
	const window = 4 << 10
	for hi > lo {
		from := max(lo, hi-window)
		last := -1
		for i := from; ; {
			j := bytes.IndexByte(b[i:hi], '\n')
			if j < 0 {
				break
			}
			last, i = i+j, i+j+1
		}
		if last >= 0 {
			return last
		}
		hi = from
	}
	return -1
}

// fuseLines turns the fused read on for LoadChain and Scan. On: measured
// on 2026-12-02 it took 6%, 13% and 15% of the CPU of a 600 MB reconcile of
// the dense, ls and mixed shapes, with byte-identical output (ADR 0038,
// amendment of 2026-12-02). The path is tested against the old one either
// way (fuse_test.go).
const fuseLines = true

// fuseWith is the parser the loader's framer fuses with, or nil.
func fuseWith(p *recordParser) *recordParser {
	if !fuseLines {
		return nil
	}
	return p
}

// fused parses the line at f.start (see above) into f.fuse.res and returns
// it, or returns false leaving the framer as it was.
func (f *framer) fused() (events.Line, bool) {
	b := f.buf[f.start:f.end]
	if b[0] != '{' {
		return events.Line{}, false
	}
	p := f.fuse
	n := p.fuseLine(b)
	if n < 0 || n >= len(b) || b[n] != '\n' || n > f.max {
		return events.Line{}, false
	}
	p.fused = true
	l := events.Line{Bytes: b[:n], Pos: f.pos(), Terminated: true, Size: int64(n)}
	f.start = f.start + n + 1
	f.scan = f.start
	f.line++
	return l, true
}

// fuseLine parses the object opening b (b[0] is '{') into p.res as the
// line's only record, as decodeLine would for a line of just that object,
// and returns where the object ends, or -1 when it does not parse.
func (p *recordParser) fuseLine(b []byte) int {
	out := &p.res
	out.recs = out.recs[:0]
	p.esc = p.esc[:0]
	out.complete, out.detail = true, ""
	p.s.oneLine = true
	pr := p.objectAt(b, false, out)
	p.s.oneLine = false
	if pr == nil {
		return -1
	}
	pr.start = 0
	return pr.end
}

// decodeFused is decodeLine for a line the framer may have parsed already.
func (p *recordParser) decodeFused(b []byte) {
	if !p.fused {
		p.decodeLine(b, &p.res)
	}
}
