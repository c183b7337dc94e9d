package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/internal/jsonscan"
	"github.com/tailproof/tailproof/events/internal/objscan"
)

// ErrNotRecord classifies a line that is not one transcript record: not one
// JSON object (two records spliced `}{`, a null-byte run, a truncated
// record — Claude Code #52387, #49876, #53821), or an object without a
// string type.
var ErrNotRecord = errors.New("not a transcript record")

// maxDepth bounds nesting; JSON.parse has no fixed limit, so this is
// encoding/json's, far past anything Claude Code writes.
const maxDepth = jsonscan.MaxDepth

// Codec is the events.Codec for Claude Code session transcripts
// (~/.claude/projects/<sanitized cwd>/<session>.jsonl). Kinds are
// "claude.<type>" or "claude.<type>/<subtype>"; the body is *Record.
type Codec struct{}

func (Codec) Name() string          { return "claude-transcript" }
func (Codec) Stream() events.Stream { return "claude_transcript" }

type decoder struct {
	b       []byte
	rec     *Record
	strs    objscan.Strings
	hasType bool
	content int // a content array read after the message, when its role came after it
	// slab hands out Records a chunk at a time (see events/codex), and
	// blockSlab their Blocks.
	slab      []Record
	blockSlab []Block
	// pending holds the blocks read since the last flushBlocks, their
	// strings as places in strs (Finish makes them strings).
	pending []pendingBlock
	// longs holds the long strings skipped, for the fused read's check
	// that a line parsed in the reader's buffer is one line.
	longs objscan.Longs
	// seenTop, seenMsg and seenAtt are the keys read so far at the top, in
	// the message and in the attachment (one bit per key the codec reads);
	// dup says a key the codec reads came twice in one object. JSON.parse,
	// Claude Code's reader, keeps the last value of a repeated key, whole,
	// at every level, so such a line is decoded again from its canonical
	// form (canonical), not merged.
	seenTop uint64
	seenMsg uint16
	seenAtt uint8
	dup     bool
}

// seen records key bit in *mask and notes a repeat.
func seen[T uint8 | uint16 | uint64](d *decoder, mask *T, bit uint) {
	if *mask&(1<<bit) != 0 {
		d.dup = true
	}
	*mask |= 1 << bit
}

// pendingBlock is a Block whose strings are still places in the decoder's
// Strings: one allocation for all of a record's strings, blocks included,
// instead of one per block field.
type pendingBlock struct {
	typ                              string // a known type's constant, else typSpan
	typSpan, text, id, name, toolUse objscan.Span
	isError                          bool
}

// flushBlocks appends the pending blocks to the record, after Finish.
func (d *decoder) flushBlocks() {
	n := len(d.pending)
	if n == 0 {
		return
	}
	if len(d.blockSlab) < n {
		d.blockSlab = make([]Block, max(64, n))
	}
	bs := d.blockSlab[:n:n]
	d.blockSlab = d.blockSlab[n:]
	for i, p := range d.pending {
		t := p.typ
		if t == "" {
			t = d.strs.At(p.typSpan)
		}
		bs[i] = Block{Type: t, Text: d.strs.At(p.text), ID: d.strs.At(p.id), Name: d.strs.At(p.name),
			ToolUseID: d.strs.At(p.toolUse), IsError: p.isError}
	}
	d.pending = d.pending[:0]
	if d.rec.Blocks == nil {
		d.rec.Blocks = bs
	} else {
		d.rec.Blocks = append(d.rec.Blocks, bs...)
	}
}

func (d *decoder) newRecord() *Record {
	if len(d.slab) == 0 {
		d.slab = make([]Record, 32)
	}
	r := &d.slab[0]
	d.slab = d.slab[1:]
	return r
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// DecodeLine decodes one physical line; a blank line yields nothing.
func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	b := line.Bytes
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
	if err != nil {
		return dst, fmt.Errorf("claude: %w: %w", ErrNotRecord, err)
	}
	return append(dst, event(rec, line.Pos)), nil
}

func event(rec *Record, pos events.Position) events.Event {
	return events.Event{
		Stream:     "claude_transcript",
		Pos:        pos,
		UUID:       rec.UUID,
		ParentUUID: rec.ParentUUID,
		Time:       events.Time{Ms: rec.TimeMs, OK: rec.TimeOK},
		Kind:       kindOf(rec),
		Body:       rec,
	}
}

