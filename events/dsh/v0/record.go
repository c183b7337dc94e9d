package v0

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tailproof/tailproof/events"
)

// Record is one session event of a v0 log: a storage line that holds one
// event verbatim, or one member of a packed chunk row. Members are kept raw;
// the typed view of the parts recovery reads is in vocabulary.go.
//
// The numeric envelope fields are the float64 JavaScript holds, NaN when the
// member is missing or not a number, because dsh's scanner compares them with
// !== and a non-number seq is a seq gap, not a parse error.
type Record struct {
	Type string
	Seq  float64
	Time float64
	// Data is the raw data member; nil when absent.
	Data []byte
	// SurfaceOp, SourceEventSeqs and Ignorable are the optional envelope
	// members, raw; nil when absent.
	SurfaceOp, SourceEventSeqs, Ignorable []byte
	// Foreign is the first envelope key outside dsh's set (type, seq, time,
	// data, surfaceOp, sourceEventSeqs, ignorable); "" when none.
	Foreign string
	HasType bool // type is a JSON string
	// NotObject: the line is valid JSON but not an object.
	NotObject bool

	// member is set for a row member: the row's kind and shared fields,
	// shared by every member of the row. raw is the verbatim line of an
	// event, or a row member's text or argumentsDelta (raw JSON string).
	member *rowMember
	raw    []byte
}

type rowMember struct {
	chunkType       string // text-delta, reasoning-delta or tool-call-delta
	turn, step, idx []byte // raw numbers
	id, name        []byte // raw strings (tool-call-delta), name nil when absent
}

// ErrNullRecord: a storage line that is JSON null. dsh's scanner dereferences
// it (TypeError) and the whole load fails, so it is corruption wherever it is.
var ErrNullRecord = errors.New("v0: storage line is null")

// ErrMalformedRow classifies a line tagged as a packed chunk row whose shape
// dsh's decodeStorageRecord refuses.
var ErrMalformedRow = errors.New("v0: malformed storage row")

// Row tags (bare, slash-less: they are storage rows, never event types).
const (
	TagTextChunks      = "text-chunks"
	TagReasoningChunks = "reasoning-chunks"
	TagToolCallChunks  = "tool-call-chunks"
)

// ParseLine decodes one storage line (without its newline) into the events it
// stores, appended to dst: one Record for a verbatim event, every member for
// a packed chunk row — exactly as dsh-session 0.1.0-rc.8's
// decodeStorageRecord(JSON.parse(line)) does. A syntax error wraps
// events.ErrCorrupt; a malformed row wraps ErrMalformedRow and
// events.ErrCorrupt. The records alias line: Clone them to keep them.
func ParseLine(dst []Record, line []byte) ([]Record, error) {
	var p Parser
	return p.ParseLine(dst, line)
}

// Parser is ParseLine with reusable scratch space: a scanner parsing
// millions of lines allocates only for what it keeps.
type Parser struct {
	members      []member
	data         []member
	payload, dts [][]byte
	gaps         []float64
	lastType     string    // see typeOf
	row          rowRun    // the last packed row fastAt read
	member       rowMember // row.m's fields (see rowRun.reused)
	chunkHead    []byte    // see chunkData
	// timeHi is the first eight bytes of the last time timeAt read of
	// 9 to 15 digits (0: none), timeHiVal their value.
	timeHi, timeHiVal uint64
}

// ParseLine is the package-level ParseLine using p's scratch space.
func (p *Parser) ParseLine(dst []Record, line []byte) ([]Record, error) {
	if out, ok := p.fastLine(dst, line); ok {
		return out, nil
	}
	return p.parseGeneral(dst, line)
}

// parseGeneral is ParseLine for any line: the full validating parse.
func (p *Parser) parseGeneral(dst []Record, line []byte) ([]Record, error) {
	ms, isObj, err := object(p.members[:0], line)
	p.members = ms
	if err != nil {
		return dst, fmt.Errorf("v0: %w: %v", events.ErrCorrupt, err)
	}
	if !isObj {
		v := line[skipSpace(line):]
		if len(v) >= 4 && string(v[:4]) == "null" {
			return dst, ErrNullRecord
		}
		return append(dst, Record{NotObject: true, Seq: math.NaN(), Time: math.NaN(), raw: line}), nil
	}
	if t, ok := last(ms, "type"); ok {
		if tag, row := rowTag(t); row {
			return p.expandRow(dst, tag, ms)
		}
	}
	dst = append(dst, Record{})
	p.envelope(&dst[len(dst)-1], ms, line) // in place: a Record is 184 bytes
	return dst, nil
}

