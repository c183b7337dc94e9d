package qwen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tailproof/tailproof/events"
)

// ErrNotRecord classifies a line that is JSON but not a chat record object.
var ErrNotRecord = errors.New("not a chat record")

// DecodeOptions tune the codec.
type DecodeOptions struct {
	// KeepPayloads keeps every part's raw JSON (Part.Raw). Off by default:
	// reconciliation never needs tool outputs or function arguments, and a
	// transcript of gigabytes must not materialize them.
	KeepPayloads bool
}

// Codec is the events.Codec for Qwen transcript lines. Kinds are
// "qwen.<type>" or "qwen.<type>/<subtype>"; the body is *Record. Two records
// glued on one line (`}{`, Qwen #3606) both decode.
type Codec struct{ Opts DecodeOptions }

func (Codec) Name() string          { return "qwen-transcript" }
func (Codec) Stream() events.Stream { return events.StreamTranscript }

func (c Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	trimmed := bytes.TrimSpace(line.Bytes)
	if len(trimmed) == 0 {
		return dst, nil
	}
	dec := json.NewDecoder(bytes.NewReader(line.Bytes))
	for n := 0; ; n++ {
		start := dec.InputOffset()
		var w wire
		err := dec.Decode(&w)
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			if n > 0 {
				return dst, fmt.Errorf("qwen: record %d glued on the line: %w", n+1, err)
			}
			return dst, fmt.Errorf("qwen: %w", err)
		}
		rec, err := w.record(c.Opts)
		if err != nil {
			return dst, err
		}
		pos := line.Pos
		pos.Offset += start
		// Skip whitespace the decoder counted before the value.
		for int(start) < len(line.Bytes) && isSpace(line.Bytes[start]) {
			start++
			pos.Offset++
		}
		dst = append(dst, Envelope(rec, pos))
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// Envelope wraps a record in the event envelope: provenance carried from the
// record's field (system + cron subtype refines to cron), absent otherwise.
func Envelope(rec *Record, pos events.Position) events.Event {
	ev := events.Event{
		Stream:     events.StreamTranscript,
		Pos:        pos,
		UUID:       rec.UUID,
		ParentUUID: rec.ParentUUID,
		Time:       events.Time{Ms: rec.TimeMs, OK: rec.TimeOK},
		Kind:       Kind(rec),
		Body:       rec,
	}
	if p, ok := events.ParseProvenance(rec.Provenance); ok {
		ev.Provenance, ev.Origin = p, events.OriginCarried
		if p == events.ProvenanceSystem && rec.Subtype == SubtypeCron {
			ev.Provenance = events.ProvenanceCron
		}
	}
	return ev
}

// Kind is the event kind of a record.
func Kind(rec *Record) events.Kind {
	if rec.Subtype != "" {
		return events.Kind("qwen." + rec.Type + "/" + rec.Subtype)
	}
	return events.Kind("qwen." + rec.Type)
}

type wire struct {
	UUID           json.RawMessage `json:"uuid"`
	ParentUUID     json.RawMessage `json:"parentUuid"`
	SessionID      json.RawMessage `json:"sessionId"`
	Timestamp      json.RawMessage `json:"timestamp"`
	Type           json.RawMessage `json:"type"`
	Subtype        json.RawMessage `json:"subtype"`
	Provenance     json.RawMessage `json:"provenance"`
	Message        json.RawMessage `json:"message"`
	PromptID       json.RawMessage `json:"promptId"`
	DaemonPromptID json.RawMessage `json:"daemonPromptId"`
	GoalContext    json.RawMessage `json:"goalContext"`
	DeliveredTurn  json.RawMessage `json:"deliveredTurn"`
	BackgroundTurn json.RawMessage `json:"backgroundTurn"`
	SystemPayload  json.RawMessage `json:"systemPayload"`
}

func (w *wire) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("qwen: %w: a JSON %s", ErrNotRecord, jsonKind(b))
	}
	type plain wire
	return json.Unmarshal(b, (*plain)(w))
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

