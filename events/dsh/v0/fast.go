package v0

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/tailproof/tailproof/events/internal/jsonscan"
)

// The compact path (ADR 0037). dsh writes every storage line with
// JSON.stringify, so a line is compact JSON with its envelope keys in one
// order: an event {type, seq, time, data[, surfaceOp][, sourceEventSeqs]
// [, ignorable]} or a packed row {type, seq0, time0, data{turn, step, index,
// dt, texts | id[, name], args}} (dsh-session 0.1.0-rc.8, buildRow and the
// event constructors). fastLine matches that shape literally and validates
// every value it passes as JSON.parse would; on anything else — whitespace,
// another key order, a duplicate or foreign key, a row its checks refuse —
// it declines and ParseLine parses the line in full. So the compact path
// never decides an error: when it returns records they are exactly the
// general path's (FuzzCompactPath checks this on any input).

// compactDepth bounds the containers the compact path follows inside data;
// deeper data goes to the general parser, which enforces jsonscan.MaxDepth.
const compactDepth = 32

// fastLine parses a compact storage line; ok false means declined.
func (p *Parser) fastLine(dst []Record, line []byte) ([]Record, bool) {
	n := len(dst)
	dst, end, row := p.fastAt(dst, line)
	if end != len(line) {
		return dst[:n], false
	}
	if row {
		return p.row.expand(dst), true
	}
	return dst, true
}

// fastAt parses the compact storage line that starts b, which may run on
// past the line (the rest of a frame's plaintext): the line is b[:end], and
// end is -1 when the compact path declines. Nothing in a compact line can
// hide a newline (strings refuse control bytes, and no whitespace is
// taken), so a line found in a longer b is the line ParseLine would be
// given: the caller checks that b[end] is its newline. A verbatim event is
// appended to dst; a packed row appends nothing and is left, checked and
// unexpanded, in p.row (row true), for the caller to expand or to visit
// member by member.
func (p *Parser) fastAt(dst []Record, b []byte) (_ []Record, end int, row bool) {
	const chunkHead = `{"type":"assistant/chunk","seq":`
	if len(b) > len(chunkHead) && string(b[:len(chunkHead)]) == chunkHead {
		// The line dsh writes most (unpacked logs): no type to look up.
		dst, end = p.fastEvent(dst, TypeAssistantChunk, b, len(chunkHead))
		return dst, end, false
	}
	i := lit(b, 0, `{"type":`)
	if i < 0 || i >= len(b) || b[i] != '"' {
		return dst, -1, false
	}
	tend := str1(b, i)
	if tend < 0 {
		return dst, -1, false
	}
	if tag, row := rowTag(b[i:tend]); row {
		return dst, p.fastRow(tag, b, tend), true
	}
	typ, _ := p.typeOf(b[i:tend])
	dst, end = p.fastEvent(dst, typ, b, lit(b, tend, `,"seq":`))
	return dst, end, false
}

// chunkLine matches the commonest line, an assistant/chunk of text or
// reasoning with no optional member, as fastEvent would take it (same
// checks, same values): its seq, time, data and end (past the closing
// brace), or end -1, when the caller takes the line by fastAt. want is the
// seq the caller expects: a seq written as its digits is taken by one
// compare (wantSeq), and a time that starts with the last one's first
// eight digits has only the rest read (timeAt).
func (p *Parser) chunkLine(b []byte, want *wantSeq) (seq, time float64, data []byte, end int) {
	const chunkHead = `{"type":"assistant/chunk","seq":`
	if len(b) <= len(chunkHead) || string(b[:len(chunkHead)]) != chunkHead {
		return 0, 0, nil, -1
	}
	i := len(chunkHead)
	if j := want.match(b, i); j > 0 {
		seq, i = float64(want.v), j
	} else {
		seq, i = intAt(b, i)
	}
	time, i = p.timeAt(b, lit(b, i, `,"time":`))
	i = lit(b, i, `,"data":`)
	e := p.chunkData(b, i)
	if e < 0 || e >= len(b) || b[e] != '}' {
		return 0, 0, nil, -1
	}
	return seq, time, b[i:e], e + 1
}

// wantSeq is an expected seq v and its decimal digits, the low n bytes of
// w (first digit lowest); n is 0 when v has more than seven digits.
type wantSeq struct {
	v int64
	w uint64
	n int
}

