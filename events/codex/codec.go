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
// an ordinal its Option<u64> refuses, or a known item type without its
// payload object.
var ErrNotRecord = errors.New("not a rollout line")

// maxDepth is serde_json's default recursion limit: Codex cannot read a line
// nested deeper.
const maxDepth = 128

// Codec is the events.Codec for Codex rollout files. Kinds are
// "codex.<type>" or "codex.<type>/<payload type>"; the body is *Record.
type Codec struct{}

func (Codec) Name() string          { return "codex-rollout" }
func (Codec) Stream() events.Stream { return "codex_rollout" }

// decoder is the codec's state, pooled: the line being read and what
// outlives it (the slabs records are handed out from, strs' shared
// chunk, scratch).
type decoder struct {
	lineState
	b    []byte
	rec  *Record
	meta *Meta // the Meta a session_meta or turn_context line fills: metaSlab's next
	strs objscan.Strings
	// slab hands out Records a chunk at a time: one allocation per 32
	// records instead of one each (a chunk lives while any of its records
	// does, 8 KiB), and metaSlab their Metas. strs is Chunked: the
	// records' strings share 4 KiB chunks too (objscan.Strings).
	slab     []Record
	metaSlab []Meta
	// scratch gathers a text before it is copied into strs' chunk,
	// reused from line to line.
	scratch []byte
}

// lineState is what one line's parse gathers besides the record. It holds
// no pointers, so that resetting it for each line is a plain clear.
type lineState struct {
	message, content span
	hasTS, hasType   bool
	payload          bool // a payload object was read
	hasPayloadType   bool
	badOrdinal       bool // an ordinal Codex's Option<u64> refuses
	hasTurnID        bool // the payload's turn_id is a string
	metaSet          bool // a member of Meta was read into d.meta
	// payloads counts the line's payload members and lastPayload is where
	// the last one's value starts; onlyPayload, when not -1, is the one
	// payload a second pass reads (parse).
	payloads, lastPayload, onlyPayload int
	// longs holds the long strings skip already checked for UTF-8
	// (utf8.go); badUTF8 is set when one of them is invalid.
	longs   objscan.Longs
	badUTF8 bool
}

// maxScratch bounds the scratch buffer a pooled decoder keeps.
const maxScratch = 64 << 10

