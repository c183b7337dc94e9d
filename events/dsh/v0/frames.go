package v0

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/tailproof/tailproof/events"
)

// zstdMagic is the Zstandard frame magic number, 0xFD2FB528 little-endian
// (RFC 8878 §3.1.1; dsh's ZSTD_MAGIC = 4247762216).
const zstdMagic = 0xFD2FB528

// DefaultMaxFrameBytes bounds one frame, compressed and decompressed. dsh
// writes one frame per durable append batch (200 ms of events by default), so
// a frame past this is not one this reader holds in memory.
const DefaultMaxFrameBytes = 256 << 20

// maxWindow is zstd's default decoder window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT
// = 27), which Node's decoder applies: a frame needing more fails there too.
const maxWindow = 1 << 27

// ErrFrameTooLarge classifies a frame over the reader's limit; it wraps
// events.ErrLineTooLong, the framework's class for a unit too large to hold.
var ErrFrameTooLarge = fmt.Errorf("v0: zstd frame too large: %w", events.ErrLineTooLong)

// Frame is one structurally complete Zstandard frame of a log.
type Frame struct {
	Index  int   // 0 is the header frame
	Offset int64 // byte offset of its magic number in the file
	Bytes  []byte
}

// ContentSize is the plaintext size the frame's header declares (RFC 8878
// §3.1.1.1.4, Frame_Content_Size), and whether it declares one. It is a
// hint, never trusted: the decoder checks what the frame really holds.
func (f Frame) ContentSize() (uint64, bool) {
	b := f.Bytes
	if len(b) < 5 {
		return 0, false
	}
	desc := b[4]
	fcsFlag, single := desc>>6, desc&0x20 != 0
	var size int
	switch {
	case fcsFlag == 0 && single:
		size = 1
	case fcsFlag != 0:
		size = 1 << fcsFlag
	default:
		return 0, false
	}
	at := 5 + headerRest(desc) - size // the size is the header's last field
	if at < 5 || len(b) < at+size {
		return 0, false
	}
	var v uint64
	for k := size - 1; k >= 0; k-- {
		v = v<<8 | uint64(b[at+k])
	}
	if size == 2 {
		v += 256
	}
	return v, true
}

// TornFrame is the incomplete last frame: the file ended inside it. It wraps
// events.ErrTornTail; Bytes are the bytes present (possibly none).
type TornFrame struct {
	Index  int
	Offset int64
	Bytes  []byte
}

func (t *TornFrame) Error() string {
	return fmt.Sprintf("v0: frame %d at byte %d: the file ends inside the frame (%d bytes present): %v", t.Index, t.Offset, len(t.Bytes), events.ErrTornTail)
}

func (t *TornFrame) Unwrap() error { return events.ErrTornTail }

// FrameReader splits a concatenation of Zstandard frames into frames without
// decompressing them, streaming, holding one frame at a time. It checks what
// dsh 0.1.0-rc.8's scanZstdFrames checks: the magic number, the reserved
// frame-header bit and the reserved block type are corruption (an error
// wrapping events.ErrCorrupt, naming the byte); the file ending inside a
// frame is a *TornFrame.
type FrameReader struct {
	r     *bufio.Reader
	off   int64
	index int
	max   int
	buf   []byte
	done  bool
}

// NewFrameReader reads frames from r; max bounds one frame (<= 0:
// DefaultMaxFrameBytes).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Offset is the number of bytes consumed so far.
func (f *FrameReader) Offset() int64 { return f.off }