// rowTag reports whether the raw type value is a packed row's tag: by its
// bytes when it holds no escape (nearly always), else decoded. Unlike
// str, it costs no map lookup for the event lines.
func rowTag(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') >= 0 {
		tag, isStr := str(raw)
		return tag, isStr && (tag == TagTextChunks || tag == TagReasoningChunks || tag == TagToolCallChunks)
	}
	switch string(raw) {
	case `"` + TagTextChunks + `"`:
		return TagTextChunks, true
	case `"` + TagReasoningChunks + `"`:
		return TagReasoningChunks, true
	case `"` + TagToolCallChunks + `"`:
		return TagToolCallChunks, true
	}
	return "", false
}

func skipSpace(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func (p *Parser) envelope(r *Record, ms []member, line []byte) {
	r.Seq, r.Time, r.raw = math.NaN(), math.NaN(), line
	for _, m := range ms {
		switch string(m.Key) {
		case "type":
			r.Type, r.HasType = p.typeOf(m.Value)
		case "seq":
			r.Seq = numOrNaN(m.Value)
		case "time":
			r.Time = numOrNaN(m.Value)
		case "data":
			r.Data = m.Value
		case "surfaceOp":
			r.SurfaceOp = m.Value
		case "sourceEventSeqs":
			r.SourceEventSeqs = m.Value
		case "ignorable":
			r.Ignorable = m.Value
		default:
			if r.Foreign == "" {
				r.Foreign = string(m.Key)
			}
		}
	}
}

// typeOf is str for a line's type, remembering the last one: a log's lines
// run in long stretches of one type (assistant/chunk), and comparing bytes
// is cheaper than the lookup str makes. Only a value without escapes is
// remembered, so its bytes are its value.
func (p *Parser) typeOf(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && p.lastType != "" && string(raw[1:len(raw)-1]) == p.lastType {
		return p.lastType, true
	}
	t, ok := str(raw)
	if ok && bytes.IndexByte(raw, '\\') < 0 {
		p.lastType = t
	}
	return t, ok
}

func numOrNaN(raw []byte) float64 {
	if v, ok := number(raw); ok {
		return v
	}
	return math.NaN()
}

// Clone returns r with its bytes copied, so it outlives the line it was
// parsed from.
func (r Record) Clone() Record {
	b := r.AppendJSON(nil)
	out, err := ParseLine(nil, b)
	if err != nil || len(out) != 1 {
		return r // unreachable: AppendJSON writes a line ParseLine reads back
	}
	return out[0]
}

// Verbatim reports whether r is a whole storage line (not a row member).
func (r Record) Verbatim() bool { return r.member == nil }

// AppendJSON appends r's JSON: the stored line for a verbatim event, and for a
// row member the event decodeStorageRecord expands, keys in its order
// (type, seq, time, data{turn, step, chunk{type, index, [id, name,]
// text|argumentsDelta}}) with the row's raw values.
func (r Record) AppendJSON(dst []byte) []byte {
	if r.member == nil {
		return append(dst, r.raw...)
	}
	m := r.member
	dst = append(dst, `{"type":"assistant/chunk","seq":`...)
	dst = strconv.AppendInt(dst, int64(r.Seq), 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, int64(r.Time), 10)
	dst = append(dst, `,"data":{"turn":`...)
	dst = append(dst, m.turn...)
	dst = append(dst, `,"step":`...)
	dst = append(dst, m.step...)
	dst = append(dst, `,"chunk":{"type":"`...)
	dst = append(dst, m.chunkType...)
	dst = append(dst, `","index":`...)
	dst = append(dst, m.idx...)
	if m.chunkType == "tool-call-delta" {
		dst = append(dst, `,"id":`...)
		dst = append(dst, m.id...)
		if m.name != nil {
			dst = append(dst, `,"name":`...)
			dst = append(dst, m.name...)
		}
		dst = append(dst, `,"argumentsDelta":`...)
	} else {
		dst = append(dst, `,"text":`...)
	}
	dst = append(dst, r.raw...)
	return append(dst, "}}}"...)
}

// Describe is the record's stable one-line text form for traces and errors.
func (r Record) Describe() string {
	seq := "?"
	if safeInteger(r.Seq) {
		seq = strconv.FormatInt(int64(r.Seq), 10)
	}
	if !r.HasType {
		return "#" + seq + " (no type)"
	}
	return "#" + seq + " " + r.Type
}
