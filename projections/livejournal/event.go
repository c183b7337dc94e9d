package livejournal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sentinel errors. Every error this package returns wraps one of them.
var (
	// ErrMalformed: an event or marker line that does not follow the wire
	// shape (bad JSON, a wrong type, a present-but-invalid optional field).
	ErrMalformed = errors.New("malformed")
	// ErrInvalidLimits: journal bounds that are not positive safe integers.
	ErrInvalidLimits = errors.New("invalid journal limits")
	// ErrUnattributable: a live-journal marker whose owning prompt cannot be
	// proved (no promptId, and the retained events do not name exactly one).
	ErrUnattributable = errors.New("marker not attributable to one prompt")
)

// Daemon event types this package treats specially. Every other type is an
// ordinary replay event and is journaled as is.
const (
	TypeHistoryTruncated  = "history_truncated"
	TypeSlowClientWarning = "slow_client_warning"
	TypeClientEvicted     = "client_evicted"
	TypeReplayComplete    = "replay_complete"
	TypeStreamError       = "stream_error"

	// TypeTurnComplete and TypeTurnError are the formal terminals of a turn.
	// A cancelled turn ends in TypeTurnComplete with a cancelled stop reason,
	// so cancellation needs no type of its own.
	TypeTurnComplete = "turn_complete"
	TypeTurnError    = "turn_error"

	// TypeUserMessage carries a prompt's user input; the repair suffix starts
	// at the earliest one for the target prompt.
	TypeUserMessage = "user_message_chunk"
)

// MaxSafeInteger is the largest integer a JavaScript reader (the daemon and
// its SDK) represents exactly; counts above it cannot round-trip, so they are
// rejected rather than silently rounded.
const MaxSafeInteger = 1<<53 - 1

// IsTransient reports whether events of this type describe the connection
// rather than the turn. They are never journaled, so a replay never shows a
// stale warning or a marker about a previous snapshot.
func IsTransient(typ string) bool {
	switch typ {
	case TypeHistoryTruncated, TypeSlowClientWarning, TypeClientEvicted, TypeReplayComplete, TypeStreamError:
		return true
	}
	return false
}

// IsTerminal reports whether typ formally ends a turn.
func IsTerminal(typ string) bool { return typ == TypeTurnComplete || typ == TypeTurnError }

// Event is one daemon event. The journal, snapshots and the client transcript
// all hold *Event references to the same value; an Event must not be modified
// once it has been handed to any of them. That is what lets a snapshot, a
// checkpoint and a repaired transcript share blocks without copying payloads.
//
// Wire form (one JSON object per line, fields in this order, optional fields
// omitted when empty):
//
//	{"v":1,"id":7,"type":"agent_message_chunk","promptId":"p1","recordId":"r9","data":{...}}
type Event struct {
	ID       int64           // daemon event id, > 0; 0 = none (markers carry none)
	Type     string          // daemon event type, never empty
	PromptID string          // owning prompt, "" when the event names none
	RecordID string          // persisted transcript record this event became, if known
	Data     json.RawMessage // payload, valid JSON; nil = absent
}

// Describe is the event's stable one-line text form for traces and scenarios.
func (e *Event) Describe() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	if e.ID > 0 {
		b.WriteString("#")
		b.WriteString(strconv.FormatInt(e.ID, 10))
		b.WriteByte(' ')
	}
	b.WriteString(e.Type)
	if e.PromptID != "" {
		b.WriteString(" prompt=")
		b.WriteString(e.PromptID)
	}
	if e.RecordID != "" {
		b.WriteString(" record=")
		b.WriteString(e.RecordID)
	}
	if len(e.Data) > 0 {
		b.WriteString(" data=")
		b.Write(e.Data)
	}
	return b.String()
}