// Next returns the next complete frame, valid until the next call; io.EOF
// after the last; a *TornFrame when the input ends inside a frame.
func (f *FrameReader) Next() (Frame, error) {
	if f.done {
		return Frame{}, io.EOF
	}
	f.buf = f.buf[:0]
	start := f.off
	torn := func() (Frame, error) {
		f.done = true
		return Frame{}, &TornFrame{Index: f.index, Offset: start, Bytes: f.buf}
	}
	// need reads n more bytes into buf; false at EOF (the frame is torn).
	need := func(n int) (bool, error) {
		if len(f.buf)+n > f.max {
			return false, fmt.Errorf("v0: frame %d at byte %d: %w (over %d bytes)", f.index, start, ErrFrameTooLarge, f.max)
		}
		for n > 0 {
			if len(f.buf) == cap(f.buf) {
				f.buf = append(f.buf, 0)[:len(f.buf)]
			}
			k := min(n, cap(f.buf)-len(f.buf))
			got, err := io.ReadFull(f.r, f.buf[len(f.buf):len(f.buf)+k])
			f.buf = f.buf[:len(f.buf)+got]
			f.off += int64(got)
			n -= got
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("v0: read: %w", err)
			}
		}
		return true, nil
	}
	if _, err := f.r.Peek(1); err == io.EOF {
		f.done = true
		return Frame{}, io.EOF
	}
	if ok, err := need(4); err != nil || !ok {
		if err != nil {
			return Frame{}, err
		}
		return torn()
	}
	if binary.LittleEndian.Uint32(f.buf) != zstdMagic {
		f.done = true
		return Frame{}, fmt.Errorf("v0: %w: invalid frame magic at byte %d (frame %d)", events.ErrCorrupt, start, f.index)
	}
	if ok, err := need(1); err != nil || !ok {
		if err != nil {
			return Frame{}, err
		}
		return torn()
	}
	desc := f.buf[4]
	if desc&0x18 != 0 {
		f.done = true
		return Frame{}, fmt.Errorf("v0: %w: reserved frame-header bit at byte %d (frame %d)", events.ErrCorrupt, start+4, f.index)
	}
	if ok, err := need(headerRest(desc)); err != nil || !ok {
		if err != nil {
			return Frame{}, err
		}
		return torn()
	}
	for {
		if ok, err := need(3); err != nil || !ok {
			if err != nil {
				return Frame{}, err
			}
			return torn()
		}
		h := f.buf[len(f.buf)-3:]
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		lastBlock, typ, size := bh&1 != 0, (bh>>1)&3, int(bh>>3)
		if typ == 3 {
			f.done = true
			return Frame{}, fmt.Errorf("v0: %w: reserved block type at byte %d (frame %d)", events.ErrCorrupt, start+int64(len(f.buf))-3, f.index)
		}
		payload := size
		if typ == 1 { // RLE: one byte repeated size times
			payload = 1
		}
		if ok, err := need(payload); err != nil || !ok {
			if err != nil {
				return Frame{}, err
			}
			return torn()
		}
		if lastBlock {
			break
		}
	}
	if desc&0x04 != 0 { // content checksum
		if ok, err := need(4); err != nil || !ok {
			if err != nil {
				return Frame{}, err
			}
			return torn()
		}
	}
	fr := Frame{Index: f.index, Offset: start, Bytes: f.buf}
	f.index++
	return fr, nil
}

// headerRest is the frame-header length after the descriptor byte: the
// window descriptor (absent in single-segment frames), the dictionary id and
// the frame content size.
func headerRest(desc byte) int {
	fcsFlag := desc >> 6
	single := desc&0x20 != 0
	dict := int(desc & 3)
	if dict == 3 {
		dict = 4
	}
	fcs := 0
	switch {
	case fcsFlag == 0 && single:
		fcs = 1
	case fcsFlag != 0:
		fcs = 1 << fcsFlag
	}
	n := dict + fcs
	if !single {
		n++
	}
	return n
}

// FrameDecoder decompresses frames, verifying each checksum.
type FrameDecoder struct {
	d   *zstd.Decoder
	max int
}

// NewFrameDecoder returns a decoder that refuses output over max bytes per
// frame (<= 0: DefaultMaxFrameBytes).
func NewFrameDecoder(max int) *FrameDecoder {
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(uint64(max)))
	if err != nil {
		panic(err) // the options are constants: unreachable
	}
	return &FrameDecoder{d: d, max: max}
}

// Close releases the decoder.
func (d *FrameDecoder) Close() { d.d.Close() }

