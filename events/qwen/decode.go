package qwen

import (
	"errors"
	"fmt"

	"github.com/tailproof/tailproof/events"
)

var (
	// ErrNotRecord classifies a line that holds no chat record object: not
	// JSON, a JSON value that is not an object, or glued fragments that do
	// not parse.
	ErrNotRecord = errors.New("not a chat record")
	// ErrInvalidRecord classifies a JSON object that Qwen's
	// validateTranscriptRecord skips: bad identity fields (uuid, parentUuid,
	// sessionId) or an unknown record type.
	ErrInvalidRecord = errors.New("invalid chat record")
)

// DecodeOptions tune the codec.
type DecodeOptions struct {
	// KeepPayloads keeps every part's raw JSON (Part.Raw). Off by default:
	// reconciliation never needs tool outputs or function arguments, and a
	// transcript of gigabytes must not materialize them.
	KeepPayloads bool
}

// Codec is the events.Codec for Qwen transcript lines. Kinds are
// "qwen.<type>" or "qwen.<type>/<subtype>"; the body is *Record. A line
// yields the records Qwen's reader yields from it (two records glued `}{`
// both decode, Qwen #3606). A line that yields fewer than Qwen would count
// as complete — not JSON, a non-object, an unparsable glued fragment, or an
// object that Qwen's validator skips — returns the records it did yield
// plus an error wrapping ErrNotRecord or ErrInvalidRecord.
//
// Records that Qwen keeps with a diagnostic (unknown subtype, invalid
// timestamp, malformed message) decode without error; LoadChain reports
// those diagnostics.
type Codec struct{ Opts DecodeOptions }

func (Codec) Name() string          { return "qwen-transcript" }
func (Codec) Stream() events.Stream { return events.StreamTranscript }

func (c Codec) DecodeLine(dst []events.Event, line events.Line) ([]events.Event, error) {
	p := getParser(c.Opts, false)
	defer putParser(p)
	res := &p.res
	p.decodeLine(line.Bytes, res)
	var firstErr error
	if !res.complete {
		firstErr = fmt.Errorf("qwen: %w: %s", ErrNotRecord, res.detail)
	}
	for i := range res.recs {
		pr := &res.recs[i]
		if code, msg := identityProblem(pr); code != "" {
			if firstErr == nil {
				firstErr = fmt.Errorf("qwen: byte %d: %w: %s", pr.start, ErrInvalidRecord, msg)
			}
			continue
		}
		pos := line.Pos
		pos.Offset += int64(pr.start)
		dst = append(dst, Envelope(pr.rec, pos))
	}
	return dst, firstErr
}

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
	if k, ok := kinds[kindKey{rec.Type, rec.Subtype}]; ok {
		return k
	}
	if rec.Subtype != "" {
		return events.Kind("qwen." + rec.Type + "/" + rec.Subtype)
	}
	return events.Kind("qwen." + rec.Type)
}

type kindKey struct{ typ, subtype string }

// kinds holds the kinds of every record type with no subtype or a known
// one, built once: every event carries its kind, and concatenating it per
// record was an allocation per record.
var kinds = func() map[kindKey]events.Kind {
	m := map[kindKey]events.Kind{}
	for _, t := range []string{TypeUser, TypeAssistant, TypeToolResult, TypeSystem} {
		m[kindKey{t, ""}] = events.Kind("qwen." + t)
		for _, st := range KnownSubtypes {
			m[kindKey{t, st}] = events.Kind("qwen." + t + "/" + st)
		}
	}
	return m
}()

// recordTypes is Qwen's RECORD_TYPES.
func isRecordType(t []byte) bool {
	switch string(t) {
	case TypeUser, TypeAssistant, TypeToolResult, TypeSystem:
		return true
	}
	return false
}

// identityProblem is the skipping half of validateTranscriptRecord: it
// returns the diagnostic code and message of a record Qwen drops, or "".
func identityProblem(pr *parsed) (code, msg string) {
	id := &pr.id
	if pr.uuid != jString || len(id.uuid) == 0 || pr.parent != jString && pr.parent != jNull ||
		pr.session != jString || len(id.session) == 0 {
		return DiagInvalidRecord, "Skipped a transcript record with invalid identity fields."
	}
	if pr.typ != jString || !isRecordType(id.typ) {
		return DiagUnknownRecordOrPart, "Skipped a transcript record with an unknown record type."
	}
	return "", ""
}