// set makes v the expected seq: by a carry through the digits from v-1,
// else by writing them out.
func (q *wantSeq) set(v int64) {
	if v == q.v+1 && q.n > 0 {
		for k := q.n - 1; k >= 0; k-- {
			sh := 8 * uint(k)
			if byte(q.w>>sh) != '9' {
				q.w += 1 << sh
				q.v = v
				return
			}
			q.w = q.w&^(0xFF<<sh) | '0'<<sh
		}
	}
	q.v, q.w, q.n = v, 0, 0
	if v < 0 || v > 9999999 {
		return
	}
	for x := v; ; x /= 10 {
		q.w, q.n = q.w<<8|uint64('0'+x%10), q.n+1
		if x < 10 {
			return
		}
	}
}

// match reports where the number at b[i] ends when it is q's digits and
// nothing more (the byte after them ends a JSON number that is a plain
// integer), else 0: the same value and end intAt gives.
func (q *wantSeq) match(b []byte, i int) int {
	if q.n == 0 || len(b)-i <= 8 {
		return 0
	}
	mask := uint64(1)<<(8*uint(q.n)) - 1
	if binary.LittleEndian.Uint64(b[i:])&mask != q.w {
		return 0
	}
	j := i + q.n
	if c := b[j]; c-'0' <= 9 || c == '.' || c == 'e' || c == 'E' {
		return 0
	}
	return j
}

// timeAt is intAt for a chunk's time: a log's times share their leading
// digits for long stretches, so when the eight bytes at b[i] are the last
// 9-to-15-digit time's first eight digits (p.timeHi) only the rest is read.
func (p *Parser) timeAt(b []byte, i int) (float64, int) {
	if i >= 0 && len(b)-i > 16 && p.timeHi != 0 && binary.LittleEndian.Uint64(b[i:]) == p.timeHi {
		d, v := digits8(binary.LittleEndian.Uint64(b[i+8:]))
		j := i + 8 + d
		if c := b[j]; d < 8 && c != '.' && c != 'e' && c != 'E' {
			return float64(p.timeHiVal*pow10[d] + v), j
		}
	}
	t, j := intAt(b, i)
	if j-i >= 9 && j-i <= 15 && b[i] != '0' {
		if w := binary.LittleEndian.Uint64(b[i:]); digitsOnly(w) {
			_, p.timeHiVal = digits8(w)
			p.timeHi = w
		}
	}
	return t, j
}

// fastEvent parses a compact event line of type typ from its seq's value at
// b[i] on, appending its record: the line's end, or -1 (dst unchanged).
func (p *Parser) fastEvent(dst []Record, typ string, b []byte, i int) ([]Record, int) {
	seq, seqEnd := intAt(b, i)
	time, timeEnd := intAt(b, lit(b, seqEnd, `,"time":`))
	i = lit(b, timeEnd, `,"data":`)
	dataEnd := -1
	if typ == TypeAssistantChunk {
		dataEnd = p.chunkData(b, i)
	}
	if dataEnd < 0 {
		dataEnd = compact(b, i, compactDepth)
	}
	if dataEnd < 0 {
		return dst, -1
	}
	j := dataEnd
	var opts [3][]byte // surfaceOp, sourceEventSeqs, ignorable
	if j < len(b) && b[j] == ',' {
		for k, key := range [...]string{`,"surfaceOp":`, `,"sourceEventSeqs":`, `,"ignorable":`} {
			if v := lit(b, j, key); v >= 0 {
				e := compact(b, v, compactDepth)
				if e < 0 {
					return dst, -1
				}
				opts[k], j = b[v:e], e
			}
		}
	}
	if j >= len(b) || b[j] != '}' {
		return dst, -1
	}
	j++
	dst = append(dst, Record{Type: typ, HasType: true, Seq: seq, Time: time, raw: b[:j], Data: b[i:dataEnd],
		SurfaceOp: opts[0], SourceEventSeqs: opts[1], Ignorable: opts[2]})
	return dst, j
}

// rowRun is a packed row as validateRow accepts it, before its expansion:
// every member's seq and time is known to be a safe integer.
type rowRun struct {
	seq0, time0 float64
	m           *rowMember
	payload     [][]byte
	gaps        []float64
	// reused: m is the parser's own (Parser.member), rewritten by the next
	// row; expand gives the records a copy, since ParseLine's records live
	// as long as their line. The scanner's member-by-member visit passes m
	// itself: a visited record is valid only during the call.
	reused bool
}

