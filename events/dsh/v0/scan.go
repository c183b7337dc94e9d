package v0

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tailproof/tailproof/events"
)

// Encoding is a log's physical encoding.
type Encoding uint8

const (
	// Zstd: session.jsonl.zstd, a concatenation of checksummed Zstandard
	// frames (the default of dsh-session-persistence-jsonl 0.1.0-rc.8).
	Zstd Encoding = iota
	// Raw: session.jsonl (compression: 'none'), newline-delimited UTF-8.
	Raw
)

func (e Encoding) String() string {
	if e == Raw {
		return "none"
	}
	return "zstd"
}

// Options bound a scan.
type Options struct {
	// MaxLineBytes bounds one logical line (<= 0: events.DefaultMaxLineBytes).
	// A longer line is unparsable, never an allocation of its size.
	MaxLineBytes int
	// MaxFrameBytes bounds one frame, compressed and decompressed (<= 0:
	// DefaultMaxFrameBytes).
	MaxFrameBytes int
}

// Result is what scanning a log found: the preserved prefix and, when the
// file ends in a torn record or frame, where a repair cuts and what it keeps
// from the cut part.
type Result struct {
	Header Header
	// Events is the number of preserved events (seq 0..Events-1).
	Events int64
	// Size is the number of bytes read.
	Size int64
	// Cut is where a repair truncates the file (dsh's tornMarker.truncateTo),
	// or -1 when nothing follows the preserved prefix.
	Cut int64
	// Salvaged are the complete storage lines decoded from a torn last zstd
	// frame, in order, each with its newline: the records dsh re-appends
	// after cutting the frame away. Their events are among Events.
	Salvaged []byte
	// SalvagedEvents is how many events Salvaged holds.
	SalvagedEvents int64
	// Frames is the number of complete frames (zstd only).
	Frames int
}

// Scan reads one v0 log in enc, streaming, calling visit for each preserved
// event in order (the records are valid only during the call), and returns
// what it found. It mirrors dsh-session-persistence-jsonl 0.1.0-rc.8's
// readPrefix: scanLog for raw files, readZstdPrefix for compressed ones.
//
// Errors: a header problem, any defect inside a complete frame, or a defect
// at or before a later turn/end wraps events.ErrCorrupt (or
// ErrUnsupportedVersion, or ErrFrameTooLarge), naming the frame, its byte
// offset and the line; nothing in a torn tail is an error.
func Scan(r io.Reader, enc Encoding, opts Options, visit func(Record) error) (Result, error) {
	return scan(r, enc, opts, byValue(visit), false)
}

// ScanRecords is Scan visiting each event by pointer, which saves copying
// a 184-byte Record for every event (a quarter of a packed row member's
// CPU time, ADR 0037 as amended 2026-12-02 by dshcpu). The record and
// every byte it refers to are the scanner's: valid only during the call
// and not to be modified (the scanner reuses a record's fields for the
// next row member); a visitor that keeps a record keeps r.Clone().
func ScanRecords(r io.Reader, enc Encoding, opts Options, visit func(*Record) error) (Result, error) {
	return scan(r, enc, opts, visit, false)
}

// byValue adapts Scan's visitor to the scanner's: the copy is the
// visitor's own, as Scan has always given it.
func byValue(visit func(Record) error) func(*Record) error {
	return func(r *Record) error { return visit(*r) }
}

// scan is ScanRecords; lineByLine turns the scanner's compact path off, for
// the tests that compare the two.
func scan(r io.Reader, enc Encoding, opts Options, visit func(*Record) error, lineByLine bool) (Result, error) {
	if enc == Raw {
		return scanRaw(r, opts, visit, lineByLine)
	}
	return scanZstd(r, opts, visit, lineByLine)
}

// lineScanner is dsh's SessionLogScanner: it consumes plaintext in chunks,
// decodes each complete line, extends the contiguous prefix while every
// event's seq equals its index, and after the first bad line (the issue)
// keeps reading only to see whether a later line is a turn/end — which makes
// the issue corruption.
type lineScanner struct {
	visit    func(*Record) error
	maxLine  int
	n        int64 // preserved events
	line     int   // event lines consumed (1-based after the header)
	input    int64 // plaintext bytes consumed after the header
	commit   int64 // plaintext end of the last preserved line
	issue    error
	frag     []byte
	tooLong  bool
	recs     []Record
	parser   Parser
	want     wantSeq                      // the seq chunkRun expects next
	where    func(lineStart int64) string // position of a line, for messages
	salvage  bool
	salvaged []byte
	salvN    int64
	// lineByLine turns the compact path off (fast): tests compare the two.
	lineByLine bool
	// slot are the records the compact path visits (chunkRun, fast): two,
	// one written while the other is visited; kept here, since a pointer
	// passed to the visitor would move a local pair to the heap each call.
	slot [2]Record
}

