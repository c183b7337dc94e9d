package dshrecovery

import (
	"fmt"
	"strconv"

	"github.com/tailproof/tailproof/events"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// Recovery codes of dsh-session 0.1.0-rc.8 (lib/index.js, repair region).
const (
	ToolNotStarted     = "TOOL_NOT_STARTED"
	ToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
)

// The closers' texts, verbatim from dsh-session 0.1.0-rc.8's
// interruptedTurnClosers: what a resumed model reads about each call.
const (
	textOutcomeUnknown = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
	textNotStarted     = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)

// Closer is one synthetic event recovery appends, as the line dsh writes.
type Closer struct {
	Type string
	Seq  int64
	Line []byte // JSON, no newline
}

// Closers returns the events that close the open turn, in dsh's order: an
// error tool/result for every tool request without a result (code
// TOOL_OUTCOME_UNKNOWN with sourceEventSeqs [callSeq] when its tool/call was
// recorded, TOOL_NOT_STARTED when not), step/end when a step is open, then
// turn/end {kind:'interrupted'}; seqs continue the log and every time is the
// last event's. None for a balanced or empty log. It fails, rather than write
// what dsh would then refuse, when the fold refused the log or the open
// turn's ids cannot be echoed faithfully.
func (f *Fold) Closers() ([]Closer, error) {
	if err := f.Err(); err != nil {
		return nil, err
	}
	if !f.turnOpen || f.n == 0 {
		return nil, nil
	}
	turn, ok := rawNumber(f.turn)
	if !ok {
		return nil, fmt.Errorf("dshrecovery: %w: the open turn/start has no integer turn (dsh would write a turn/end without one and refuse its own repair)", events.ErrCorrupt)
	}
	if n, _ := strconv.ParseInt(turn, 10, 64); n < 1 {
		// The package's next load checks every turn/end (migrateLegacyTurnEndEvent
		// wants a safe integer turn >= 1): it would refuse the repair it wrote.
		return nil, fmt.Errorf("dshrecovery: %w: the open turn is %s (dsh would write a turn/end its next load refuses)", events.ErrCorrupt, turn)
	}
	seq := f.n
	t := strconv.FormatInt(int64(f.lastTime), 10)
	var out []Closer
	for _, p := range f.pending {
		if !p.idOK {
			return nil, fmt.Errorf("dshrecovery: %w: tool request id %s is not a non-empty string", events.ErrCorrupt, p.id)
		}
		step, ok := optionalNumber(p.step)
		if !ok {
			return nil, fmt.Errorf("dshrecovery: %w: tool request %q has a step recovery cannot echo", events.ErrCorrupt, p.id)
		}
		started := p.callSeq >= 0
		b := []byte(`{"type":"tool/result","seq":`)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"time":`+t+`,"data":{"turn":`+turn...)
		if step != "" {
			b = append(b, `,"step":`+step...)
		}
		id := events.AppendJSString(nil, p.id)
		b = append(b, `,"message":{"id":`...)
		b = events.AppendJSString(b, "interrupted-tool-result-"+p.id+"-"+strconv.FormatInt(seq, 10))
		b = append(b, `,"role":"user","source":{"kind":"tool","callId":`...)
		b = append(b, id...)
		b = append(b, `},"content":[{"type":"tool-result","toolCallId":`...)
		b = append(b, id...)
		b = append(b, `,"isError":true,"content":[{"type":"text","text":`...)
		if started {
			b = events.AppendJSString(b, textOutcomeUnknown)
			b = append(b, `}]}]},"error":{"name":"ToolOutcomeUnknownError","code":"`+ToolOutcomeUnknown+`"}},"surfaceOp":"append","sourceEventSeqs":[`...)
			b = strconv.AppendInt(b, p.callSeq, 10)
			b = append(b, "]}"...)
		} else {
			b = events.AppendJSString(b, textNotStarted)
			b = append(b, `}]}]},"error":{"name":"ToolNotStartedError","code":"`+ToolNotStarted+`"}},"surfaceOp":"append"}`...)
		}
		out = append(out, Closer{Type: v0.TypeToolResult, Seq: seq, Line: b})
		seq++
	}
	if f.stepOpen {
		step, ok := optionalNumber(f.step)
		if !ok {
			return nil, fmt.Errorf("dshrecovery: %w: the open step/start has a step recovery cannot echo", events.ErrCorrupt)
		}
		b := []byte(`{"type":"step/end","seq":`)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"time":`+t+`,"data":{"turn":`+turn...)
		if step != "" {
			b = append(b, `,"step":`+step...)
		}
		b = append(b, "}}"...)
		out = append(out, Closer{Type: v0.TypeStepEnd, Seq: seq, Line: b})
		seq++
	}
	b := []byte(`{"type":"turn/end","seq":`)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"time":`+t+`,"data":{"turn":`+turn+`,"reason":{"kind":"interrupted"}}}`...)
	out = append(out, Closer{Type: v0.TypeTurnEnd, Seq: seq, Line: b})
	return out, nil
}

// rawNumber formats a present integer.
func rawNumber(raw []byte) (string, bool) {
	if raw == nil {
		return "", false
	}
	return jsNumberText(raw)
}

// optionalNumber formats an integer, or "" for an absent value (JSON.stringify
// drops an undefined member).
func optionalNumber(raw []byte) (string, bool) {
	if raw == nil {
		return "", true
	}
	return jsNumberText(raw)
}

// Plan is what recovering one v0 log does, decided from the scan and the fold
// alone; the backend performs it (adapters/dshlog). It mirrors
// dsh-session-persistence-jsonl 0.1.0-rc.8's commitRepair: truncate the torn
// tail, then append the records salvaged from a torn last frame and the
// closers as one batch — one new zstd frame, or raw lines.
type Plan struct {
	// Cut is the length to truncate the file to, or -1 to keep every byte.
	Cut int64
	// Append is the batch to append after the cut, newline-terminated lines:
	// the salvaged records verbatim, then the closers. Empty: append nothing.
	Append []byte
	// Closers are the synthetic events, also at the end of Append.
	Closers []Closer
	// Salvaged is how many preserved events Append re-appends.
	Salvaged int64
	// Events is the number of events of the balanced log.
	Events int64
}

// Noop reports the log needs no repair.
func (p Plan) Noop() bool { return p.Cut < 0 && len(p.Append) == 0 }

// Decide returns the plan for a scanned log whose every preserved event went
// through f, or the refusal: the fold's (the package's load refuses the log)
// or the header's. id is the session id the log's path names ("" to take the
// header's).
func Decide(res v0.Result, f *Fold, id string) (Plan, error) {
	if id == "" {
		id = res.Header.ID
	}
	if err := res.Header.Validate(id); err != nil {
		return Plan{}, fmt.Errorf("dshrecovery: %w", err)
	}
	closers, err := f.Closers()
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Cut: res.Cut, Closers: closers, Events: f.Len() + int64(len(closers))}
	if res.Cut >= 0 {
		p.Append = append(p.Append, res.Salvaged...)
		p.Salvaged = res.SalvagedEvents
	}
	for _, c := range closers {
		p.Append = append(append(p.Append, c.Line...), '\n')
	}
	return p, nil
}