func (w *wire) record(opts DecodeOptions) (*Record, error) {
	r := &Record{}
	r.UUID, _ = str(w.UUID)
	r.ParentUUID, _ = str(w.ParentUUID)
	r.SessionID, _ = str(w.SessionID)
	r.Type, _ = str(w.Type)
	r.Subtype, _ = str(w.Subtype)
	r.Provenance, _ = str(w.Provenance)
	r.PromptID, _ = str(w.PromptID)
	r.DaemonPromptID, _ = str(w.DaemonPromptID)
	r.DeliveredTurn = isTrue(w.DeliveredTurn)
	r.HasBackground = present(w.BackgroundTurn)
	if ts, ok := str(w.Timestamp); ok {
		r.Timestamp = ts
		r.TimeMs, r.TimeOK = ParseTime(ts)
	}
	if present(w.GoalContext) {
		var g struct {
			GoalID   json.RawMessage `json:"goalId"`
			Revision json.RawMessage `json:"revision"`
			TurnID   json.RawMessage `json:"turnId"`
		}
		if json.Unmarshal(w.GoalContext, &g) == nil {
			gc := &GoalContext{Revision: string(bytes.TrimSpace(g.Revision))}
			gc.GoalID, _ = str(g.GoalID)
			gc.TurnID, _ = str(g.TurnID)
			r.GoalContext = gc
		}
	}
	if present(w.Message) {
		c, err := decodeContent(w.Message, opts)
		if err != nil {
			return nil, fmt.Errorf("qwen: record %q: message: %w", r.UUID, err)
		}
		r.Message = c
	}
	if present(w.SystemPayload) {
		decodePayload(r, w.SystemPayload, opts)
	}
	return r, nil
}

// ParseTime parses an ISO 8601 timestamp to Unix milliseconds, as Date.parse
// does for the strings Qwen writes (toISOString).
func ParseTime(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse("2006-01-02T15:04:05.999999999", s)
		if err != nil {
			return 0, false
		}
	}
	return t.UnixMilli(), true
}

func present(m json.RawMessage) bool {
	return len(m) > 0 && !bytes.Equal(m, []byte("null"))
}

func isTrue(m json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(m), []byte("true")) }

// truthy mirrors JavaScript truthiness for a JSON value.
func truthy(m json.RawMessage) bool {
	m = bytes.TrimSpace(m)
	switch {
	case len(m) == 0, bytes.Equal(m, []byte("null")), bytes.Equal(m, []byte("false")), bytes.Equal(m, []byte(`""`)):
		return false
	case m[0] == '-' || (m[0] >= '0' && m[0] <= '9'):
		var f float64
		if json.Unmarshal(m, &f) == nil && f == 0 {
			return false
		}
	}
	return true
}