// expand appends r's members.
func (r *rowRun) expand(dst []Record) []Record {
	m := r.m
	if r.reused {
		m = new(rowMember)
		*m = *r.m
	}
	dst = slices.Grow(dst, len(r.payload))
	t := r.time0
	for k, pl := range r.payload {
		if k > 0 {
			t += r.gaps[k-1]
		}
		dst = append(dst, Record{Type: TypeAssistantChunk, HasType: true, Seq: r.seq0 + float64(k), Time: t, member: m, raw: pl})
	}
	return dst
}

// fastRow parses a compact packed row whose type ends at i into p.row: the
// line's end, or -1.
func (p *Parser) fastRow(tag string, line []byte, i int) int {
	i = lit(line, i, `,"seq0":`)
	seq0, seq0End := intAt(line, i)
	time0, time0End := intAt(line, lit(line, seq0End, `,"time0":`))
	m := &p.member
	*m = rowMember{}
	i = lit(line, time0End, `,"data":{"turn":`)
	e := num(line, i)
	m.turn = span(line, i, e)
	i = lit(line, e, `,"step":`)
	e = num(line, i)
	m.step = span(line, i, e)
	i = lit(line, e, `,"index":`)
	e = num(line, i)
	m.idx = span(line, i, e)
	i = lit(line, e, `,"dt":[`)
	gaps := p.gaps[:0]
	small := true // every gap a plain integer of at most three digits
	if i >= 0 && i < len(line) && line[i] == ']' {
		i++
	} else {
		for i >= 0 {
			// A gap of one digit (dsh's gaps are a few milliseconds):
			// the digit and its separator, nothing else to check.
			if len(line)-i >= 2 && line[i]-'0' <= 9 && (line[i+1] == ',' || line[i+1] == ']') {
				gaps = append(gaps, float64(line[i]-'0'))
				if i += 2; line[i-1] == ']' {
					break
				}
				continue
			}
			var g float64
			if g, e = shortInt(line, i); e < 0 || !safeInteger(g) {
				return -1
			}
			small = small && e-i <= 3 && line[i] != '-'
			gaps = append(gaps, g)
			if i = e + 1; e < len(line) && line[e] == ']' {
				break
			}
			if e >= len(line) || line[e] != ',' {
				return -1
			}
		}
	}
	p.gaps = gaps
	m.chunkType = "text-delta"
	switch tag {
	case TagReasoningChunks:
		m.chunkType = "reasoning-delta"
	case TagToolCallChunks:
		m.chunkType = "tool-call-delta"
		i = lit(line, i, `,"id":`)
		e = str1(line, i)
		m.id = span(line, i, e)
		i = e
		if k := lit(line, i, `,"name":`); k >= 0 {
			e = str1(line, k)
			m.name, i = span(line, k, e), e
		}
	}
	if tag == TagToolCallChunks {
		i = lit(line, i, `,"args":[`)
	} else {
		i = lit(line, i, `,"texts":[`)
	}
	payload := p.payload[:0]
	for i >= 0 {
		e = strAt(line, i)
		if e < 0 {
			return -1
		}
		payload = append(payload, line[i:e])
		if i = e + 1; e < len(line) && line[e] == ']' {
			break
		}
		if e >= len(line) || line[e] != ',' {
			return -1
		}
	}
	p.payload = payload
	if i < 0 || len(line)-i < 2 || line[i] != '}' || line[i+1] != '}' {
		return -1
	}
	if !safeInteger(seq0) || seq0 < 0 || !safeInteger(time0) {
		return -1 // the general path names the defect
	}
	p.row = rowRun{seq0: seq0, time0: time0, m: m, payload: payload, gaps: gaps, reused: true}
	if small && len(gaps) == len(payload)-1 {
		// Non-negative gaps under 1000: the member times rise from time0
		// to the last one, so both ends safe makes every one safe (check's
		// loop, without it).
		if !safeInteger(seq0+float64(len(gaps))) || !safeInteger(time0+float64(len(gaps))*999) {
			return -1
		}
	} else if p.row.check(tag) != nil {
		return -1
	}
	return i + 2
}

