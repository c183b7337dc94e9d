package codex

import (
	"errors"
	"fmt"
	"time"
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
	if !utf8.Valid(b) {
		return dst, fmt.Errorf("codex: %w: invalid UTF-8", ErrNotRecord)
	}
	rec, err := decodeRecord(b, i)
	if err != nil {
		return dst, fmt.Errorf("codex: %w: %w", ErrNotRecord, err)
	}
	kind := events.Kind("codex." + rec.Type)
	if rec.PayloadType != "" {
		kind = events.Kind("codex." + rec.Type + "/" + rec.PayloadType)
	}
	return append(dst, events.Event{
		Stream: "codex_rollout",
		Pos:    line.Pos,
		Time:   events.Time{Ms: rec.TimeMs, OK: rec.TimeOK},
		Kind:   kind,
		Body:   rec,
	}), nil
}

type span struct{ start, end int }

func decodeRecord(b []byte, i int) (*Record, error) {
	rec := &Record{}
	var (
		payload                    span
		hasTS, hasType, hasPayload bool
	)
	end, err := objscan.Object(b, i, 1, maxDepth, func(key []byte, v int) (int, error) {
		switch string(key) {
		case "timestamp":
			s, ok, end, err := objscan.String(b, v, 1, maxDepth)
			rec.Timestamp, hasTS = s, ok
			return end, err
		case "type":
			s, ok, end, err := objscan.String(b, v, 1, maxDepth)
			rec.Type, hasType = s, ok
			return end, err
		case "ordinal":
			n, ok, end, err := objscan.Int(b, v, 1, maxDepth)
			rec.Ordinal, rec.HasOrdinal = n, ok && n >= 0
			return end, err
		case "payload":
			end, err := objscan.Skip(b, v, 1, maxDepth)
			payload, hasPayload = span{v, end}, b[v] == '{'
			return end, err
		}
		return objscan.Skip(b, v, 1, maxDepth)
	})
	if err != nil {
		return nil, err
	}
	if j := jsonscan.SkipSpace(b, end); j != len(b) {
		return nil, fmt.Errorf("byte %d: trailing bytes after the record", j)
	}
	if !hasTS {
		return nil, errors.New("no timestamp string")
	}
	if !hasType {
		return nil, errors.New("no type string")
	}
	if t, err := time.Parse(time.RFC3339Nano, rec.Timestamp); err == nil {
		rec.TimeMs, rec.TimeOK = t.UnixMilli(), true
	}
	switch rec.Type {
	case ItemSessionMeta, ItemResponseItem, ItemCompacted, ItemTurnContext, ItemEventMsg:
		rec.Known = true
	default:
		return rec, nil
	}
	if !hasPayload {
		return nil, errors.New(rec.Type + " without a payload object")
	}
	if err := decodePayload(b, payload, rec); err != nil {
		return nil, err
	}
	if (rec.Type == ItemResponseItem || rec.Type == ItemEventMsg) && rec.PayloadType == "" {
		return nil, errors.New(rec.Type + " payload without a type")
	}
	return rec, nil
}

// decodePayload reads the payload members a decision uses. The payload was
// validated already; its text-bearing members (message, content) are read
// after the object, once the payload type says whether they matter.
func decodePayload(b []byte, p span, rec *Record) error {
	var message, content span
	str := func(dst *string) func(v int) (int, error) {
		return func(v int) (int, error) {
			s, _, end, err := objscan.String(b, v, 2, maxDepth)
			*dst = s
			return end, err
		}
	}
	_, err := objscan.Object(b[:p.end], p.start, 2, maxDepth, func(key []byte, v int) (int, error) {
		var read func(int) (int, error)
		switch string(key) {
		case "type":
			read = str(&rec.PayloadType)
		case "id":
			read = str(&rec.ID)
		case "turn_id":
			read = str(&rec.TurnID)
		case "call_id":
			read = str(&rec.CallID)
		case "name":
			read = str(&rec.Name)
		case "role":
			read = str(&rec.Role)
		case "phase":
			read = str(&rec.Phase)
		case "reason":
			read = str(&rec.Reason)
		case "kind":
			read = str(&rec.Kind)
		case "status":
			read = str(&rec.Status)
		case "cwd":
			read = str(&rec.Cwd)
		case "cli_version":
			read = str(&rec.CLIVersion)
		case "originator":
			read = str(&rec.Originator)
		case "source":
			read = str(&rec.Source)
		case "forked_from_id":
			read = str(&rec.ForkedFromID)
		case "history_mode":
			read = str(&rec.HistoryMode)
		case "model":
			read = str(&rec.Model)
		case "num_turns":
			n, _, end, err := objscan.Int(b, v, 2, maxDepth)
			rec.NumTurns = n
			return end, err
		case "message":
			end, err := objscan.Skip(b, v, 2, maxDepth)
			message = span{v, end}
			return end, err
		case "content":
			end, err := objscan.Skip(b, v, 2, maxDepth)
			content = span{v, end}
			return end, err
		default:
			return objscan.Skip(b, v, 2, maxDepth)
		}
		return read(v)
	})
	if err != nil {
		return err
	}
	switch {
	case rec.Type == ItemEventMsg && (rec.PayloadType == "user_message" || rec.PayloadType == "injected_message"):
		if message.end > 0 {
			rec.Text, rec.HasText, _, _ = objscan.String(b, message.start, 2, maxDepth)
		}
	case rec.Type == ItemEventMsg && rec.PayloadType == "error":
		if message.end > 0 {
			s, _, _, _ := objscan.String(b, message.start, 2, maxDepth)
			rec.Reason = shorten(s, 200)
		}
	case rec.Type == ItemResponseItem && rec.PayloadType == "message" && rec.Role != "assistant" && content.end > 0:
		rec.Text, rec.HasText = inputText(b, content.start), true
	}
	return nil
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

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