// fast is the compact path of write (ADR 0037, amended): it parses the line
// that starts chunk where it lies, so the newline is found where the line's
// JSON ends rather than by a search first, and visits a packed row's
// members one at a time rather than expanding them into a slice first. It
// returns the bytes consumed (the line and its newline), or 0 when the
// compact path declines or the line does not end in chunk: write then takes
// the line as before, and decides everything the compact path does not.
func (s *lineScanner) fast(chunk []byte, start int64) (int, error) {
	recs, end, row := s.parser.fastAt(s.recs[:0], chunk)
	s.recs = recs
	if end < 0 || end >= len(chunk) || chunk[end] != '\n' {
		return 0, nil
	}
	line, lineEnd := chunk[:end], start+int64(end)+1
	s.line++
	count := int64(1)
	if !row {
		r := &recs[0]
		if s.issue != nil || r.Seq != float64(s.n) {
			return end + 1, s.apply(line, start, lineEnd, recs, nil)
		}
		if err := s.visit(r); err != nil {
			return end + 1, err
		}
		s.n++
	} else {
		rr := &s.parser.row
		if s.issue != nil || rr.seq0 != float64(s.n) {
			s.recs = rr.expand(s.recs[:0])
			return end + 1, s.apply(line, start, lineEnd, s.recs, nil)
		}
		// Two records, one written while the other is visited: see
		// chunkRun. The member is the parser's, valid for the call.
		slot := &s.slot
		slot[0] = Record{Type: TypeAssistantChunk, HasType: true, member: rr.m, Seq: rr.seq0, Time: rr.time0, raw: rr.payload[0]}
		slot[1] = slot[0]
		for k := range rr.payload {
			cur, next := &slot[k&1], &slot[(k+1)&1]
			if k+1 < len(rr.payload) {
				next.Seq, next.Time, next.raw = cur.Seq+1, cur.Time+rr.gaps[k], rr.payload[k+1]
			}
			if err := s.visit(cur); err != nil {
				return end + 1, err
			}
		}
		count = int64(len(rr.payload))
		s.n += count
	}
	s.committed(line, lineEnd, count)
	return end + 1, nil
}

// chunkRun takes the run of lines at the start of chunk that chunkLine
// matches (the commonest line, an assistant/chunk without optional
// members), each in seq and ending in chunk: the bytes consumed, 0 when
// the first line is not one (fast then takes it, and decides the rest).
//
// It parses each line before visiting the one before it, into the other of
// two records. Scan's visit by value copies the 184-byte Record; copying
// one whose fields were stored a moment before stalls the processor (the
// copy's 16-byte loads cannot take the 8-byte stores still in flight); a
// ScanRecords visitor reads fewer of them, but the same holds. Parsing is
// pure, so the order of parses and visits changes nothing a visitor can
// see: the same records, the same stop at a visit's error.
func (s *lineScanner) chunkRun(chunk []byte, start int64) (int, error) {
	if s.issue != nil {
		return 0, nil
	}
	slot := &s.slot
	slot[0] = Record{Type: TypeAssistantChunk, HasType: true}
	slot[1] = slot[0]
	cur := &slot[0]
	var end int
	s.want.set(s.n)
	cur.Seq, cur.Time, cur.Data, end = s.parser.chunkLine(chunk, &s.want)
	if end < 0 || end >= len(chunk) || chunk[end] != '\n' {
		return 0, nil
	}
	cur.raw = chunk[:end]
	done := 0
	for k := 1; cur.Seq == float64(s.n); k++ {
		lineEnd := done + end + 1
		next := &slot[k&1]
		rest := chunk[lineEnd:]
		var nextEnd int
		s.want.set(s.n + 1)
		next.Seq, next.Time, next.Data, nextEnd = s.parser.chunkLine(rest, &s.want)
		s.line++
		if err := s.visit(cur); err != nil {
			return lineEnd, err
		}
		s.n++
		s.committed(cur.raw, start+int64(lineEnd), 1)
		done = lineEnd
		if nextEnd < 0 || nextEnd >= len(rest) || rest[nextEnd] != '\n' {
			break
		}
		next.raw, cur, end = rest[:nextEnd], next, nextEnd
	}
	return done, nil
}

// committed records a line of count events visited on the compact path.
func (s *lineScanner) committed(line []byte, lineEnd int64, count int64) {
	s.commit = lineEnd
	if s.salvage {
		s.salvaged = append(append(s.salvaged, line...), '\n')
		s.salvN += count
	}
}

func (s *lineScanner) write(chunk []byte) error {
	start := s.input
	s.input += int64(len(chunk))
	for len(chunk) > 0 {
		if len(s.frag) == 0 && !s.tooLong && !s.lineByLine {
			n, err := s.chunkRun(chunk, start)
			if err != nil {
				return err
			}
			if n > 0 {
				start, chunk = start+int64(n), chunk[n:]
				continue
			}
			n, err = s.fast(chunk, start)
			if err != nil {
				return err
			}
			if n > 0 {
				start, chunk = start+int64(n), chunk[n:]
				continue
			}
		}
		nl := bytes.IndexByte(chunk, '\n')
		if nl < 0 {
			s.addFrag(chunk)
			return nil
		}
		line := chunk[:nl]
		end := start + int64(nl) + 1
		if len(s.frag) > 0 || s.tooLong {
			s.addFrag(line)
			line = s.frag
		}
		err := s.consume(line, end-int64(len(line))-1, end)
		s.frag, s.tooLong = s.frag[:0], false
		if err != nil {
			return err
		}
		start, chunk = end, chunk[nl+1:]
	}
	return nil
}

