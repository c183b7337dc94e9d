package v0

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tailproof/tailproof/events"
)

// A compressed log is read in two steps that this file keeps apart, so that
// an adapter may run the first on several goroutines (the core starts none,
// ADR 0013): Batch.Read splits frames off the file and Batch.Decode
// decompresses them and parses their lines — neither touches anything but
// the batch, the decoder and the parser it is given — and ZstdScanner.Apply
// takes the batches strictly in file order and does everything that depends
// on what came before: the header, seq contiguity, the first issue, the
// torn tail, the visits (ADR 0037). Scan runs both inline, a frame at a
// time; adapters/dshlog.ScanV0 runs Decode on workers.

// preparseMax is the largest frame plaintext Decode parses ahead; a larger
// frame is parsed line by line as it is applied, so a batch never holds the
// records of a huge frame twice.
const preparseMax = 4 << 20

// Batch is a run of consecutive frames of a compressed log: their bytes,
// once decoded their plaintext, and once parsed the records of every
// complete line of each frame. A zero Batch is ready for Read; one Batch is
// reused from read to read.
type Batch struct {
	frames []batchFrame
	comp   []byte
	plain  []byte
	lines  []parsedLine
	recs   []Record
}

// batchFrame is one step of the read as the scanner sees it: a complete
// frame, the torn last frame (plain is its salvageable prefix), the end
// (err io.EOF), or an error (a structural one from the frame reader, or a
// checksum or decompression failure from Decode).
type batchFrame struct {
	index              int
	offset             int64
	size               int64 // bytes of the file read once this frame was split off
	torn, parsed       bool
	err                error
	comp, plain, lines [2]int // spans in the batch's comp, plain and lines
}

// parsedLine is one complete line of a frame's plaintext, parsed ahead: it
// ends at plain[end] (the newline, frame-relative), its records are
// recs[a:b], err is ParseLine's.
type parsedLine struct {
	end, a, b int
	err       error
}

// Frames is the number of steps b holds (frames, plus a final torn frame,
// end or error).
func (b *Batch) Frames() int { return len(b.frames) }

// CompressedBytes is the number of compressed bytes b holds.
func (b *Batch) CompressedBytes() int { return len(b.comp) }

// BatchLimits say when Read stops adding frames to a batch: once it holds
// at least Compressed compressed bytes, or Plain bytes of plaintext as the
// frames' headers declare it (a frame that declares none counts
// undeclaredRatio times its compressed size), or Frames frames. It always
// takes one frame. Plain keeps a batch's plaintext small enough to still
// be in cache when it is parsed, wherever it was decoded; Compressed bounds
// what a batch holds before it is decoded.
type BatchLimits struct {
	Compressed, Plain, Frames int
}

// undeclaredRatio is the plaintext Read assumes per compressed byte of a
// frame whose header does not declare its size.
const undeclaredRatio = 8

// Read empties b and fills it from fr with consecutive frames up to lim,
// or until the file ends, tears or fails (the last step then says so); it
// reports whether that happened, after which fr has nothing more to give.
// The bytes are copied: fr may read on while b is decoded elsewhere.
func (b *Batch) Read(fr *FrameReader, lim BatchLimits) (last bool) {
	return b.read(fr, lim, false)
}

// ReadOne is Read of a single frame whose bytes stay fr's buffer, valid only
// until fr's next call: for a reader that decodes each batch before reading
// the next (Scan).
func (b *Batch) ReadOne(fr *FrameReader) (last bool) { return b.read(fr, BatchLimits{Frames: 1}, true) }