func str(m json.RawMessage) (string, bool) {
	if len(m) == 0 || m[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(m, &s) != nil {
		return "", false
	}
	return s, true
}

func decodeContent(m json.RawMessage, opts DecodeOptions) (*Content, error) {
	var raw struct {
		Role  json.RawMessage   `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	}
	if m[0] != '{' {
		return nil, fmt.Errorf("%w: message is a JSON %s", ErrNotRecord, jsonKind(m))
	}
	if err := json.Unmarshal(m, &raw); err != nil {
		return nil, err
	}
	c := &Content{}
	c.Role, _ = str(raw.Role)
	c.Parts = make([]Part, 0, len(raw.Parts))
	for _, pm := range raw.Parts {
		c.Parts = append(c.Parts, decodePart(pm, opts))
	}
	return c, nil
}

func decodePart(m json.RawMessage, opts DecodeOptions) Part {
	var p Part
	if opts.KeepPayloads {
		p.Raw = append([]byte(nil), m...)
	}
	if len(m) == 0 || m[0] != '{' {
		return p
	}
	var raw struct {
		Text             json.RawMessage `json:"text"`
		Thought          json.RawMessage `json:"thought"`
		FunctionCall     json.RawMessage `json:"functionCall"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
		InlineData       json.RawMessage `json:"inlineData"`
		FileData         json.RawMessage `json:"fileData"`
	}
	if json.Unmarshal(m, &raw) != nil {
		return p
	}
	switch {
	case raw.FunctionCall != nil:
		p.Kind = PartFunctionCall
		p.ID, p.HasID, p.Name, p.HasName = callIdentity(raw.FunctionCall)
	case raw.FunctionResponse != nil:
		p.Kind = PartFunctionResponse
		p.ID, p.HasID, p.Name, p.HasName = callIdentity(raw.FunctionResponse)
	case raw.InlineData != nil:
		p.Kind = PartInlineData
	case raw.FileData != nil:
		p.Kind = PartFileData
	default:
		if s, ok := str(raw.Text); ok {
			p.Kind = PartText
			p.Text = s
			p.Thought = isTrue(raw.Thought)
		}
	}
	return p
}

func callIdentity(m json.RawMessage) (id string, hasID bool, name string, hasName bool) {
	var raw struct {
		ID   json.RawMessage `json:"id"`
		Name json.RawMessage `json:"name"`
	}
	if len(m) == 0 || m[0] != '{' || json.Unmarshal(m, &raw) != nil {
		return
	}
	id, hasID = str(raw.ID)
	name, hasName = str(raw.Name)
	return
}

func decodePayload(r *Record, m json.RawMessage, opts DecodeOptions) {
	if m[0] != '{' {
		return
	}
	switch r.Subtype {
	case SubtypeChatCompression:
		var raw struct {
			CompressedHistory    json.RawMessage   `json:"compressedHistory"`
			CompletedToolCallIDs []json.RawMessage `json:"completedToolCallIds"`
		}
		_ = json.Unmarshal(m, &raw)
		c := &Compression{HasHistory: truthy(raw.CompressedHistory)}
		if c.HasHistory && raw.CompressedHistory[0] == '[' {
			var items []json.RawMessage
			_ = json.Unmarshal(raw.CompressedHistory, &items)
			for _, it := range items {
				if len(it) > 0 && it[0] == '{' {
					if ct, err := decodeContent(it, opts); err == nil {
						c.History = append(c.History, *ct)
					}
				}
			}
		}
		for _, id := range raw.CompletedToolCallIDs {
			if s, ok := str(id); ok {
				c.CompletedToolCallIDs = append(c.CompletedToolCallIDs, s)
			}
		}
		r.Compression = c
	case SubtypeSlashCommand:
		var raw struct {
			Phase              json.RawMessage   `json:"phase"`
			RawCommand         json.RawMessage   `json:"rawCommand"`
			SentToModel        json.RawMessage   `json:"sentToModel"`
			HiddenInvocation   json.RawMessage   `json:"hiddenInvocation"`
			OutputHistoryItems []json.RawMessage `json:"outputHistoryItems"`
		}
		_ = json.Unmarshal(m, &raw)
		s := &SlashCommand{SentToModel: isTrue(raw.SentToModel), HiddenInvocation: isTrue(raw.HiddenInvocation)}
		s.Phase, _ = str(raw.Phase)
		s.RawCommand, _ = str(raw.RawCommand)
		s.HasOutputItems = raw.OutputHistoryItems != nil
		s.OutputItemsLength = len(raw.OutputHistoryItems)
		for _, it := range raw.OutputHistoryItems {
			var item struct {
				Type json.RawMessage `json:"type"`
			}
			t := ""
			if len(it) > 0 && it[0] == '{' && json.Unmarshal(it, &item) == nil {
				t, _ = str(item.Type)
			}
			s.OutputItemTypes = append(s.OutputItemTypes, t)
		}
		r.SlashCommand = s
	case SubtypeGoalTurnEnd:
		var raw struct {
			ToolCallID json.RawMessage `json:"toolCallId"`
		}
		_ = json.Unmarshal(m, &raw)
		g := &GoalTurnEnd{}
		g.ToolCallID, _ = str(raw.ToolCallID)
		r.GoalTurnEnd = g
	case SubtypeTurnResult:
		var raw struct {
			PromptID    json.RawMessage `json:"promptId"`
			State       json.RawMessage `json:"state"`
			StopReason  json.RawMessage `json:"stopReason"`
			CancelledAt json.RawMessage `json:"cancelledAt"`
			EndedAt     json.RawMessage `json:"endedAt"`
		}
		_ = json.Unmarshal(m, &raw)
		t := &TurnResult{}
		t.PromptID, _ = str(raw.PromptID)
		t.State, _ = str(raw.State)
		t.StopReason, _ = str(raw.StopReason)
		if truthy(raw.CancelledAt) {
			t.HasCancelledAt = true
			t.CancelledAt = string(bytes.TrimSpace(raw.CancelledAt))
		}
		t.EndedAt = string(bytes.TrimSpace(raw.EndedAt))
		r.TurnResult = t
	case SubtypeCustomTitle:
		var raw struct {
			CustomTitle json.RawMessage `json:"customTitle"`
			TitleSource json.RawMessage `json:"titleSource"`
		}
		_ = json.Unmarshal(m, &raw)
		c := &CustomTitle{}
		c.Title, _ = str(raw.CustomTitle)
		c.Source, _ = str(raw.TitleSource)
		r.CustomTitle = c
	case SubtypeNotification, SubtypeCron:
		var raw struct {
			DisplayText    json.RawMessage `json:"displayText"`
			BackgroundTask struct {
				TaskID json.RawMessage `json:"taskId"`
				Status json.RawMessage `json:"status"`
				Kind   json.RawMessage `json:"kind"`
			} `json:"backgroundTask"`
		}
		_ = json.Unmarshal(m, &raw)
		n := &Notification{}
		n.DisplayText, _ = str(raw.DisplayText)
		n.TaskID, _ = str(raw.BackgroundTask.TaskID)
		n.TaskStatus, _ = str(raw.BackgroundTask.Status)
		n.TaskKind, _ = str(raw.BackgroundTask.Kind)
		r.Notification = n
	}
}