// chunkData matches the data of a text or reasoning assistant/chunk as dsh
// writes it, {turn, step, chunk{type, index, text}}: its end, or -1.
// Consecutive chunk lines share everything before the text (the same turn,
// step, block type and index), so the bytes from the data's start to the
// text's quote, once validated, are kept (p.chunkHead): a line that starts
// its data with the same bytes has the same valid prefix, and only its text
// is left to validate.
func (p *Parser) chunkData(b []byte, i int) int {
	if i < 0 {
		return -1
	}
	if h := p.chunkHead; len(h) > 0 && len(b)-i > len(h) && string(b[i:i+len(h)]) == string(h) {
		return lit(b, strAt(b, i+len(h)), "}}")
	}
	t := chunkText(b, i)
	e := lit(b, strAt(b, t), "}}")
	if e >= 0 {
		p.chunkHead = append(p.chunkHead[:0], b[i:t]...)
	}
	return e
}

// chunkText matches the data of a text or reasoning chunk up to its text:
// where the text's value starts, or -1.
func chunkText(b []byte, i int) int {
	i = skipNum(b, lit(b, i, `{"turn":`))
	i = skipNum(b, lit(b, i, `,"step":`))
	// Literals of at most 32 bytes compare inline (amd64), without a call.
	if i = lit(b, i, `,"chunk":{"type":"`); lit(b, i, `text-delta","index":`) >= 0 {
		i += len(`text-delta","index":`)
	} else {
		i = lit(b, i, `reasoning-delta","index":`)
	}
	return lit(b, skipNum(b, i), `,"text":`)
}

// skipNum validates the JSON number at b[i], whose value the caller does
// not need: a short plain integer (a turn, step or index) byte by byte,
// anything else by num. Its end, or -1.
func skipNum(b []byte, i int) int {
	if i < 0 || i >= len(b) || b[i]-'1' > 8 {
		return num(b, i) // zero, a sign or not a number
	}
	j := i + 1
	for j < len(b) && b[j]-'0' <= 9 {
		j++
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return num(b, i)
	}
	return j
}

// intAt reads the JSON number at b[i] as number does, with a fast path for
// a plain integer of up to 15 digits read eight digits at a time: its value
// and end, or end -1.
func intAt(b []byte, i int) (float64, int) {
	if i >= 0 && len(b)-i > 16 {
		// Two words hold a plain integer of up to 15 digits, and the
		// byte after it is in b: no loop, no tail.
		d, n := digits8(binary.LittleEndian.Uint64(b[i:]))
		j := i + d
		if d == 8 {
			d2, v := digits8(binary.LittleEndian.Uint64(b[j:]))
			n, j = n*pow10[d2]+v, j+d2
			d += d2
		}
		if c := b[j]; d != 0 && d < 16 && (b[i] != '0' || d == 1) && c != '.' && c != 'e' && c != 'E' {
			return float64(n), j
		}
	}
	return intAtShort(b, i)
}

// intAtShort is intAt near the end of b, or for a value that is not a plain
// integer of up to 15 digits.
func intAtShort(b []byte, i int) (float64, int) {
	if i < 0 {
		return 0, -1
	}
	j, n := i, uint64(0)
	for k := 0; k < 2 && len(b)-j >= 8; k++ {
		d, v := digits8(binary.LittleEndian.Uint64(b[j:]))
		n = n*pow10[d] + v
		j += d
		if d < 8 {
			break
		}
	}
	if len(b)-j < 8 { // the line's last bytes: one at a time
		for j < len(b) && j-i < 16 && b[j]-'0' <= 9 {
			n = n*10 + uint64(b[j]-'0')
			j++
		}
	}
	if j == i || j-i >= 16 || (b[i] == '0' && j-i > 1) || (j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j]-'0' <= 9)) {
		e := num(b, i)
		if e < 0 {
			return 0, -1
		}
		v, _ := number(b[i:e])
		return v, e
	}
	return float64(n), j
}

// shortInt is intAt for a value that is usually a short plain integer (a
// row's dt gaps, a few milliseconds): up to three digits byte by byte,
// anything longer or not plain by intAt.
func shortInt(b []byte, i int) (float64, int) {
	if i < 0 || len(b)-i < 4 {
		return intAt(b, i)
	}
	n, j := uint64(0), i
	for ; j < i+3 && b[j]-'0' <= 9; j++ {
		n = n*10 + uint64(b[j]-'0')
	}
	if c := b[j]; j == i || c-'0' <= 9 || c == '.' || c == 'e' || c == 'E' || b[i] == '0' && j-i > 1 {
		return intAt(b, i)
	}
	return float64(n), j
}

