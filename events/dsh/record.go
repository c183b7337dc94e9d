package dsh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tailproof/tailproof/events"
)

// Version is the only session-log format version this package reads and
// writes, as dsh v1 does (`version !== 1` is rejected, with no migration).
const Version = 1

// HeaderType is the `type` of a session log's first line.
const HeaderType = "session"

// Sentinels classifying why a line is not a dsh record. Test with errors.Is.
var (
	// ErrNotJSON: the line is not one JSON value.
	ErrNotJSON = errors.New("dsh: not valid JSON")
	// ErrNotEvent: the line is JSON but not a {type, seq, time, data} event.
	ErrNotEvent = errors.New("dsh: not a session event")
	// ErrNotHeader: the line is JSON but fails dsh's session-header type guard.
	ErrNotHeader = errors.New("dsh: not a session header")
	// ErrMalformedData: a known event type whose data does not have the v1 shape.
	ErrMalformedData = errors.New("dsh: malformed event data")
	// ErrNotSerializable: event data that JSON cannot carry losslessly.
	ErrNotSerializable = errors.New("dsh: non-JSON-serializable data")
)

// Record is one event line of a session log, `{type, seq, time, data}`,
// with data kept verbatim (compact JSON) so that a log can be stored and
// re-read byte for byte. The typed view is Payload.
type Record struct {
	Type string
	Seq  int64
	Time int64 // Date.now() milliseconds
	Data json.RawMessage
}

// Payload decodes the record's data into its typed v1 body. An unknown type
// yields *Generic; a known type whose data does not fit yields *Invalid. It
// never fails, so a reader can always describe what it saw.
func (r Record) Payload() Payload {
	p, err := DecodePayload(r.Type, r.Data)
	if err != nil {
		return &Invalid{Type: r.Type, Reason: err.Error(), Data: r.Data}
	}
	return p
}

// Clone returns a record that shares no memory with r.
func (r Record) Clone() Record {
	r.Data = bytes.Clone(r.Data)
	return r
}

// Canonical checks that r can be written as one log line and returns it with
// its data compacted (a newline inside data would split the line). The error
// names the event type and seq, as dsh's serializability check does.
func (r Record) Canonical() (Record, error) {
	if r.Type != "" && r.Seq >= 0 {
		if data, ok := appendCompact(make([]byte, 0, len(r.Data)), r.Data); ok {
			r.Data = data
			return r, nil
		}
	}
	return r.canonicalJSON()
}

// AppendCanonical appends r as one line (without the newline), as
// AppendRecord does with the record Canonical returns, and fails as
// Canonical does — leaving dst as it was — without copying the data first.
func AppendCanonical(dst []byte, r Record) ([]byte, error) {
	if r.Type != "" && r.Seq >= 0 {
		n := len(dst)
		dst = appendRecordHead(dst, r)
		if out, ok := appendCompact(dst, r.Data); ok {
			return append(out, '}'), nil
		}
		dst = dst[:n]
	}
	c, err := r.canonicalJSON()
	if err != nil {
		return dst, err
	}
	return AppendRecord(dst, c), nil
}

// canonicalJSON is Canonical through encoding/json: the reference the fast
// path must agree with, and the path that words every error.
func (r Record) canonicalJSON() (Record, error) {
	if r.Type == "" {
		return r, fmt.Errorf("dsh: event at seq %d has no type: %w", r.Seq, ErrNotEvent)
	}
	if r.Seq < 0 {
		return r, fmt.Errorf("dsh: event %q has negative seq %d: %w", r.Type, r.Seq, ErrNotEvent)
	}
	if len(r.Data) == 0 || !json.Valid(r.Data) {
		return r, fmt.Errorf("dsh: event %q carries non-JSON-serializable data (seq %d): %w", r.Type, r.Seq, ErrNotSerializable)
	}
	var buf bytes.Buffer
	buf.Grow(len(r.Data))
	if err := json.Compact(&buf, r.Data); err != nil {
		return r, fmt.Errorf("dsh: event %q carries non-JSON-serializable data (seq %d): %w", r.Type, r.Seq, ErrNotSerializable)
	}
	r.Data = buf.Bytes()
	return r, nil
}

// AppendRecord appends r as one line (without the newline) with dsh's key
// order type, seq, time, data. Data is written as given: pass a record
// through Canonical first when it did not come from this package.
func AppendRecord(dst []byte, r Record) []byte {
	dst = appendRecordHead(dst, r)
	if len(r.Data) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, r.Data...)
	}
	return append(dst, '}')
}

// appendRecordHead writes a record line up to the data's first byte.
func appendRecordHead(dst []byte, r Record) []byte {
	dst = append(dst, `{"type":`...)
	dst = events.AppendJSString(dst, r.Type)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, r.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, r.Time, 10)
	return append(dst, `,"data":`...)
}

// ParseRecord decodes one event line. It checks the envelope only: a JSON
// object with a string type, an integer seq >= 0, an integer time and a data
// member. The data is not interpreted here (see Record.Payload), so a log
// written by a newer vocabulary still scans.
func ParseRecord(line []byte) (Record, error) {
	if r, ok := fastParseRecord(line); ok {
		r.Data = bytes.Clone(r.Data)
		return r, nil
	}
	return parseRecordJSON(line)
}