// AppendJSON appends the event's wire form to dst.
func (e *Event) AppendJSON(dst []byte) []byte {
	dst = e.appendEnvelope(dst)
	if len(e.Data) > 0 {
		dst = append(dst, dataKey...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

const dataKey = `,"data":`

// encodedSize is len(AppendJSON(nil)) without copying the payload: the
// journal measures every event and most of an event's bytes are its data.
func (e *Event) encodedSize(scratch []byte) (int, []byte) {
	scratch = e.appendEnvelope(scratch[:0])
	n := len(scratch) + 1
	if len(e.Data) > 0 {
		n += len(dataKey) + len(e.Data)
	}
	return n, scratch
}

// appendEnvelope writes every field before data, without the closing brace.
func (e *Event) appendEnvelope(dst []byte) []byte {
	dst = append(dst, `{"v":1`...)
	if e.ID != 0 {
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendInt(dst, e.ID, 10)
	}
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, e.Type)
	if e.PromptID != "" {
		dst = append(dst, `,"promptId":`...)
		dst = appendJSONString(dst, e.PromptID)
	}
	if e.RecordID != "" {
		dst = append(dst, `,"recordId":`...)
		dst = appendJSONString(dst, e.RecordID)
	}
	return dst
}

// MarshalJSON returns the wire form.
func (e *Event) MarshalJSON() ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	return e.AppendJSON(nil), nil
}

func (e *Event) validate() error {
	switch {
	case e == nil:
		return fmt.Errorf("livejournal: nil event: %w", ErrMalformed)
	case e.Type == "":
		return fmt.Errorf("livejournal: event without a type: %w", ErrMalformed)
	case e.ID < 0 || e.ID > MaxSafeInteger:
		return fmt.Errorf("livejournal: event id %d out of range: %w", e.ID, ErrMalformed)
	case len(e.Data) > 0 && !json.Valid(e.Data):
		return fmt.Errorf("livejournal: event %q data is not valid JSON: %w", e.Type, ErrMalformed)
	}
	return nil
}

// DecodeEvent parses one wire line. It is strict where a wrong value would
// change a decision: v must be 1, type a non-empty string, id a positive safe
// integer when present, promptId and recordId non-empty strings when present.
// Unknown fields are ignored so that a newer daemon's additions still decode.
func DecodeEvent(line []byte) (*Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(line), &raw); err != nil {
		return nil, fmt.Errorf("livejournal: event: %w: %w", ErrMalformed, err)
	}
	if raw == nil {
		return nil, fmt.Errorf("livejournal: event is not an object: %w", ErrMalformed)
	}
	v, present, err := optInt(raw, "v")
	if err != nil {
		return nil, fmt.Errorf("livejournal: event: %w", err)
	}
	if !present || v != 1 {
		return nil, fmt.Errorf("livejournal: event: v must be 1: %w", ErrMalformed)
	}
	ev := &Event{}
	if ev.Type, present, err = optString(raw, "type"); err != nil {
		return nil, fmt.Errorf("livejournal: event: %w", err)
	} else if !present {
		return nil, fmt.Errorf("livejournal: event: type is required: %w", ErrMalformed)
	}
	if id, present, err := optInt(raw, "id"); err != nil {
		return nil, fmt.Errorf("livejournal: event %q: %w", ev.Type, err)
	} else if present {
		if id < 1 {
			return nil, fmt.Errorf("livejournal: event %q: id must be positive: %w", ev.Type, ErrMalformed)
		}
		ev.ID = id
	}
	if ev.PromptID, _, err = optString(raw, "promptId"); err != nil {
		return nil, fmt.Errorf("livejournal: event %q: %w", ev.Type, err)
	}
	if ev.RecordID, _, err = optString(raw, "recordId"); err != nil {
		return nil, fmt.Errorf("livejournal: event %q: %w", ev.Type, err)
	}
	if d, ok := raw["data"]; ok {
		// Compact so the journal's byte accounting does not depend on how the
		// sender indented its payload.
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return nil, fmt.Errorf("livejournal: event %q data: %w: %w", ev.Type, ErrMalformed, err)
		}
		ev.Data = buf.Bytes()
	}
	return ev, nil
}

// optString reads a field that must be a non-empty string when present.
func optString(raw map[string]json.RawMessage, key string) (string, bool, error) {
	r, ok := raw[key]
	if !ok {
		return "", false, nil
	}
	var s string
	if bytes.Equal(bytes.TrimSpace(r), []byte("null")) || json.Unmarshal(r, &s) != nil {
		return "", true, fmt.Errorf("%s must be a string: %w", key, ErrMalformed)
	}
	if s == "" {
		return "", true, fmt.Errorf("%s must not be empty: %w", key, ErrMalformed)
	}
	return s, true, nil
}

// optInt reads a field that must be a safe integer when present. A JSON
// number with an exponent or a zero fraction (1e3, 3.0) is an integer to a
// JavaScript writer, so it is accepted; 3.5 is not.
func optInt(raw map[string]json.RawMessage, key string) (int64, bool, error) {
	r, ok := raw[key]
	if !ok {
		return 0, false, nil
	}
	// encoding/json decodes the string "3" into a json.Number; a quoted
	// count is a type error on the wire, so look at the token first.
	r = bytes.TrimSpace(r)
	if len(r) == 0 || (r[0] != '-' && (r[0] < '0' || r[0] > '9')) {
		return 0, true, fmt.Errorf("%s must be a number: %w", key, ErrMalformed)
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil || n == "" {
		return 0, true, fmt.Errorf("%s must be a number: %w", key, ErrMalformed)
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		if i > MaxSafeInteger || i < -MaxSafeInteger {
			return 0, true, fmt.Errorf("%s %d exceeds the safe integer range: %w", key, i, ErrMalformed)
		}
		return i, true, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > MaxSafeInteger {
		return 0, true, fmt.Errorf("%s must be a safe integer, got %s: %w", key, n, ErrMalformed)
	}
	return int64(f), true, nil
}

// optBool reads a field that must be a boolean when present.
func optBool(raw map[string]json.RawMessage, key string) (bool, bool, error) {
	r, ok := raw[key]
	if !ok {
		return false, false, nil
	}
	switch string(bytes.TrimSpace(r)) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, true, fmt.Errorf("%s must be a boolean: %w", key, ErrMalformed)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does, so the output is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
