package v0

import (
	"strings"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh/internal/dshact"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness is a v0 log's logical form for turn.Read: the header line, then
// one storage line per event as Record.AppendJSON writes it (rows expanded)
// — what Scan yields from a raw or zstd log, so the torn tail and the frames
// are Scan's business and the lines here are whole. `tailproof status
// --harness dsh` builds that form from the file and decides over it.
func Harness() turn.Harness {
	return turn.Harness{Name: "dsh", Codec: LineCodec{}, Mapper: Mapper{}, Options: events.Options{RequireNewline: true}}
}

// LineCodec decodes a v0 log's logical lines: line 1 the header, every
// other line one event (a packed row line, all of its members).
type LineCodec struct{}

// Name implements events.Codec.
func (LineCodec) Name() string { return "dsh-v0" }

// Stream implements events.Codec.
func (LineCodec) Stream() events.Stream { return events.StreamSessionLog }

// HeaderBody is the header line's body.
type HeaderBody struct{ Header }

// Describe implements events.Body.
func (h *HeaderBody) Describe() string { return "session " + h.ID }

// RecordBody is an event line's body.
type RecordBody struct{ Record }

// DecodeLine implements events.Codec.
func (LineCodec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	if line.Pos.Line == 1 {
		h, err := ParseHeader(line.Bytes)
		if err != nil {
			return dst, err
		}
		return append(dst, events.Event{Stream: events.StreamSessionLog, Pos: line.Pos,
			Time: events.Time{Ms: h.CreatedAt, OK: true}, Kind: "dsh.session", Body: &HeaderBody{h}}), nil
	}
	rs, err := ParseLine(nil, line.Bytes)
	if err != nil {
		return dst, err
	}
	for _, r := range rs {
		r = r.Clone()
		t := events.Time{}
		if r.Time == float64(int64(r.Time)) {
			t = events.Time{Ms: int64(r.Time), OK: true}
		}
		dst = append(dst, events.Event{Stream: events.StreamSessionLog, Pos: line.Pos, Time: t,
			Kind: events.Kind("dsh." + r.Type), Body: &RecordBody{r}})
	}
	return dst, nil
}

// Mapper maps v0 events onto the vocabulary, as events/dsh's Mapper maps
// v1 (ADR 0018's table), reading the shapes dsh-session 0.1.0-rc.8 writes
// and the legacy ones its load upgrades (projections/dshrecovery mirrors
// them): user messages as identified messages ({id, role, content,
// source}) or the legacy {content, source}; assistant messages as
// {turn, step, message} or the legacy {content, provenance}; steering/message wrapped ({turn, message}) or legacy;
// tool/result as {message: {source: {kind: tool, callId}, content:
// [tool-result]}} or the legacy {callId, content, isError}. turn/end's
// reason kinds map as v1's, and blocked → interrupted. tool/call is a note
// (its assistant/message block opened the call); a row's members are
// assistant/chunk events (Record.Clone expands them); the other known types are notes and unknown types unknown.
type Mapper struct{}

// Map implements turn.Mapper.
func (Mapper) Map(dst []turn.Act, ev events.Event) []turn.Act {
	a := turn.Act{Pos: ev.Pos, Time: ev.Time, Native: ev.Kind}
	if _, ok := ev.Body.(*HeaderBody); ok {
		a.Kind = turn.KindSession
		return append(dst, a)
	}
	b, ok := ev.Body.(*RecordBody)
	if !ok {
		return dst
	}
	r := b.Record
	if r.Seq == float64(int64(r.Seq)) {
		a.Seq, a.HasSeq = int64(r.Seq), true
	}
	d := members(r.Data)
	switch r.Type {
	case TypeTurnStart:
		a.Kind, a.Turn = turn.KindTurnStart, string(d.get("turn"))
	case TypeTurnEnd:
		a.Kind, a.Turn = turn.KindTurnEnd, string(d.get("turn"))
		a.End, a.Reason = endOf(members(d.get("reason")))
	case TypeUserMessage:
		promptAct(&a, d)
	case TypeSteeringMessage:
		if w := d.get("message"); len(w) > 0 && w[0] == '{' {
			promptAct(&a, members(w))
		} else {
			promptAct(&a, d)
		}
		a.Turn, a.Steer = string(d.get("turn")), true
	case TypeAssistantMessage:
		a.Turn = string(d.get("turn"))
		a.Message = dshact.MessageID(a.Turn, string(d.get("step")))
		a.Kind, a.Stop = turn.KindOutput, turn.StopUnclear
		content := d.get("content") // legacy: {content, provenance}
		if d.has("message") {
			content = members(d.get("message")).get("content")
		}
		blocks, _ := Array(nil, content)
		for _, raw := range blocks {
			bl := members(raw)
			if t, _ := String(bl.get("type")); t != "tool-call" {
				continue
			}
			c := a
			c.Kind, c.Stop = turn.KindToolCall, turn.StopOpen
			c.Call, _ = String(bl.get("id"))
			c.Name, _ = String(bl.get("name"))
			dst = append(dst, c)
			a.Stop = turn.StopContinue
		}
	case TypeAssistantChunk:
		a.Kind, a.Stop, a.Turn = turn.KindOutput, turn.StopOpen, string(d.get("turn"))
		if t, _ := String(members(d.get("chunk")).get("type")); t == "finish" || t == "usage" {
			a.Kind = turn.KindNote
		}
	case TypeToolResult:
		a.Kind, a.Turn = turn.KindToolResult, string(d.get("turn"))
		if !d.has("message") {
			a.Call, _ = String(d.get("callId"))
			a.Failed = string(d.get("isError")) == "true"
			break
		}
		m := members(d.get("message"))
		a.Call, _ = String(members(m.get("source")).get("callId"))
		blocks, _ := Array(nil, m.get("content"))
		for _, raw := range blocks {
			a.Failed = a.Failed || string(members(raw).get("isError")) == "true"
		}
	default:
		a.Kind = turn.KindNote
		if !KnownTypes[r.Type] {
			a.Kind = turn.KindUnknown
		}
	}
	return append(dst, a)
}

// obj is an object's members; a value that is not an object has none.
type obj []Member

func members(raw []byte) obj {
	ms, _ := Object(nil, raw)
	return ms
}

// get is the last member named key (JSON.parse keeps the last), nil when
// absent.
func (o obj) get(key string) []byte {
	var v []byte
	for _, m := range o {
		if string(m.Key) == key {
			v = m.Value
		}
	}
	return v
}

func (o obj) has(key string) bool { return o.get(key) != nil }

func promptAct(a *turn.Act, m obj) {
	blocks, _ := Array(nil, m.get("content"))
	var text strings.Builder
	for _, raw := range blocks {
		bl := members(raw)
		if t, _ := String(bl.get("type")); t == "text" {
			s, _ := String(bl.get("text"))
			text.WriteString(s)
		}
	}
	kind, _ := String(members(m.get("source")).get("kind"))
	dshact.Prompt(a, text.String(), kind)
}

// endOf maps v0's reason with the shared table, plus the published format's
// blocked (a turn a hook or policy stopped): interrupted.
func endOf(r obj) (turn.End, string) {
	d := dshact.Reason{}
	d.Kind, _ = String(r.get("kind"))
	if d.Kind == "blocked" {
		return turn.EndInterrupted, d.Kind
	}
	d.Message, d.HasMessage = String(r.get("message"))
	d.Why, d.HasWhy = String(r.get("reason"))
	return dshact.End(d)
}
