package codex

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/internal/jsonscan"
	"github.com/tailproof/tailproof/events/internal/objscan"
)

// ErrNotRecord classifies a line that is not a rollout line Codex's loader
// would read: not UTF-8 (Codex reads the file with read_to_string, which
// fails on it), not one JSON object (serde_json rejects trailing bytes, so
// two records glued `}{` are one bad line), no timestamp string, no type,
// or a known item type without its payload object.
var ErrNotRecord = errors.New("not a rollout line")

// maxDepth is serde_json's default recursion limit: Codex cannot read a line
// nested deeper.
const maxDepth = 128

// Codec is the events.Codec for Codex rollout files. Kinds are
// "codex.<type>" or "codex.<type>/<payload type>"; the body is *Record.
type Codec struct{}

func (Codec) Name() string          { return "codex-rollout" }
func (Codec) Stream() events.Stream { return "codex_rollout" }

// decoder is the per-line scratch state, pooled: a record's strings are
// gathered into one allocation (objscan.Strings).
type decoder struct {
	b                []byte
	rec              *Record
	strs             objscan.Strings
	message, content span
	hasTS, hasType   bool
	payload          bool // a payload object was read
	hasPayloadType   bool
	meta             Meta
	// longs holds the long strings skip already checked for UTF-8
	// (utf8.go); badUTF8 is set when one of them is invalid.
	longs   objscan.Longs
	badUTF8 bool
	// slab hands out Records a chunk at a time: one allocation per 32
	// records instead of one each (a chunk lives while any of its records
	// does, about 10 KiB).
	slab []Record
}

func (d *decoder) newRecord() *Record {
	if len(d.slab) == 0 {
		d.slab = make([]Record, 32)
	}
	r := &d.slab[0]
	d.slab = d.slab[1:]
	return r
}

type span struct{ start, end int }

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// DecodeLine decodes one physical line. A blank line (Codex skips those)
// yields nothing and no error.
func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	b := line.Bytes
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1] // str::lines drops the CR of a CRLF
	}
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) {
		return dst, nil
	}
	d := decoders.Get().(*decoder)
	defer func() {
		d.b, d.rec = nil, nil
		decoders.Put(d)
	}()
	rec, err := d.decode(b, i)
	// Invalid UTF-8 is named first, whatever else is wrong with the line,
	// as one pass of utf8.Valid before parsing would: the check is cheap
	// on the error path and skips the strings already vouched for
	// otherwise (checkedUTF8).
	if err != nil && !utf8.Valid(b) || err == nil && !d.validUTF8() {
		return dst, fmt.Errorf("codex: %w: invalid UTF-8", ErrNotRecord)
	}
	if err != nil {
		return dst, fmt.Errorf("codex: %w: %w", ErrNotRecord, err)
	}
	return append(dst, event(rec, line.Pos)), nil
}

func event(rec *Record, pos events.Position) events.Event {
	return events.Event{
		Stream: "codex_rollout",
		Pos:    pos,
		Time:   events.Time{Ms: rec.TimeMs, OK: rec.TimeOK},
		Kind:   kindOf(rec),
		Body:   rec,
	}
}

func (d *decoder) decode(b []byte, i int) (*Record, error) {
	end, err := d.parse(b, i)
	if err != nil {
		return nil, err
	}
	if j := jsonscan.SkipSpace(b, end); j != len(b) {
		return nil, fmt.Errorf("byte %d: trailing bytes after the record", j)
	}
	return d.finish()
}

// DecodeFused implements events.FusedCodec: the line at the start of b is
// parsed where it lies, and is fused when the object is directly followed
// by its newline and holds no other (oneLine), decodes without error and
// is valid UTF-8 — exactly the lines DecodeLine decodes without error from
// b[:n], with the same result (the line's bytes are the same; only where
// its end was found differs).
func (Codec) DecodeFused(dst []events.Event, b []byte, pos events.Position, max int) ([]events.Event, int, bool) {
	if len(b) == 0 || b[0] != '{' {
		return dst, 0, false
	}
	d := decoders.Get().(*decoder)
	defer func() {
		d.b, d.rec = nil, nil
		decoders.Put(d)
	}()
	n, err := d.parse(b, 0)
	if err != nil || n >= len(b) || b[n] != '\n' || n > max {
		return dst, 0, false
	}
	d.b = b[:n]
	rec, err := d.finish()
	if err != nil || !d.oneLine() {
		return dst, 0, false
	}
	return append(dst, event(rec, pos)), n, true
}

// parse reads the object at b[i] into a new record and returns where it ends.
func (d *decoder) parse(b []byte, i int) (int, error) {
	*d = decoder{b: b, strs: d.strs, slab: d.slab}
	d.rec = d.newRecord()
	d.strs.Reset()
	return objscan.Object(b, i, 1, maxDepth, d.top)
}

// finish checks and completes the record parse read.
func (d *decoder) finish() (*Record, error) {
	rec, meta := d.rec, &d.meta
	if !d.hasTS {
		return nil, errors.New("no timestamp string")
	}
	if !d.hasType {
		return nil, errors.New("no type string")
	}
	d.strs.Finish()
	if rec.Type == ItemSessionMeta || rec.Type == ItemTurnContext {
		m := *meta
		rec.Meta = &m
	}
	switch rec.Type {
	case ItemSessionMeta, ItemResponseItem, ItemCompacted, ItemTurnContext, ItemEventMsg:
		rec.Known = true
		if !d.payload {
			return nil, errors.New(rec.Type + " without a payload object")
		}
		if (rec.Type == ItemResponseItem || rec.Type == ItemEventMsg) && !d.hasPayloadType {
			return nil, errors.New(rec.Type + " payload without a type")
		}
		d.texts()
	default:
		// An item this codec does not model: its payload was validated,
		// and its members say nothing this codec names.
		rec.PayloadType = ""
	}
	rec.TimeMs, rec.TimeOK = objscan.Timestamp(rec.Timestamp)
	return rec, nil
}

