package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tailproof/tailproof/events"
)

// TerminalState is a settled outcome.
type TerminalState string

const (
	Completed   TerminalState = "completed"
	Cancelled   TerminalState = "cancelled"
	Error       TerminalState = "error"
	Interrupted TerminalState = "interrupted"
)

// Codes and stop reasons tailproof writes or reads with meaning.
const (
	CodeDaemonLost             = "daemon_lost"
	CodePromptDeadlineExceeded = "prompt_deadline_exceeded"
	StopReconstructed          = "reconstructed_from_transcript"
)

// Record is one ledger line: an in_flight admission or a terminal.
type Record struct {
	V        int
	PromptID string
	InFlight bool   // state:"in_flight"; otherwise Terminal is set
	TailUUID string // in_flight only: the dispatch marker, "" when absent
	Terminal TerminalState
	Code     string // terminal only
	// HasCode / HasStopReason distinguish an absent field from an empty string,
	// which the reference keeps and re-encodes.
	HasCode       bool
	StopReason    string
	HasStopReason bool
	// At is Date.now() in milliseconds. The reference accepts any finite
	// number; a fractional value is kept in AtFrac so it re-encodes faithfully.
	At     int64
	AtFrac float64
	atRaw  bool
}

// IsTerminal reports whether r settles its prompt.
func (r Record) IsTerminal() bool { return !r.InFlight }

// AtFloat is the record's time as the reference compares it.
func (r Record) AtFloat() float64 {
	if r.atRaw {
		return r.AtFrac
	}
	return float64(r.At)
}

// Describe is the record's stable one-line form, used in traces and scenarios:
//
//	IF p1 at=1 tail=u1
//	TERM p1 completed stopReason=reconstructed_from_transcript at=2
func (r Record) Describe() string {
	var b []byte
	if r.InFlight {
		b = append(b, "IF "...)
		b = append(b, r.PromptID...)
		b = append(b, " at="...)
		b = appendAt(b, r)
		if r.TailUUID != "" {
			b = append(b, " tail="...)
			b = append(b, r.TailUUID...)
		}
		return string(b)
	}
	b = append(b, "TERM "...)
	b = append(b, r.PromptID...)
	b = append(b, ' ')
	b = append(b, r.Terminal...)
	if r.HasCode {
		b = append(b, " code="...)
		b = append(b, r.Code...)
	}
	if r.HasStopReason {
		b = append(b, " stopReason="...)
		b = append(b, r.StopReason...)
	}
	b = append(b, " at="...)
	b = appendAt(b, r)
	return string(b)
}

func appendAt(b []byte, r Record) []byte {
	if r.atRaw {
		return strconv.AppendFloat(b, r.AtFrac, 'f', -1, 64)
	}
	return strconv.AppendInt(b, r.At, 10)
}

// InFlight builds an admission record.
func InFlight(promptID string, at int64, tailUUID string) Record {
	return Record{V: 1, PromptID: promptID, InFlight: true, TailUUID: tailUUID, At: at}
}

// Terminal builds a terminal record; empty code / stopReason are omitted.
func Terminal(promptID string, state TerminalState, code, stopReason string, at int64) Record {
	return Record{V: 1, PromptID: promptID, Terminal: state, Code: code, HasCode: code != "",
		StopReason: stopReason, HasStopReason: stopReason != "", At: at}
}

// Encode returns the record as the reference writer (JSON.stringify of the
// coerced record) writes it, without the newline. Key order: v, promptId,
// state|terminal, tailUuid, code, stopReason, at.
func Encode(r Record) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.V), 10)
	b = append(b, `,"promptId":`...)
	b = events.AppendJSString(b, r.PromptID)
	if r.InFlight {
		b = append(b, `,"state":"in_flight"`...)
		if r.TailUUID != "" {
			b = append(b, `,"tailUuid":`...)
			b = events.AppendJSString(b, r.TailUUID)
		}
	} else {
		b = append(b, `,"terminal":`...)
		b = events.AppendJSString(b, string(r.Terminal))
		if r.HasCode {
			b = append(b, `,"code":`...)
			b = events.AppendJSString(b, r.Code)
		}
		if r.HasStopReason {
			b = append(b, `,"stopReason":`...)
			b = events.AppendJSString(b, r.StopReason)
		}
	}
	b = append(b, `,"at":`...)
	b = appendAt(b, r)
	return append(b, '}')
}

// ErrMalformed classifies a line the reference reader would drop.
var ErrMalformed = errors.New("malformed ledger record")

// The acceptance errors carry no detail beyond their rule, so they are made
// once: a simulation that feeds many malformed lines does not pay for them.
var (
	errVNot1       = fmt.Errorf("ledger: %w: v is not 1", ErrMalformed)
	errPromptID    = fmt.Errorf("ledger: %w: promptId is not a string", ErrMalformed)
	errAt          = fmt.Errorf("ledger: %w: at is not a finite number", ErrMalformed)
	errNoStateTerm = fmt.Errorf("ledger: %w: neither in_flight nor a known terminal", ErrMalformed)
)