// Decode appends the plaintext of one complete frame to dst. A checksum or
// decompression failure wraps events.ErrCorrupt.
func (d *FrameDecoder) Decode(dst []byte, fr Frame) ([]byte, error) {
	out, err := d.d.DecodeAll(fr.Bytes, dst)
	if err != nil {
		// klauspost's DecodeAll takes another path when dst has room for
		// the frame, and a damaged frame fails there with another reason
		// (an "unexpected EOF" for a "match offset bigger than current
		// history"). The reason reported is the one of a decode into an
		// empty buffer, so it never depends on what was decoded before.
		if _, err2 := d.d.DecodeAll(fr.Bytes, nil); err2 != nil {
			err = err2
		}
		return dst, fmt.Errorf("v0: %w: frame %d at byte %d failed validation: %v", events.ErrCorrupt, fr.Index, fr.Offset, err)
	}
	return out, nil
}

// DecodePrefix returns the plaintext an incomplete frame yields with
// ZSTD_e_flush, as dsh's decompressZstdPrefix gets it from Node: every
// complete block, then the bytes present of a torn raw block (zstd streams
// raw blocks as their bytes arrive); no checksum is checked, since none is
// there. Anything undecodable yields nothing, as dsh catches the failure and
// recovers an empty plaintext.
func (d *FrameDecoder) DecodePrefix(t *TornFrame) []byte {
	b := t.Bytes
	if len(b) < 5 {
		return nil
	}
	desc := b[4]
	hdrEnd := 5 + headerRest(desc)
	if len(b) < hdrEnd {
		return nil
	}
	// Walk the blocks: complete ones, then what is present of a torn one.
	i, lastComplete, lastFlagged := hdrEnd, -1, false
	var partialRaw []byte
	for i+3 <= len(b) {
		bh := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
		typ, size := (bh>>1)&3, int(bh>>3)
		payload := size
		if typ == 1 {
			payload = 1
		}
		if i+3+payload > len(b) {
			if typ == 0 {
				partialRaw = b[i+3:]
			}
			break
		}
		lastComplete = i
		i += 3 + payload
		if bh&1 != 0 {
			lastFlagged = true
			break
		}
	}
	var out []byte
	if lastComplete >= 0 {
		frame, ok := rebuildFrame(b[:i], desc, hdrEnd, lastComplete, lastFlagged)
		if !ok {
			return nil
		}
		var err error
		if out, err = d.d.DecodeAll(frame, nil); err != nil {
			return nil
		}
	}
	if len(out)+len(partialRaw) > d.max {
		return nil
	}
	return append(out, partialRaw...)
}

// rebuildFrame turns the complete blocks of a torn frame into a frame the
// decoder accepts: no content size (the output is shorter than declared), no
// checksum (it is missing), a window descriptor at least as large as the
// original window, and the last-block bit on the final complete block.
func rebuildFrame(b []byte, desc byte, hdrEnd, lastBlock int, flagged bool) ([]byte, bool) {
	single := desc&0x20 != 0
	dict := int(desc & 3)
	dictBytes := dict
	if dict == 3 {
		dictBytes = 4
	}
	var window uint64
	pos := 5
	if !single {
		wd := b[pos]
		exp, mant := uint64(wd>>3), uint64(wd&7)
		base := uint64(1) << (10 + exp)
		window = base + base/8*mant
		pos++
	}
	dictID := b[pos : pos+dictBytes]
	pos += dictBytes
	if single {
		fcs := b[pos:hdrEnd]
		switch len(fcs) {
		case 1:
			window = uint64(fcs[0])
		case 2:
			window = uint64(binary.LittleEndian.Uint16(fcs)) + 256
		case 4:
			window = uint64(binary.LittleEndian.Uint32(fcs))
		case 8:
			window = binary.LittleEndian.Uint64(fcs)
		}
	}
	if window > maxWindow {
		return nil, false
	}
	exp := byte(0)
	for uint64(1)<<(10+exp) < window {
		exp++
	}
	out := make([]byte, 0, len(b)+2)
	out = binary.LittleEndian.AppendUint32(out, zstdMagic)
	out = append(out, byte(dict), exp<<3)
	out = append(out, dictID...)
	blocks := len(out)
	out = append(out, b[hdrEnd:]...)
	if !flagged {
		out[blocks+lastBlock-hdrEnd] |= 1
	}
	return out, true
}

// errTornRecord: the complete frames end inside a JSONL record.
var errTornRecord = errors.New("complete frame contains a torn JSONL record")