// DecodeFused implements events.FusedCodec: the line at the start of b is
// parsed where it lies, and is fused when the object is directly followed
// by its newline, holds no other outside its long strings (which, being
// JSON strings, hold none) and decodes without error — exactly the lines
// DecodeLine decodes without error from b[:n], with the same result.
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
	if err != nil || n >= len(b) || b[n] != '\n' || n > max || d.dup {
		return dst, 0, false // a repeated key: DecodeLine reads it canonically
	}
	d.b = b[:n]
	if !d.longs.Gaps(d.b, objscan.NoNewline) {
		return dst, 0, false
	}
	rec, err := d.finish()
	if err != nil {
		return dst, 0, false
	}
	return append(dst, event(rec, pos)), n, true
}

func (d *decoder) decode(b []byte, i int) (*Record, error) {
	end, err := d.parse(b, i)
	if err != nil {
		return nil, err
	}
	if j := jsonscan.SkipSpace(b, end); j != len(b) {
		return nil, fmt.Errorf("byte %d: trailing bytes after the record", j)
	}
	if d.dup {
		c, err := canonical(b[i:end])
		if err != nil {
			return nil, err
		}
		if _, err := d.parse(c, 0); err != nil {
			return nil, err
		}
	}
	return d.finish()
}

// canonical is the object's text as JSON.parse reads it: every repeated
// key keeps only its last value, whole, at every level (encoding/json's
// reading into a map does the same), written back without repeats.
// Numbers keep their text; strings are written back escaped as needed.
// Only a line whose read keys repeat takes this path: Claude Code never
// writes one, so its cost does not matter.
func canonical(obj []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("repeated keys: %w", err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("repeated keys: %w", err)
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// parse reads the object at b[i] into a new record and returns where it ends.
func (d *decoder) parse(b []byte, i int) (int, error) {
	*d = decoder{b: b, strs: d.strs, content: -1, slab: d.slab, blockSlab: d.blockSlab, pending: d.pending[:0]}
	d.rec = d.newRecord()
	d.strs.Reset()
	return objscan.Object(b, i, 1, maxDepth, d.top)
}

// finish checks and completes the record parse read.
func (d *decoder) finish() (*Record, error) {
	if !d.hasType {
		return nil, errors.New("no type string")
	}
	d.strs.Finish()
	d.flushBlocks()
	rec := d.rec
	if d.content >= 0 {
		// The record's strings are strings now: the deferred content's
		// go into a second buffer. Text is kept by the role, as when the
		// role comes first, so that key order never changes a record.
		d.strs.Reset()
		_, _ = d.blocks(d.content, rec.Role != "assistant")
		d.strs.Finish()
		d.flushBlocks()
	}
	rec.TimeMs, rec.TimeOK = objscan.Timestamp(rec.Timestamp)
	return rec, nil
}

func (d *decoder) top(key []byte, v int) (int, error) {
	b, rec := d.b, d.rec
	var dst *string
	switch string(key) {
	case "type":
		seen(d, &d.seenTop, 0)
		ok, end, err := d.strs.AddKnown(&rec.Type, b, v, 1, maxDepth, knownType)
		d.hasType = ok
		return end, err
	case "subtype":
		seen(d, &d.seenTop, 1)
		_, end, err := d.strs.AddKnown(&rec.Subtype, b, v, 1, maxDepth, knownSubtype)
		return end, err
	case "uuid":
		seen(d, &d.seenTop, 2)
		dst = &rec.UUID
	case "parentUuid":
		seen(d, &d.seenTop, 3)
		dst = &rec.ParentUUID
	case "logicalParentUuid":
		seen(d, &d.seenTop, 4)
		dst = &rec.LogicalParentUUID
	case "sessionId":
		seen(d, &d.seenTop, 5)
		dst = &rec.SessionID
	case "timestamp":
		seen(d, &d.seenTop, 6)
		dst = &rec.Timestamp
	case "cwd":
		seen(d, &d.seenTop, 7)
		dst = &rec.Cwd
	case "version":
		seen(d, &d.seenTop, 8)
		dst = &rec.Version
	case "promptId":
		seen(d, &d.seenTop, 9)
		dst = &rec.PromptID
	case "promptSource":
		seen(d, &d.seenTop, 10)
		dst = &rec.PromptSource
	case "interruptedMessageId":
		seen(d, &d.seenTop, 11)
		dst = &rec.InterruptedMessageID
	case "operation":
		seen(d, &d.seenTop, 12)
		dst = &rec.Operation
	case "leafUuid":
		seen(d, &d.seenTop, 13)
		dst = &rec.LeafUUID
	case "isSidechain":
		seen(d, &d.seenTop, 14)
		return flag(&rec.IsSidechain, b, v)
	case "isMeta":
		seen(d, &d.seenTop, 15)
		return flag(&rec.IsMeta, b, v)
	case "isCompactSummary":
		seen(d, &d.seenTop, 16)
		return flag(&rec.IsCompactSummary, b, v)
	case "isApiErrorMessage":
		seen(d, &d.seenTop, 17)
		return flag(&rec.IsAPIErrorMessage, b, v)
	case "interruptedByShutdown":
		seen(d, &d.seenTop, 18)
		return flag(&rec.InterruptedByShutdown, b, v)
	case "preventedContinuation":
		seen(d, &d.seenTop, 19)
		return flag(&rec.PreventedContinuation, b, v)
	case "hookErrors":
		seen(d, &d.seenTop, 20)
		return d.count(&rec.HookErrors, &rec.HasHookErrors, b, v)
	case "hookAdditionalContext":
		seen(d, &d.seenTop, 21)
		var has bool
		return d.count(&rec.HookContexts, &has, b, v)
	case "origin":
		seen(d, &d.seenTop, 22)
		if b[v] != '{' {
			return d.longs.Skip(b, v, 1, maxDepth)
		}
		var kinds uint8
		return objscan.Object(b, v, 2, maxDepth, func(key []byte, v int) (int, error) {
			if string(key) == "kind" {
				seen(d, &kinds, 0)
				_, end, err := d.strs.Add(&rec.OriginKind, b, v, 2, maxDepth)
				return end, err
			}
			return d.longs.Skip(b, v, 2, maxDepth)
		})
	case "message":
		seen(d, &d.seenTop, 23)
		if b[v] != '{' {
			return d.longs.Skip(b, v, 1, maxDepth)
		}
		return objscan.Object(b, v, 2, maxDepth, d.message)
	case "attachment":
		seen(d, &d.seenTop, 24)
		if b[v] != '{' {
			return d.longs.Skip(b, v, 1, maxDepth)
		}
		return objscan.Object(b, v, 2, maxDepth, d.attachment)
	default:
		return d.longs.Skip(b, v, 1, maxDepth)
	}
	_, end, err := d.strs.Add(dst, b, v, 1, maxDepth)
	return end, err
}

// count reads a top-level array's length (a stop_hook_summary's hookErrors
// and hookAdditionalContext); a value that is not an array is skipped and
// leaves has false.
func (d *decoder) count(n *int, has *bool, b []byte, v int) (int, error) {
	*n, *has = 0, false // a repeated key: the last value counts, as in JSON.parse
	if b[v] != '[' {
		return d.longs.Skip(b, v, 1, maxDepth)
	}
	*has = true
	return objscan.Array(b, v, 2, maxDepth, func(e int) (int, error) {
		*n++
		return d.longs.Skip(b, e, 2, maxDepth)
	})
}

func flag(dst *bool, b []byte, v int) (int, error) {
	x, _, end, err := objscan.Bool(b, v, 1, maxDepth)
	*dst = x
	return end, err
}

// attachment reads an attachment's type and, for a queued_command, its
// prompt (a string, or text blocks) and origin kind.
func (d *decoder) attachment(key []byte, v int) (int, error) {
	b, rec := d.b, d.rec
	switch string(key) {
	case "type":
		seen(d, &d.seenAtt, 0)
		_, end, err := d.strs.Add(&rec.AttachmentType, b, v, 2, maxDepth)
		return end, err
	case "prompt":
		seen(d, &d.seenAtt, 1)
		if b[v] == '[' {
			var parts []byte
			end, err := objscan.Array(b, v, 3, maxDepth, func(e int) (int, error) {
				if b[e] != '{' {
					return d.longs.Skip(b, e, 3, maxDepth)
				}
				var texts uint8
				return objscan.Object(b, e, 4, maxDepth, func(key []byte, v int) (int, error) {
					if string(key) != "text" {
						return d.longs.Skip(b, v, 4, maxDepth)
					}
					seen(d, &texts, 0)
					s, _, end, err := objscan.String(b, v, 4, maxDepth)
					if len(parts) > 0 {
						parts = append(parts, '\n')
					}
					parts = append(parts, s...)
					return end, err
				})
			})
			rec.AttachmentPrompt = string(parts)
			return end, err
		}
		_, end, err := d.strs.Add(&rec.AttachmentPrompt, b, v, 2, maxDepth)
		return end, err
	case "origin":
		seen(d, &d.seenAtt, 2)
		if b[v] != '{' {
			return d.longs.Skip(b, v, 2, maxDepth)
		}
		var kinds uint8
		return objscan.Object(b, v, 3, maxDepth, func(key []byte, v int) (int, error) {
			if string(key) == "kind" {
				seen(d, &kinds, 0)
				_, end, err := d.strs.Add(&rec.AttachmentOrigin, b, v, 3, maxDepth)
				return end, err
			}
			return d.longs.Skip(b, v, 3, maxDepth)
		})
	}
	return d.longs.Skip(b, v, 2, maxDepth)
}

// message reads the message object in the same pass. Its content is walked
// in place once the role says whether user text is kept (role precedes
// content as Claude Code writes them); otherwise after the record.
func (d *decoder) message(key []byte, v int) (int, error) {
	b, rec := d.b, d.rec
	var dst *string
	switch string(key) {
	case "id":
		seen(d, &d.seenMsg, 0)
		dst = &rec.MessageID
	case "role":
		seen(d, &d.seenMsg, 1)
		// Read at once, not at Finish: the content's walk depends on it.
		if k, end, ok := objscan.Known(b, v, knownRole); ok {
			rec.Role = k
			return end, nil
		}
		s, _, end, err := objscan.String(b, v, 2, maxDepth)
		rec.Role = s
		return end, err
	case "model":
		seen(d, &d.seenMsg, 2)
		dst = &rec.Model
	case "stop_reason":
		seen(d, &d.seenMsg, 3)
		ok, end, err := d.strs.AddKnown(&rec.StopReason, b, v, 2, maxDepth, knownStop)
		rec.HasStopReason = ok
		return end, err
	case "content":
		seen(d, &d.seenMsg, 4)
		switch {
		case b[v] == '"' && rec.Role != "":
			rec.ContentIsString = true
			if rec.Role != "assistant" {
				_, end, err := d.strs.Add(&rec.Text, b, v, 2, maxDepth)
				return end, err
			}
			return d.longs.Skip(b, v, 2, maxDepth)
		case b[v] == '[' && rec.Role != "":
			return d.blocks(v, rec.Role != "assistant")
		}
		end, err := d.longs.Skip(b, v, 2, maxDepth)
		if b[v] == '"' || b[v] == '[' {
			d.content = v
		}
		return end, err
	default:
		return d.longs.Skip(b, v, 2, maxDepth)
	}
	_, end, err := d.strs.Add(dst, b, v, 2, maxDepth)
	return end, err
}

// blocks reads the content at b[v] (a string or an array of blocks).
func (d *decoder) blocks(v int, keepText bool) (int, error) {
	b, rec := d.b, d.rec
	if b[v] == '"' {
		rec.ContentIsString = true
		s, _, end, err := objscan.String(b, v, 2, maxDepth)
		if keepText {
			rec.Text = s
		}
		return end, err
	}
	return objscan.Array(b, v, 3, maxDepth, func(e int) (int, error) {
		if b[e] != '{' {
			return d.longs.Skip(b, e, 3, maxDepth)
		}
		var bl pendingBlock
		var seenBl uint8
		end, err := objscan.Object(b, e, 4, maxDepth, func(key []byte, v int) (int, error) {
			var dst *objscan.Span
			switch string(key) {
			case "type":
				seen(d, &seenBl, 0)
				if k, end, ok := objscan.Known(b, v, knownBlock); ok {
					bl.typ, bl.typSpan = k, objscan.Span{}
					return end, nil
				}
				bl.typ = ""
				dst = &bl.typSpan
			case "id":
				seen(d, &seenBl, 1)
				dst = &bl.id
			case "name":
				seen(d, &seenBl, 2)
				dst = &bl.name
			case "tool_use_id":
				seen(d, &seenBl, 3)
				dst = &bl.toolUse
			case "is_error":
				seen(d, &seenBl, 4)
				x, _, end, err := objscan.Bool(b, v, 4, maxDepth)
				bl.isError = x
				return end, err
			case "text":
				seen(d, &seenBl, 5)
				if keepText {
					dst = &bl.text
				}
			}
			if dst == nil {
				return d.longs.Skip(b, v, 4, maxDepth)
			}
			sp, _, end, err := d.strs.Span(b, v, 4, maxDepth)
			*dst = sp
			return end, err
		})
		d.pending = append(d.pending, bl)
		return end, err
	})
}

func kindOf(rec *Record) events.Kind {
	if k := knownKind(rec.Type, rec.Subtype); k != "" {
		return k
	}
	if rec.Subtype != "" {
		return events.Kind("claude." + rec.Type + "/" + rec.Subtype)
	}
	return events.Kind("claude." + rec.Type)
}