// Decode applies the reference's acceptance rules (coercePromptLedgerRecord)
// to one line: JSON object, v === 1, promptId a string, at a finite number;
// state "in_flight" makes an admission (tailUuid kept only when a non-empty
// string); otherwise terminal must be one of the four states, with code and
// stopReason kept only when strings. Anything else is ErrMalformed.
//
// The line must be exactly one JSON object, validated as encoding/json
// validates it; of duplicate keys the last wins. The strings a Record keeps
// share one allocation.
func Decode(line []byte) (Record, error) {
	if r, ok := decodeCanonical(line); ok {
		return r, nil
	}
	return decodeGeneral(line)
}

// decodeGeneral is Decode of any line: scanObject's validation, then the
// acceptance rules.
func decodeGeneral(line []byte) (Record, error) {
	var f fields
	if err := scanObject(line, &f); err != nil {
		return Record{}, err
	}
	var r Record
	if v, _, ok := f.number(line, fV); !ok || v != 1 {
		return Record{}, errVNot1
	}
	r.V = 1
	if !f.isString(line, fPromptID) {
		return Record{}, errPromptID
	}
	at, exact, ok := f.number(line, fAt)
	if !ok {
		return Record{}, errAt
	}
	if exact {
		r.At = int64(at)
	} else {
		r.At, r.AtFrac, r.atRaw = int64(at), at, true
	}
	if f.equals(line, fState, "in_flight") {
		r.InFlight = true
	} else {
		switch {
		case f.equals(line, fTerminal, string(Completed)):
			r.Terminal = Completed
		case f.equals(line, fTerminal, string(Cancelled)):
			r.Terminal = Cancelled
		case f.equals(line, fTerminal, string(Error)):
			r.Terminal = Error
		case f.equals(line, fTerminal, string(Interrupted)):
			r.Terminal = Interrupted
		default:
			return Record{}, errNoStateTerm
		}
	}
	// Decode every kept string into one buffer and convert it once: one
	// allocation per record instead of one per field.
	var stack [128]byte
	b := f.appendString(stack[:0], line, fPromptID)
	idEnd := len(b)
	var tailEnd, codeEnd int
	if r.InFlight {
		// An empty raw string is the only one that decodes empty.
		if f.isString(line, fTailUUID) && f[fTailUUID].end-f[fTailUUID].start > 2 {
			b = f.appendString(b, line, fTailUUID)
		}
		tailEnd = len(b)
	} else {
		if r.HasCode = f.isString(line, fCode); r.HasCode {
			b = f.appendString(b, line, fCode)
		}
		codeEnd = len(b)
		if r.HasStopReason = f.isString(line, fStopReason); r.HasStopReason {
			b = f.appendString(b, line, fStopReason)
		}
	}
	s := string(b)
	r.PromptID = s[:idEnd]
	if r.InFlight {
		r.TailUUID = s[idEnd:tailEnd]
	} else {
		r.Code = s[idEnd:codeEnd]
		r.StopReason = s[codeEnd:]
	}
	return r, nil
}

// Read parses a whole ledger (or a tail window of one) the way the reference
// reader does: split on '\n', skip empty lines and every line that fails
// Decode, and — when windowed — always drop the window's first line, even if
// the window starts on a line boundary. dropped counts the malformed lines
// (not the windowed first line). An I/O error from r is returned with the
// records read so far.
func Read(r io.Reader, windowed bool) (recs []Record, dropped int, err error) {
	_, dropped, err = ReadEach(r, windowed, func(rec Record) { recs = append(recs, rec) })
	return recs, dropped, err
}

// ReadEach is Read without the slice: fn sees each accepted record in file
// order, so a fold over a long ledger holds nothing but its own state. n is
// the number of accepted records.
func ReadEach(r io.Reader, windowed bool, fn func(Record)) (n, dropped int, err error) {
	return ReadEachLine(r, windowed, fn, nil)
}

// ErrLineTooLong is what ReadEachLine hands bad for a line over the line
// limit (events.DefaultMaxLineBytes), which it skips without decoding.
var ErrLineTooLong = errors.New("ledger: line longer than any record")

// ReadEachLine is ReadEach that also hands bad, when set, each line it
// drops (dropped counts them), with Decode's error or ErrLineTooLong: what
// a report of the ledger's undecodable lines needs, from the same read.
func ReadEachLine(r io.Reader, windowed bool, fn func(Record), bad func(events.Line, error)) (n, dropped int, err error) {
	first := true
	for line, lerr := range events.Lines(r, 0) {
		if lerr != nil {
			return n, dropped, fmt.Errorf("ledger: read: %w", lerr)
		}
		if first && windowed {
			first = false
			continue
		}
		first = false
		if line.TooLong {
			dropped++
			if bad != nil {
				bad(line, ErrLineTooLong)
			}
			continue
		}
		if len(bytes.TrimSpace(line.Bytes)) == 0 {
			continue
		}
		rec, derr := Decode(line.Bytes)
		if derr != nil {
			dropped++
			if bad != nil {
				bad(line, derr)
			}
			continue
		}
		n++
		if fn != nil {
			fn(rec)
		}
	}
	return n, dropped, nil
}