func (b *Batch) read(fr *FrameReader, lim BatchLimits, alias bool) (last bool) {
	b.frames, b.comp, b.plain, b.lines, b.recs = b.frames[:0], b.comp[:0], b.plain[:0], b.lines[:0], b.recs[:0]
	plain := 0
	for len(b.frames) < max(lim.Frames, 1) && (len(b.frames) == 0 || len(b.comp) < lim.Compressed && plain < lim.Plain) {
		f, err := fr.Next()
		if n, ok := f.ContentSize(); ok {
			plain += int(min(n, 1<<40))
		} else {
			plain += undeclaredRatio * len(f.Bytes)
		}
		bf := batchFrame{index: f.Index, offset: f.Offset, size: fr.Offset(), err: err}
		data := f.Bytes
		var torn *TornFrame
		if errors.As(err, &torn) {
			bf.index, bf.offset, bf.torn, bf.err, data = torn.Index, torn.Offset, true, nil, torn.Bytes
		}
		c0 := len(b.comp)
		if alias {
			b.comp = data
		} else {
			b.comp = append(b.comp, data...)
		}
		bf.comp = [2]int{c0, len(b.comp)}
		b.frames = append(b.frames, bf)
		if bf.err != nil || bf.torn {
			return true
		}
	}
	return false
}

// Decode decompresses every frame of b (verifying checksums; a failure is
// kept as that frame's error, for Apply to report in order) and, with a
// parser, parses the complete lines of each data frame of at most
// preparseMax plaintext bytes. It changes nothing but b, d and p, so
// batches may be decoded on any goroutines, each with its own d and p.
func (b *Batch) Decode(d *FrameDecoder, p *Parser) {
	b.plain, b.lines, b.recs = b.plain[:0], b.lines[:0], b.recs[:0]
	for k := range b.frames {
		f := &b.frames[k]
		if f.err != nil {
			continue
		}
		comp := b.comp[f.comp[0]:f.comp[1]]
		p0 := len(b.plain)
		if f.torn {
			b.plain = append(b.plain, d.DecodePrefix(&TornFrame{Index: f.index, Offset: f.offset, Bytes: comp})...)
		} else {
			b.plain, f.err = decodeAfter(d, b.plain, Frame{Index: f.index, Offset: f.offset, Bytes: comp})
		}
		f.plain = [2]int{p0, len(b.plain)}
		l0 := len(b.lines)
		f.parsed = p != nil && f.err == nil && !f.torn && f.index > 0 && len(b.plain)-p0 <= preparseMax
		if f.parsed {
			b.preparse(p, b.plain[p0:])
		}
		f.lines = [2]int{l0, len(b.lines)}
	}
}

// decodeAfter appends fr's plaintext to dst as Decode would with an empty
// dst. klauspost's DecodeAll takes what dst holds as the frame's history, so
// a damaged frame decoded after others could reach into their plaintext
// (and fail differently, or not at the same point) where the inline reader
// sees none: each frame is decoded on its own, into dst's spare capacity
// when it fits.
func decodeAfter(d *FrameDecoder, dst []byte, fr Frame) ([]byte, error) {
	n := len(dst)
	out, err := d.Decode(dst[n:n], fr)
	if err != nil {
		return dst, err
	}
	if len(out) > 0 && (cap(dst)-n < len(out) || &dst[:n+1][n] != &out[0]) {
		return append(dst, out...), nil // the decoder had to grow its own buffer
	}
	return dst[:n+len(out)], nil
}

// preparse parses every complete line of plain as lineScanner.consume would
// (a line inside one frame is never cut for length); a trailing partial
// line is left to the scanner.
func (b *Batch) preparse(p *Parser, plain []byte) {
	for start := 0; ; {
		nl := bytes.IndexByte(plain[start:], '\n')
		if nl < 0 {
			return
		}
		pl := parsedLine{end: start + nl, a: len(b.recs)}
		b.recs, pl.err = p.ParseLine(b.recs, plain[start:pl.end])
		pl.b = len(b.recs)
		b.lines = append(b.lines, pl)
		start = pl.end + 1
	}
}

// ZstdScanner is the in-order step of reading a compressed log: it applies
// decoded batches, in file order, exactly as Scan does.
type ZstdScanner struct {
	s         lineScanner
	res       Result
	cur       *batchFrame
	frameBase int64 // plaintext offset where the current frame starts
	done      bool
}