// top reads one member of the line object. The payload is walked in the
// same pass (its members are read whatever the item type, which may come
// after it); only its text-bearing members wait for the type.
func (d *decoder) top(key []byte, v int) (int, error) {
	b, rec := d.b, d.rec
	switch string(key) {
	case "timestamp":
		ok, end, err := d.strs.Add(&rec.Timestamp, b, v, 1, maxDepth)
		d.hasTS = ok
		return end, err
	case "type":
		ok, end, err := d.strs.AddKnown(&rec.Type, b, v, 1, maxDepth, knownItem)
		d.hasType = ok
		return end, err
	case "ordinal":
		n, ok, end, err := objscan.Int(b, v, 1, maxDepth)
		rec.Ordinal, rec.HasOrdinal = n, ok && n >= 0
		return end, err
	case "payload":
		if b[v] != '{' {
			d.payload = false
			return d.skip(v, 1)
		}
		d.payload = true
		return objscan.Object(b, v, 2, maxDepth, d.member)
	}
	return d.skip(v, 1)
}

func (d *decoder) member(key []byte, v int) (int, error) {
	b, rec := d.b, d.rec
	var dst *string
	switch string(key) {
	case "type":
		ok, end, err := d.strs.AddKnown(&rec.PayloadType, b, v, 2, maxDepth, knownPayload)
		d.hasPayloadType = ok
		return end, err
	case "id":
		dst = &rec.ID
	case "turn_id":
		dst = &rec.TurnID
	case "call_id":
		dst = &rec.CallID
	case "name":
		dst = &rec.Name
	case "role":
		_, end, err := d.strs.AddKnown(&rec.Role, b, v, 2, maxDepth, knownRole)
		return end, err
	case "phase":
		_, end, err := d.strs.AddKnown(&rec.Phase, b, v, 2, maxDepth, knownPhase)
		return end, err
	case "reason":
		dst = &rec.Reason
	case "kind":
		dst = &rec.Kind
	case "status":
		dst = &rec.Status
	case "cwd":
		dst = &d.meta.Cwd
	case "cli_version":
		dst = &d.meta.CLIVersion
	case "originator":
		dst = &d.meta.Originator
	case "source":
		dst = &d.meta.Source
	case "forked_from_id":
		dst = &d.meta.ForkedFromID
	case "history_mode":
		dst = &d.meta.HistoryMode
	case "model":
		dst = &d.meta.Model
	case "num_turns":
		n, _, end, err := objscan.Int(b, v, 2, maxDepth)
		rec.NumTurns = n
		return end, err
	case "message":
		end, err := d.skip(v, 2)
		d.message = span{v, end}
		return end, err
	case "content":
		end, err := d.skip(v, 2)
		d.content = span{v, end}
		return end, err
	default:
		return d.skip(v, 2)
	}
	_, end, err := d.strs.Add(dst, b, v, 2, maxDepth)
	return end, err
}

// texts reads the members kept only for some payload types: a person's
// input (user_message, a user-role message's input_text) and an error's
// message. An agent's message and tool output are never copied.
func (d *decoder) texts() {
	b, rec := d.b, d.rec
	switch {
	case rec.Type == ItemEventMsg && (rec.PayloadType == "user_message" || rec.PayloadType == "injected_message"):
		if d.message.end > 0 {
			rec.Text, rec.HasText, _, _ = objscan.String(b, d.message.start, 2, maxDepth)
		}
	case rec.Type == ItemEventMsg && rec.PayloadType == "error":
		if d.message.end > 0 {
			s, _, _, _ := objscan.String(b, d.message.start, 2, maxDepth)
			rec.Reason = objscan.Shorten(s, 200)
		}
	case rec.Type == ItemResponseItem && rec.PayloadType == "message" && rec.Role != "assistant" && d.content.end > 0:
		rec.Text, rec.HasText = inputText(b, d.content.start), true
	}
}

// inputText concatenates the text of a user-role message's content items.
func inputText(b []byte, v int) string {
	var out []byte
	if v >= len(b) || b[v] != '[' {
		return ""
	}
	_, _ = objscan.Array(b, v, 3, maxDepth, func(e int) (int, error) {
		if b[e] != '{' {
			return objscan.Skip(b, e, 3, maxDepth)
		}
		return objscan.Object(b, e, 4, maxDepth, func(key []byte, v int) (int, error) {
			if string(key) == "text" {
				s, _, end, err := objscan.String(b, v, 4, maxDepth)
				out = append(out, s...)
				return end, err
			}
			return objscan.Skip(b, v, 4, maxDepth)
		})
	})
	return string(out)
}

// kindOf is the record's kind. The kinds of the item and payload types
// this codec names are constants, so that the common records cost no
// concatenation and no lookup keyed by two strings.
func kindOf(rec *Record) events.Kind {
	if k := knownKind(rec.Type, rec.PayloadType); k != "" {
		return k
	}
	if rec.PayloadType != "" {
		return events.Kind("codex." + rec.Type + "/" + rec.PayloadType)
	}
	return events.Kind("codex." + rec.Type)
}