func (s *lineScanner) addFrag(b []byte) {
	if s.tooLong {
		return
	}
	if len(s.frag)+len(b) > s.maxLine {
		s.tooLong, s.frag = true, s.frag[:0]
		return
	}
	s.frag = append(s.frag, b...)
}

func (s *lineScanner) consume(line []byte, lineStart, end int64) error {
	s.line++
	var err error
	if s.tooLong {
		err = fmt.Errorf("line exceeds %d bytes: %w", s.maxLine, events.ErrLineTooLong)
	} else {
		s.recs, err = s.parser.ParseLine(s.recs[:0], line)
	}
	return s.apply(line, lineStart, end, s.recs, err)
}

// apply is the in-order rest of consume for a line already parsed into
// recs (or err): by consume, or ahead of time by Batch.Decode.
func (s *lineScanner) apply(line []byte, lineStart, end int64, recs []Record, err error) error {
	if errors.Is(err, ErrNullRecord) {
		return fmt.Errorf("v0: %s: %w: a null storage record", s.where(lineStart), events.ErrCorrupt)
	}
	if err != nil {
		if s.issue == nil {
			s.issue = fmt.Errorf("v0: %s: %w: unparsable committed event (event line %d): %v", s.where(lineStart), events.ErrCorrupt, s.line, err)
		}
		return nil
	}
	hasEnd, gap := false, -1
	for k := range recs { // by index: a Record is too large to copy
		r := &recs[k]
		hasEnd = hasEnd || r.HasType && r.Type == TypeTurnEnd
		if gap < 0 && r.Seq != float64(s.n+int64(k)) {
			gap = k
		}
	}
	if s.issue != nil || gap >= 0 {
		// Past the first bad line, or this is it: only a later turn/end
		// matters now, and it makes the issue corruption.
		if s.issue == nil {
			s.issue = fmt.Errorf("v0: %s: %w: seq gap in committed region (event line %d: expected %d, got %s)", s.where(lineStart), events.ErrCorrupt, s.line, s.n+int64(gap), seqText(recs[gap]))
		}
		if hasEnd {
			return s.issue
		}
		return nil
	}
	for k := range recs {
		if err := s.visit(&recs[k]); err != nil {
			return err
		}
	}
	s.n += int64(len(recs))
	s.commit = end
	if s.salvage {
		s.salvaged = append(append(s.salvaged, line...), '\n')
		s.salvN += int64(len(recs))
	}
	return nil
}

func seqText(r Record) string {
	if r.Seq != r.Seq {
		return "undefined"
	}
	return fmt.Sprint(r.Seq)
}

func scanRaw(r io.Reader, opts Options, visit func(*Record) error, lineByLine bool) (Result, error) {
	res := Result{Cut: -1}
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = events.DefaultMaxLineBytes
	}
	var header []byte
	buf := make([]byte, 64<<10)
	var hdrLen int64
	s := &lineScanner{visit: visit, maxLine: maxLine, lineByLine: lineByLine}
	s.where = func(at int64) string { return fmt.Sprintf("line %d, offset %d", s.line+1, hdrLen+at) }
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		res.Size += int64(n)
		if hdrLen == 0 && n > 0 {
			nl := bytes.IndexByte(chunk, '\n')
			if nl < 0 {
				if len(header)+n > maxLine {
					return res, fmt.Errorf("v0: line 1: %w: header line exceeds %d bytes", events.ErrCorrupt, maxLine)
				}
				header = append(header, chunk...)
				chunk = nil
			} else {
				header = append(header, chunk[:nl]...)
				hdrLen = int64(len(header)) + 1
				h, herr := ParseHeader(header)
				if herr != nil {
					return res, fmt.Errorf("%w (line 1)", herr)
				}
				res.Header = h
				chunk = chunk[nl+1:]
			}
		}
		if hdrLen > 0 && len(chunk) > 0 {
			if werr := s.write(chunk); werr != nil {
				return res, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, fmt.Errorf("v0: read: %w", err)
		}
	}
	if hdrLen == 0 {
		return res, fmt.Errorf("v0: %w: empty or header-less session log", events.ErrCorrupt)
	}
	res.Events = s.n
	if end := hdrLen + s.commit; end < res.Size {
		res.Cut = end
	}
	return res, nil
}

func scanZstd(r io.Reader, opts Options, visit func(*Record) error, lineByLine bool) (Result, error) {
	fr := NewFrameReader(r, opts.MaxFrameBytes)
	dec := NewFrameDecoder(opts.MaxFrameBytes)
	defer dec.Close()
	z := NewZstdScanner(opts, visit)
	z.s.lineByLine = lineByLine
	var b Batch
	for {
		b.ReadOne(fr)
		b.Decode(dec, nil)
		if done, err := z.Apply(&b); done || err != nil {
			return z.Result(), err
		}
	}
}