// NewZstdScanner returns a scanner calling visit for each preserved event in
// order, by pointer as ScanRecords does (records valid only during the call,
// and not to be modified).
func NewZstdScanner(opts Options, visit func(*Record) error) *ZstdScanner {
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = events.DefaultMaxLineBytes
	}
	z := &ZstdScanner{res: Result{Cut: -1}}
	z.s = lineScanner{visit: visit, maxLine: maxLine}
	z.s.where = func(at int64) string {
		return fmt.Sprintf("frame %d (byte %d), line %d at offset %d of the frame", z.cur.index, z.cur.offset, z.s.line+1, at-z.frameBase)
	}
	return z
}

// Apply takes the next batch (decoded) and reports whether the read is
// over: the log ended, tore, failed (err) or a visit stopped it (err). The
// batch may be reused once Apply returns. After the end, Result is what
// Scan returns.
func (z *ZstdScanner) Apply(b *Batch) (done bool, err error) {
	if z.done {
		return true, nil
	}
	done, err = z.apply(b)
	z.done = done || err != nil
	return z.done, err
}

// Result is what the read found so far (complete once Apply said done).
func (z *ZstdScanner) Result() Result { return z.res }

func (z *ZstdScanner) apply(b *Batch) (bool, error) {
	s, res := &z.s, &z.res
	for k := range b.frames {
		f := &b.frames[k]
		res.Size = f.size
		plain := b.plain[f.plain[0]:f.plain[1]]
		switch {
		case f.err == io.EOF:
			return true, z.end()
		case f.torn:
			if res.Frames == 0 {
				return true, fmt.Errorf("v0: %w: empty or header-less Zstandard session log (the header frame is incomplete)", events.ErrCorrupt)
			}
			if s.commit != s.input {
				return true, fmt.Errorf("v0: frame %d: %w: %v", res.Frames-1, events.ErrCorrupt, errTornRecord)
			}
			z.cur, z.frameBase = f, s.input
			s.salvage = true
			if err := s.write(plain); err != nil {
				return true, err
			}
			res.Cut = f.offset
			res.Salvaged, res.SalvagedEvents = s.salvaged, s.salvN
			res.Events = s.n
			return true, nil
		case f.err != nil:
			return true, f.err
		}
		z.cur = f
		if res.Frames == 0 {
			if len(plain) == 0 || bytes.IndexByte(plain, '\n') != len(plain)-1 {
				return true, fmt.Errorf("v0: frame 0: %w: first frame is not exactly one header line", events.ErrCorrupt)
			}
			h, err := ParseHeader(plain[:len(plain)-1])
			if err != nil {
				return true, fmt.Errorf("%w (frame 0)", err)
			}
			res.Header = h
			res.Frames++
			continue
		}
		res.Frames++
		z.frameBase = s.input
		var err error
		if f.parsed && len(s.frag) == 0 && !s.tooLong {
			err = s.writeParsed(plain, b.lines[f.lines[0]:f.lines[1]], b.recs)
		} else {
			// Not parsed ahead, or continuing a line the previous frame
			// left open (dsh never writes one; a reader takes it).
			err = s.write(plain)
		}
		if err != nil {
			return true, err
		}
	}
	return false, nil
}

// end is the close of a log that ended after a complete frame.
func (z *ZstdScanner) end() error {
	if z.res.Frames == 0 {
		return fmt.Errorf("v0: %w: empty or header-less Zstandard session log", events.ErrCorrupt)
	}
	if z.s.commit != z.s.input {
		return fmt.Errorf("v0: frame %d: %w: %v", z.res.Frames-1, events.ErrCorrupt, errTornRecord)
	}
	z.res.Events = z.s.n
	return nil
}

// writeParsed is write for a frame whose complete lines were parsed ahead:
// the same lines, positions and messages, without parsing them again.
func (s *lineScanner) writeParsed(plain []byte, lines []parsedLine, recs []Record) error {
	start := s.input
	s.input += int64(len(plain))
	prev := 0
	for _, pl := range lines {
		s.line++
		if err := s.apply(plain[prev:pl.end], start+int64(prev), start+int64(pl.end)+1, recs[pl.a:pl.b], pl.err); err != nil {
			return err
		}
		prev = pl.end + 1
	}
	if prev < len(plain) {
		s.addFrag(plain[prev:])
	}
	return nil
}