// digitsOnly reports whether the eight bytes of w are ASCII digits.
func digitsOnly(w uint64) bool { d, _ := digits8(w); return d == 8 }

var pow10 = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// digits8 reads the ASCII digits that start the eight bytes of w (first
// byte lowest): how many (0 to 8) and their value. A byte flags as not a
// digit when it is below '0' (the subtraction borrows), above '9' (the
// addition reaches the high bit) or has the high bit; a borrow or carry only
// disturbs the bytes above the first flagged one, and only that one counts.
func digits8(w uint64) (int, uint64) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	t := w - ones*'0'
	stop := (t | (w + ones*(0x80-':')) | w) & high
	n := bits.TrailingZeros64(stop) >> 3
	if n == 0 {
		return 0, 0
	}
	// Keep the n digits, moved to the top so the bytes below read as
	// leading zeros, then combine pairs, quads and the two halves.
	t <<= 64 - 8*uint(n)
	t = t*10 + t>>8
	t = ((t&0x000000FF000000FF)*(100+1000000<<32) + (t>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return n, t
}

// span is b[i:j], or nil when either end is a failed match.
func span(b []byte, i, j int) []byte {
	if i < 0 || j < i {
		return nil
	}
	return b[i:j]
}

// lit returns the offset past s when b[i:] starts with it, else -1 (also
// for i < 0, so matches chain).
func lit(b []byte, i int, s string) int {
	if i < 0 || len(b)-i < len(s) || string(b[i:i+len(s)]) != s {
		return -1
	}
	return i + len(s)
}

// num validates the JSON number at b[i]: its end, or -1.
func num(b []byte, i int) int {
	if i < 0 || i >= len(b) {
		return -1
	}
	end, _, err := jsonscan.Number(b, i)
	if err != nil {
		return -1
	}
	return end
}

// str1 validates the JSON string at b[i]: its end, or -1.
func str1(b []byte, i int) int {
	if i < 0 || i >= len(b) || b[i] != '"' {
		return -1
	}
	if end, ok := jsonscan.ShortString(b, i); ok {
		return end
	}
	end, _, _, err := jsonscan.String(b, i)
	if err != nil {
		return -1
	}
	return end
}

// strAt is str1 for the short strings of chunk lines and rows (a delta is
// tens of bytes, below the vector path's minimum in jsonscan.String): eight
// bytes at a time to the first quote, backslash or control byte; a closing
// quote ends a string without escapes (bytes over 0x7F are legal, as for
// str1), anything else (an escape, a defect, the end of b near) goes to
// str1 from the start.
func strAt(b []byte, i int) int {
	if i < 0 || i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; len(b)-j >= 8; j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		// A byte flags when it is '"' or '\\' (its xor is zero: x - 0x01
		// borrows into its high bit) or below 0x20 (w - 0x20 does, and w's
		// own high bit is clear). A borrow disturbs only the bytes above
		// the first flagged one, and only that one counts.
		const ones, high = 0x0101010101010101, 0x8080808080808080
		q, bs := w^(ones*'"'), w^(ones*'\\')
		if stop := ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w) & high; stop != 0 {
			k := j + bits.TrailingZeros64(stop)>>3
			if b[k] == '"' {
				return k + 1
			}
			break
		}
	}
	return str1(b, i)
}

// compact validates the whitespace-free JSON value at b[i], containers
// nested at most depth deep: its end, or -1 (invalid, spaced or too deep).
func compact(b []byte, i, depth int) int {
	if i < 0 || i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		return str1(b, i)
	case '{', '[':
		if depth == 0 {
			return -1
		}
		i++
		if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			return i + 1
		}
		for {
			if c == '{' {
				if i = str1(b, i); i < 0 || i >= len(b) || b[i] != ':' {
					return -1
				}
				i++
			}
			if i = compact(b, i, depth-1); i < 0 || i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i++
			case c + 2:
				return i + 1
			default:
				return -1
			}
		}
	case 't':
		return lit(b, i, "true")
	case 'f':
		return lit(b, i, "false")
	case 'n':
		return lit(b, i, "null")
	}
	return num(b, i)
}
