package dshrecovery

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// Fold is the load-time view of a v0 log that recovery needs, built one event
// at a time: whether the package's load would accept each event (the checks
// of dsh-session-persistence 0.1.0-rc.8's adoptStoredEvents and
// assertEventsSupported, and dsh-session's seed envelope checks), and the
// turn enclosure its interruptedTurnClosers folds (open turn, open step, tool
// requests without a result). The zero value is ready.
type Fold struct {
	n   int64
	err error
	// unsupported is the first unknown event type: the package checks types
	// only after every event passed its shape checks, so corruption anywhere
	// in the log outranks it.
	unsupported error
	lastTime    float64

	turnOpen bool
	turn     []byte // raw; nil when the open turn/start had no turn
	stepOpen bool
	step     []byte // raw; nil when absent
	pending  []pendingCall
}

// pendingCall is a tool request of the open step (by assistant/message) and,
// once recorded, the seq of its tool/call.
type pendingCall struct {
	id      string
	idOK    bool // a non-empty string: the closer's message passes dsh's shape check
	step    []byte
	callSeq int64 // -1 until a tool/call names it
}

// Err is the first reason the package's load would refuse the log; nil while
// every event is accepted.
func (f *Fold) Err() error {
	if f.err == nil {
		return f.unsupported
	}
	return f.err
}

// Len is the number of events applied.
func (f *Fold) Len() int64 { return f.n }

// Apply folds the next event (seq must already be contiguous: the scanner
// checks it). It returns a corruption refusal, which stops a scan; an
// unknown type is kept for Err and folding goes on, since the package
// reports corruption anywhere in the log before it.
func (f *Fold) Apply(r v0.Record) error { return f.Visit(&r) }

// Visit is Apply by pointer, the visitor of v0.ScanRecords and
// dshlog.ScanV0 (fold.Visit): it reads r during the call only and keeps
// none of its bytes, so it saves the copy of each record.
func (f *Fold) Visit(r *v0.Record) error {
	if f.err != nil {
		return f.err
	}
	if err := f.apply(r); err != nil {
		err = fmt.Errorf("dshrecovery: event %s: %w", r.Describe(), err)
		if errors.Is(err, v0.ErrUnsupportedVersion) {
			if f.unsupported == nil {
				f.unsupported = err
			}
		} else {
			f.err = err
		}
	}
	f.n++
	return f.err
}

func (f *Fold) apply(r *v0.Record) error {
	if err := envelope(r); err != nil {
		return err
	}
	f.lastTime = r.Time
	typ := r.Type
	if typ == v0.TypeSteeringMessage {
		typ = v0.TypeUserMessage // upgraded on load (migrateLegacySteeringEvent)
	}
	if r.Type == "request/header-delta" || r.Type == "mode/set" {
		// assertSupportedEvents runs before the known-type check.
		return corrupt("unsupported legacy %s event", r.Type)
	}
	if !v0.KnownTypes[typ] && !(r.Ignorable != nil && string(r.Ignorable) == "true") {
		return fmt.Errorf("%w: event type %q is unknown to dsh 0.1.0-rc.8 and not marked ignorable", v0.ErrUnsupportedVersion, r.Type)
	}
	if !r.Verbatim() {
		return nil // a row member: an assistant/chunk the rows codec validated
	}
	switch r.Type {
	case v0.TypeRequestHeader:
		return requestHeader(r.Data)
	case v0.TypeTurnStart:
		d, err := dataObject(r.Data)
		if err != nil {
			return err
		}
		if d.has("trigger") {
			if err := legacyTurnStart(d); err != nil {
				return err
			}
		}
		f.turnOpen, f.turn = true, nil
		f.turn = bytes.Clone(d.get("turn")) // kept past the line's buffer
		if f.turn != nil && string(f.turn) == "null" {
			f.turnOpen = false // null === null: dsh sees no open turn
		}
		f.stepOpen, f.step, f.pending = false, nil, f.pending[:0]
	case v0.TypeTurnEnd:
		d, err := dataObject(r.Data)
		if err == nil {
			if err := turnEnd(d); err != nil {
				return err
			}
		} else if isNull(r.Data) {
			return err
		}
		f.turnOpen, f.stepOpen, f.step, f.pending = false, false, nil, f.pending[:0]
	case v0.TypeStepStart:
		d, err := dataObject(r.Data)
		if err != nil {
			return err
		}
		f.stepOpen, f.step = true, bytes.Clone(d.get("step"))
		if f.step != nil && string(f.step) == "null" {
			f.stepOpen = false
		}
	case v0.TypeStepEnd:
		f.stepOpen, f.step, f.pending = false, nil, f.pending[:0]
	case v0.TypeUserMessage, v0.TypeSteeringMessage:
		return userMessage(recordData{r})
	case v0.TypeAssistantMessage:
		d, content, err := assistantMessage(r.Data)
		if err != nil {
			return err
		}
		for _, raw := range content {
			if isNull(raw) {
				return corrupt("assistant/message content block is null")
			}
			b, _ := asObj(raw)
			if t, _ := jsString(b.get("type")); t != "tool-call" {
				continue
			}
			idRaw := b.get("id")
			id, ok := jsString(idRaw)
			f.request(pendingCall{id: id, idOK: ok && id != "", step: bytes.Clone(d.get("step")), callSeq: -1}, idRaw)
		}
	case v0.TypeToolCall:
		d, err := dataObject(r.Data)
		if err != nil {
			return err
		}
		if id, ok := jsString(d.get("callId")); ok {
			for i := range f.pending {
				if f.pending[i].idOK && f.pending[i].id == id {
					f.pending[i].callSeq = int64(r.Seq)
				}
			}
		}
	case v0.TypeToolResult:
		id, err := toolResult(r.Data)
		if err != nil {
			return err
		}
		for i := range f.pending {
			if f.pending[i].idOK && f.pending[i].id == id {
				f.pending = append(f.pending[:i], f.pending[i+1:]...)
				break
			}
		}
	}
	return nil
}