// nextMeta is the Meta the next session_meta or turn_context record gets;
// finish hands it out (or clears what another record's members left in it).
func (d *decoder) nextMeta() *Meta {
	if len(d.metaSlab) == 0 {
		d.metaSlab = make([]Meta, 16)
	}
	return &d.metaSlab[0]
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

var decoders = sync.Pool{New: func() any {
	d := new(decoder)
	d.strs.Chunked, d.strs.Replace = true, true
	return d
}}

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
//
// A member named twice means what its last occurrence means, whole: Codex's
// loader parses each line into a serde_json Value first, whose objects keep
// the last value of a repeated key, and only then into a RolloutLine. The
// string and integer members are assigned in order, so the last one wins by
// itself (strs is Replace: a last value that is not a string clears the
// member); a repeated payload is read again instead (reparse).
func (d *decoder) parse(b []byte, i int) (int, error) {
	d.lineState = lineState{onlyPayload: -1}
	d.b, d.rec, d.meta = b, d.newRecord(), d.nextMeta()
	d.strs.Reset()
	end, err := objscan.Object(b, i, 1, maxDepth, d.top)
	if err != nil || d.payloads < 2 {
		return end, err
	}
	return d.reparse(b, i)
}

// reparse reads the line again into the same record, skipping every payload
// but the last, so that nothing of an earlier one (its type, a turn id)
// survives into the record.
func (d *decoder) reparse(b []byte, i int) (int, error) {
	*d.rec, *d.meta = Record{}, Meta{}
	d.lineState = lineState{onlyPayload: d.lastPayload}
	d.strs.Reset()
	return objscan.Object(b, i, 1, maxDepth, d.top)
}

// finish checks and completes the record parse read.
func (d *decoder) finish() (*Record, error) {
	rec := d.rec
	if !d.hasTS {
		return nil, errors.New("no timestamp string")
	}
	if !d.hasType {
		return nil, errors.New("no type string")
	}
	if d.badOrdinal {
		return nil, errors.New("ordinal is neither null nor an integer from 0 to 2^63-1")
	}
	d.strs.Finish()
	if rec.Type == ItemSessionMeta || rec.Type == ItemTurnContext {
		rec.Meta = d.meta
		d.metaSlab = d.metaSlab[1:]
	} else if d.metaSet {
		*d.meta = Meta{}
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
		if err := d.required(); err != nil {
			return nil, err
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
		// Option<u64>: null is none; a negative number, a fraction, an
		// exponent or any other type makes the line one Codex skips (-0 it
		// reads as 0). One past int64 Codex reads and this codec refuses.
		n, ok, end, err := objscan.Int(b, v, 1, maxDepth)
		rec.Ordinal, rec.HasOrdinal = n, ok && n >= 0
		d.badOrdinal = !rec.HasOrdinal && !objscan.IsNull(b, v)
		return end, err
	case "payload":
		d.payloads++
		d.lastPayload = v
		if d.onlyPayload >= 0 && v != d.onlyPayload {
			return d.skip(v, 1)
		}
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
		ok, end, err := d.strs.Add(&rec.TurnID, b, v, 2, maxDepth)
		d.hasTurnID = ok
		return end, err
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
		dst, d.metaSet = &d.meta.Cwd, true
	case "cli_version":
		dst, d.metaSet = &d.meta.CLIVersion, true
	case "originator":
		dst, d.metaSet = &d.meta.Originator, true
	case "source":
		dst, d.metaSet = &d.meta.Source, true
	case "forked_from_id":
		dst, d.metaSet = &d.meta.ForkedFromID, true
	case "history_mode":
		dst, d.metaSet = &d.meta.HistoryMode, true
	case "model":
		dst, d.metaSet = &d.meta.Model, true
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

// required refuses the turn boundaries and prompts Codex would skip for a
// missing or mistyped required member: TurnStartedEvent's and
// TurnCompleteEvent's turn_id and UserMessageEvent's message are Strings
// (codex-rs protocol.rs; the released 0.171.0 skips such lines, ADR 0048).
// Read, they would open or end a turn, or add a prompt, that Codex never
// sees. Other payloads' members are not checked (doc.go).
func (d *decoder) required() error {
	if d.rec.Type != ItemEventMsg {
		return nil
	}
	switch t := d.rec.PayloadType; t {
	case "task_started", "turn_started", "task_complete", "turn_complete":
		if !d.hasTurnID {
			return errors.New(t + " payload without a turn_id string")
		}
	case "user_message":
		if d.message.end == 0 || d.b[d.message.start] != '"' {
			return errors.New(t + " payload without a message string")
		}
	}
	return nil
}

// texts reads the members kept only for some payload types: a person's
// input (user_message, a user-role message's input_text) and an error's
// message. An agent's message and tool output are never copied.
func (d *decoder) texts() {
	b, rec := d.b, d.rec
	switch {
	case rec.Type == ItemEventMsg && (rec.PayloadType == "user_message" || rec.PayloadType == "injected_message"):
		if d.message.end > 0 {
			d.scratch, rec.HasText, _, _ = objscan.AppendString(d.scratch[:0], b, d.message.start, 2, maxDepth)
			rec.Text = d.strs.Copy(d.scratch)
		}
	case rec.Type == ItemEventMsg && rec.PayloadType == "error":
		if d.message.end > 0 {
			s, _, _, _ := objscan.String(b, d.message.start, 2, maxDepth)
			rec.Reason = objscan.Shorten(s, 200)
		}
	case rec.Type == ItemResponseItem && rec.PayloadType == "message" && rec.Role != "assistant" && d.content.end > 0:
		rec.Text, rec.HasText = d.inputText(d.content.start), true
	}
	if cap(d.scratch) > maxScratch {
		d.scratch = nil
	}
}

// inputText concatenates the text of a user-role message's content items
// (of each, its last text member).
func (d *decoder) inputText(v int) string {
	b := d.b
	if v >= len(b) || b[v] != '[' {
		return ""
	}
	out := d.scratch[:0]
	_, _ = objscan.Array(b, v, 3, maxDepth, func(e int) (int, error) {
		if b[e] != '{' {
			return objscan.Skip(b, e, 3, maxDepth)
		}
		item := len(out)
		return objscan.Object(b, e, 4, maxDepth, func(key []byte, v int) (int, error) {
			if string(key) == "text" {
				var end int
				var err error
				out, _, end, err = objscan.AppendString(out[:item], b, v, 4, maxDepth)
				return end, err
			}
			return objscan.Skip(b, v, 4, maxDepth)
		})
	})
	d.scratch = out
	return d.strs.Copy(out)
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
