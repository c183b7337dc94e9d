package claude

import (
	"errors"
	"fmt"
	"time"

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

// DecodeLine decodes one physical line; a blank line yields nothing.
func (Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	b := line.Bytes
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) {
		return dst, nil
	}
	rec, err := decodeRecord(b, i)
	if err != nil {
		return dst, fmt.Errorf("claude: %w: %w", ErrNotRecord, err)
	}
	kind := events.Kind("claude." + rec.Type)
	if rec.Subtype != "" {
		kind = events.Kind("claude." + rec.Type + "/" + rec.Subtype)
	}
	return append(dst, events.Event{
		Stream:     "claude_transcript",
		Pos:        line.Pos,
		UUID:       rec.UUID,
		ParentUUID: rec.ParentUUID,
		Time:       events.Time{Ms: rec.TimeMs, OK: rec.TimeOK},
		Kind:       kind,
		Body:       rec,
	}), nil
}

func decodeRecord(b []byte, i int) (*Record, error) {
	rec := &Record{}
	hasType := false
	var message [2]int
	str := func(dst *string, v int) (int, error) {
		s, _, end, err := objscan.String(b, v, 1, maxDepth)
		*dst = s
		return end, err
	}
	flag := func(dst *bool, v int) (int, error) {
		x, _, end, err := objscan.Bool(b, v, 1, maxDepth)
		*dst = x
		return end, err
	}
	end, err := objscan.Object(b, i, 1, maxDepth, func(key []byte, v int) (int, error) {
		switch string(key) {
		case "type":
			s, ok, end, err := objscan.String(b, v, 1, maxDepth)
			rec.Type, hasType = s, ok
			return end, err
		case "subtype":
			return str(&rec.Subtype, v)
		case "uuid":
			return str(&rec.UUID, v)
		case "parentUuid":
			return str(&rec.ParentUUID, v)
		case "logicalParentUuid":
			return str(&rec.LogicalParentUUID, v)
		case "sessionId":
			return str(&rec.SessionID, v)
		case "timestamp":
			return str(&rec.Timestamp, v)
		case "cwd":
			return str(&rec.Cwd, v)
		case "version":
			return str(&rec.Version, v)
		case "promptId":
			return str(&rec.PromptID, v)
		case "promptSource":
			return str(&rec.PromptSource, v)
		case "interruptedMessageId":
			return str(&rec.InterruptedMessageID, v)
		case "operation":
			return str(&rec.Operation, v)
		case "leafUuid":
			return str(&rec.LeafUUID, v)
		case "isSidechain":
			return flag(&rec.IsSidechain, v)
		case "isMeta":
			return flag(&rec.IsMeta, v)
		case "isCompactSummary":
			return flag(&rec.IsCompactSummary, v)
		case "isApiErrorMessage":
			return flag(&rec.IsAPIErrorMessage, v)
		case "interruptedByShutdown":
			return flag(&rec.InterruptedByShutdown, v)
		case "preventedContinuation":
			return flag(&rec.PreventedContinuation, v)
		case "origin":
			if b[v] != '{' {
				return objscan.Skip(b, v, 1, maxDepth)
			}
			return objscan.Object(b, v, 2, maxDepth, func(key []byte, v int) (int, error) {
				if string(key) == "kind" {
					s, _, end, err := objscan.String(b, v, 2, maxDepth)
					rec.OriginKind = s
					return end, err
				}
				return objscan.Skip(b, v, 2, maxDepth)
			})
		case "message":
			end, err := objscan.Skip(b, v, 1, maxDepth)
			message = [2]int{v, end}
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
	if !hasType {
		return nil, errors.New("no type string")
	}
	if t, err := time.Parse(time.RFC3339Nano, rec.Timestamp); err == nil {
		rec.TimeMs, rec.TimeOK = t.UnixMilli(), true
	}
	if message[1] > 0 && b[message[0]] == '{' {
		decodeMessage(b[:message[1]], message[0], rec)
	}
	return rec, nil
}

// decodeMessage reads the message object (already validated). The role is
// read before the content so that only user text is kept, whatever the
// member order.
func decodeMessage(b []byte, v int, rec *Record) {
	content := -1
	_, _ = objscan.Object(b, v, 2, maxDepth, func(key []byte, v int) (int, error) {
		var dst *string
		switch string(key) {
		case "id":
			dst = &rec.MessageID
		case "role":
			dst = &rec.Role
		case "model":
			dst = &rec.Model
		case "stop_reason":
			s, ok, end, err := objscan.String(b, v, 2, maxDepth)
			rec.StopReason, rec.HasStopReason = s, ok
			return end, err
		case "content":
			content = v
		}
		if dst != nil {
			s, _, end, err := objscan.String(b, v, 2, maxDepth)
			*dst = s
			return end, err
		}
		return objscan.Skip(b, v, 2, maxDepth)
	})
	if content < 0 {
		return
	}
	keepText := rec.Type != TypeAssistant
	switch b[content] {
	case '"':
		rec.ContentIsString = true
		if keepText {
			rec.Text, _, _, _ = objscan.String(b, content, 2, maxDepth)
		}
	case '[':
		_, _ = objscan.Array(b, content, 3, maxDepth, func(e int) (int, error) {
			if b[e] != '{' {
				return objscan.Skip(b, e, 3, maxDepth)
			}
			var bl Block
			end, err := objscan.Object(b, e, 4, maxDepth, func(key []byte, v int) (int, error) {
				var dst *string
				switch string(key) {
				case "type":
					dst = &bl.Type
				case "id":
					dst = &bl.ID
				case "name":
					dst = &bl.Name
				case "tool_use_id":
					dst = &bl.ToolUseID
				case "is_error":
					x, _, end, err := objscan.Bool(b, v, 4, maxDepth)
					bl.IsError = x
					return end, err
				case "text":
					if keepText {
						dst = &bl.Text
					}
				}
				if dst != nil {
					s, _, end, err := objscan.String(b, v, 4, maxDepth)
					*dst = s
					return end, err
				}
				return objscan.Skip(b, v, 4, maxDepth)
			})
			rec.Blocks = append(rec.Blocks, bl)
			return end, err
		})
	}
}