// request records a tool request as a Map.set does: a repeated id keeps its
// place and loses a recorded call seq. Ids that are not strings never match
// (each parsed object is its own Map key); recovery refuses them if they are
// still pending at the end.
func (f *Fold) request(p pendingCall, raw []byte) {
	if p.idOK {
		for i := range f.pending {
			if f.pending[i].idOK && f.pending[i].id == p.id {
				f.pending[i] = p
				return
			}
		}
	} else {
		p.id = string(raw)
	}
	f.pending = append(f.pending, p)
}

// envelope is dsh-session's assertSessionEventEnvelope.
func envelope(r *v0.Record) error {
	switch {
	case r.NotObject:
		return corrupt("the stored event is not an object")
	case r.Foreign != "":
		return corrupt("invalid event envelope (key %q)", r.Foreign)
	case !r.HasType:
		return corrupt("invalid event envelope (type is not a string)")
	case !nonNegSafe(r.Seq) || !safe(r.Time):
		return corrupt("invalid event envelope (seq and time must be safe integers)")
	case !r.HasData():
		return corrupt("invalid event envelope (no data)")
	case r.Ignorable != nil && string(r.Ignorable) != "true":
		return corrupt("invalid event envelope (ignorable must be true)")
	}
	return nil
}

func safe(v float64) bool       { return v == math.Trunc(v) && math.Abs(v) <= 1<<53-1 }
func nonNegSafe(v float64) bool { return safe(v) && v >= 0 }

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", events.ErrCorrupt, fmt.Sprintf(format, args...))
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// obj is a JSON object's members, read as JavaScript reads them: the last
// of duplicate keys wins, a missing key is undefined (nil).
type obj []v0.Member

// asObj reads raw as an object; ok is false for any other value.
func asObj(raw []byte) (obj, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	ms, ok := v0.Object(nil, raw)
	return obj(ms), ok
}

func (o obj) get(key string) []byte {
	for i := len(o) - 1; i >= 0; i-- {
		if string(o[i].Key) == key {
			return o[i].Value
		}
	}
	return nil
}

func (o obj) has(key string) bool { return o.get(key) != nil }

// dataObject reads data as an object; a non-object yields no members (they
// read as undefined in JavaScript) except null, which throws there.
func dataObject(raw []byte) (obj, error) {
	if isNull(raw) {
		return nil, corrupt("data is null")
	}
	o, _ := asObj(raw)
	return o, nil
}

func jsString(raw []byte) (string, bool) { return v0.String(raw) }

// jsNumberText formats a raw JSON number as JSON.stringify writes it, for the
// integers dsh writes; ok is false for anything else, which recovery refuses
// to echo rather than guess JavaScript's formatting.
func jsNumberText(raw []byte) (string, bool) {
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || !safe(v) {
		return "", false
	}
	return strconv.FormatInt(int64(v), 10), true
}

// recordData adapts a record for the message checks.
type recordData struct{ r *v0.Record }

func (d recordData) data() []byte { return d.r.Data }
func (d recordData) kind() string { return d.r.Type }

func v0Array(raw []byte) ([][]byte, bool) { return v0.Array(nil, raw) }

func v0Member(key, value string) v0.Member { return v0.Member{Key: []byte(key), Value: []byte(value)} }

// numberOf reads a raw JSON number.
func numberOf(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return math.Inf(1), true
	}
	return v, true
}

// Describe is the fold's state in one line, for replay and traces.
func (f *Fold) Describe() string {
	if err := f.Err(); err != nil {
		return "refused: " + err.Error()
	}
	if !f.turnOpen {
		return fmt.Sprintf("%d events, no open turn", f.n)
	}
	turn, _ := rawNumber(f.turn)
	s := fmt.Sprintf("%d events, turn %s open", f.n, orQ(turn))
	if f.stepOpen {
		step, _ := optionalNumber(f.step)
		s += ", step " + orQ(step) + " open"
	}
	if len(f.pending) > 0 {
		s += ", awaiting"
		for _, p := range f.pending {
			if p.callSeq >= 0 {
				s += fmt.Sprintf(" %s (tool/call #%d)", p.id, p.callSeq)
			} else {
				s += " " + p.id + " (not started)"
			}
		}
	}
	return s
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// OpenTurn is the open turn's number as dsh would write it in its closers.
func (f *Fold) OpenTurn() (string, bool) {
	if !f.turnOpen {
		return "", false
	}
	return rawNumber(f.turn)
}