// ParseRecordAppend is ParseRecord for a caller parsing many lines: the
// record's data is appended to buf — to a fresh, larger buffer when buf has
// no room — instead of getting an allocation of its own, and the grown
// buffer is returned for the next call. The data's capacity is clipped, so
// appending to one record's data never writes into another's; the records
// only share the buffer's lifetime.
func ParseRecordAppend(buf, line []byte) (Record, []byte, error) {
	r, ok := fastParseRecord(line)
	if !ok {
		r, err := parseRecordJSON(line)
		return r, buf, err
	}
	if n := len(r.Data); cap(buf)-len(buf) < n {
		buf = make([]byte, 0, max(n, min(2*cap(buf), 1<<20), 4<<10))
	}
	start := len(buf)
	buf = append(buf, r.Data...)
	r.Data = buf[start:len(buf):len(buf)]
	return r, buf, nil
}

// parseRecordJSON is ParseRecord through encoding/json: the reference the
// fast path must agree with, and the path that words every error.
func parseRecordJSON(line []byte) (Record, error) {
	var raw struct {
		Type *string         `json:"type"`
		Seq  *json.Number    `json:"seq"`
		Time *json.Number    `json:"time"`
		Data json.RawMessage `json:"data"`
	}
	if err := strictUnmarshal(line, &raw); err != nil {
		if errors.Is(err, ErrNotJSON) {
			return Record{}, err
		}
		return Record{}, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	if raw.Type == nil || *raw.Type == "" {
		return Record{}, fmt.Errorf("%w: no type", ErrNotEvent)
	}
	if raw.Seq == nil {
		return Record{}, fmt.Errorf("%w: no seq", ErrNotEvent)
	}
	seq, ok := wholeNumber(*raw.Seq)
	if !ok || seq < 0 {
		return Record{}, fmt.Errorf("%w: seq %s is not a non-negative integer", ErrNotEvent, raw.Seq.String())
	}
	if raw.Time == nil {
		return Record{}, fmt.Errorf("%w: no time", ErrNotEvent)
	}
	t, ok := wholeNumber(*raw.Time)
	if !ok {
		return Record{}, fmt.Errorf("%w: time %s is not an integer", ErrNotEvent, raw.Time.String())
	}
	if raw.Data == nil {
		return Record{}, fmt.Errorf("%w: no data", ErrNotEvent)
	}
	return Record{Type: *raw.Type, Seq: seq, Time: t, Data: bytes.Clone(raw.Data)}, nil
}

// strictUnmarshal separates "not JSON at all" from "JSON of the wrong shape".
func strictUnmarshal(line []byte, v any) error {
	t := bytes.TrimLeft(line, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		if !json.Valid(line) {
			return ErrNotJSON
		}
		return errors.New("not a JSON object")
	}
	// Unmarshal validates the whole input before decoding, so a syntax
	// error here means the line is not JSON at all.
	err := json.Unmarshal(line, v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return ErrNotJSON
	}
	return err
}

// wholeNumber accepts an integer-valued JSON number that fits int64 exactly
// (1e3 and 5.0 included, as JavaScript reads them).
func wholeNumber(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Header is a session log's first line:
// `{type:'session', version, id, createdAt, cwd?, parentSession?}`.
// Numbers are kept as JavaScript numbers (float64) because dsh's type guard
// only asks for "a number"; the version check happens later, on load.
type Header struct {
	Version       float64
	ID            string
	CreatedAt     float64
	Cwd           *string
	ParentSession *string
}

// Describe is the header's stable one-line form.
func (h *Header) Describe() string {
	s := "session version=" + formatNumber(h.Version) + " id=" + strconv.Quote(h.ID) + " createdAt=" + formatNumber(h.CreatedAt)
	if h.Cwd != nil {
		s += " cwd=" + strconv.Quote(*h.Cwd)
	}
	if h.ParentSession != nil {
		s += " parent=" + strconv.Quote(*h.ParentSession)
	}
	return s
}

// ParseHeader applies dsh's header type guard: type === 'session', a number
// version, a string id and a number createdAt. Extra keys are tolerated.
func ParseHeader(line []byte) (Header, error) {
	if h, ok := fastParseHeader(line); ok {
		return h, nil
	}
	return parseHeaderJSON(line)
}

// parseHeaderJSON is ParseHeader through encoding/json: the reference the
// fast path must agree with, and the path that words every error.
func parseHeaderJSON(line []byte) (Header, error) {
	var raw struct {
		Type          *string      `json:"type"`
		Version       *json.Number `json:"version"`
		ID            *string      `json:"id"`
		CreatedAt     *json.Number `json:"createdAt"`
		Cwd           *string      `json:"cwd"`
		ParentSession *string      `json:"parentSession"`
	}
	if err := strictUnmarshal(line, &raw); err != nil {
		if errors.Is(err, ErrNotJSON) {
			return Header{}, err
		}
		// A wrongly typed optional member (cwd: 5) still fails the guard
		// here: dsh would carry it on and break later when it hashes cwd.
		return Header{}, fmt.Errorf("%w: %v", ErrNotHeader, err)
	}
	if raw.Type == nil || *raw.Type != HeaderType || raw.Version == nil || raw.ID == nil || raw.CreatedAt == nil {
		return Header{}, ErrNotHeader
	}
	v, err1 := raw.Version.Float64()
	c, err2 := raw.CreatedAt.Float64()
	if err1 != nil || err2 != nil {
		return Header{}, fmt.Errorf("%w: number out of range", ErrNotHeader)
	}
	return Header{Version: v, ID: *raw.ID, CreatedAt: c, Cwd: raw.Cwd, ParentSession: raw.ParentSession}, nil
}

// AppendHeader appends h as one line (without the newline) with dsh's key
// order type, version, id, createdAt, cwd, parentSession.
func AppendHeader(dst []byte, h Header) []byte {
	dst = append(dst, `{"type":"session","version":`...)
	dst = appendNumber(dst, h.Version)
	dst = append(dst, `,"id":`...)
	dst = events.AppendJSString(dst, h.ID)
	dst = append(dst, `,"createdAt":`...)
	dst = appendNumber(dst, h.CreatedAt)
	if h.Cwd != nil {
		dst = append(dst, `,"cwd":`...)
		dst = events.AppendJSString(dst, *h.Cwd)
	}
	if h.ParentSession != nil {
		dst = append(dst, `,"parentSession":`...)
		dst = events.AppendJSString(dst, *h.ParentSession)
	}
	return append(dst, '}')
}

// appendNumber writes f as JavaScript's Number#toString does for the values a
// header holds (integers below 1e21 and ordinary fractions). NaN and the
// infinities, which JSON.stringify writes as null, are written as null too.
func appendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	b := strconv.AppendFloat(nil, f, 'e', -1, 64)
	// Go writes 1e-07; JavaScript writes 1e-7.
	if i := bytes.IndexByte(b, 'e'); i >= 0 && i+2 < len(b) {
		exp := bytes.TrimLeft(b[i+2:], "0")
		if len(exp) == 0 {
			exp = []byte("0")
		}
		b = append(b[:i+2:i+2], exp...)
	}
	return append(dst, b...)
}

func formatNumber(f float64) string { return string(appendNumber(nil, f)) }

// Summary is the mutable sidecar `<id>.summary.json`: {updatedAt, title?, firstPrompt?}.
type Summary struct {
	UpdatedAt   float64
	Title       *string
	FirstPrompt *string
}

// SummaryPatch is a partial summary: nil fields are left as they are, as
// dsh's `{...meta, ...summary}` spread leaves absent keys.
type SummaryPatch struct {
	UpdatedAt   *float64
	Title       *string
	FirstPrompt *string
}

// Apply returns s with the fields p sets replaced.
func (s Summary) Apply(p SummaryPatch) Summary {
	if p.UpdatedAt != nil {
		s.UpdatedAt = *p.UpdatedAt
	}
	if p.Title != nil {
		t := *p.Title
		s.Title = &t
	}
	if p.FirstPrompt != nil {
		f := *p.FirstPrompt
		s.FirstPrompt = &f
	}
	return s
}

// AppendSummary appends s as JSON with dsh's key order.
func AppendSummary(dst []byte, s Summary) []byte {
	dst = append(dst, `{"updatedAt":`...)
	dst = appendNumber(dst, s.UpdatedAt)
	if s.Title != nil {
		dst = append(dst, `,"title":`...)
		dst = events.AppendJSString(dst, *s.Title)
	}
	if s.FirstPrompt != nil {
		dst = append(dst, `,"firstPrompt":`...)
		dst = events.AppendJSString(dst, *s.FirstPrompt)
	}
	return append(dst, '}')
}

// ParseSummary reads a sidecar into a patch to lay over the header's
// defaults. dsh treats any failure as "no sidecar"; so do callers, but they
// get the reason.
func ParseSummary(b []byte) (SummaryPatch, error) {
	if p, ok := fastParseSummary(b); ok {
		return p, nil
	}
	return parseSummaryJSON(b)
}

// parseSummaryJSON is ParseSummary through encoding/json: the reference the
// fast path must agree with, and the path that words every error.
func parseSummaryJSON(b []byte) (SummaryPatch, error) {
	var raw struct {
		UpdatedAt   *json.Number `json:"updatedAt"`
		Title       *string      `json:"title"`
		FirstPrompt *string      `json:"firstPrompt"`
	}
	if err := strictUnmarshal(b, &raw); err != nil {
		return SummaryPatch{}, fmt.Errorf("dsh: summary: %w", err)
	}
	var p SummaryPatch
	if raw.UpdatedAt != nil {
		f, err := raw.UpdatedAt.Float64()
		if err != nil {
			return SummaryPatch{}, fmt.Errorf("dsh: summary: updatedAt: %w", err)
		}
		p.UpdatedAt = &f
	}
	p.Title, p.FirstPrompt = raw.Title, raw.FirstPrompt
	return p, nil
}
