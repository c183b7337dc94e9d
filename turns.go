package tailproof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// OpenSession opens a harness's session file for reading from its first
// byte. Each call opens it anew.
type OpenSession func(ctx context.Context) (io.ReadCloser, error)

// Codes and stop reasons of the terminals ReconcileTurns writes to a
// sidecar ledger (ADR 0024). A turn cut by the crash is ledger.CodeDaemonLost,
// as Qwen writes it; a turn the harness itself recorded as ended otherwise
// carries the harness's own reason as its stop reason.
const (
	CodeHarnessAborted   = "harness_aborted"   // the harness recorded the interrupt (Esc, replaced, budget)
	CodeHarnessFailed    = "harness_failed"    // the harness recorded a failure
	CodeHarnessCancelled = "harness_cancelled" // the harness recorded a cancellation
	StopInterruptMarker  = "interrupt_marker"  // the harness's interrupt marker, no reason given
)

// TurnTerminal is the terminal a sidecar ledger records for decision d, at
// time at (milliseconds): exactly what the evidence proves, never more. An
// unknown turn has none (ok false).
//
//	completed                         → completed, stopReason reconstructed_from_transcript
//	interrupted, no end record        → interrupted, code daemon_lost
//	interrupted by the harness's end  → interrupted / error / cancelled, code harness_*,
//	  or its interrupt marker           stopReason the harness's reason
func TurnTerminal(d turnverdict.Decision, at int64) (ledger.Record, bool) {
	switch d.Verdict {
	case turnverdict.Completed:
		return ledger.Terminal(d.Turn, ledger.Completed, "", ledger.StopReconstructed, at), true
	case turnverdict.Interrupted:
	default:
		return ledger.Record{}, false
	}
	reason := d.EndReason
	switch d.Because {
	case "abort-recorded":
		switch d.HarnessEnd {
		case turn.EndFailed:
			return ledger.Terminal(d.Turn, ledger.Error, CodeHarnessFailed, reason, at), true
		case turn.EndCancelled:
			return ledger.Terminal(d.Turn, ledger.Cancelled, CodeHarnessCancelled, reason, at), true
		}
		return ledger.Terminal(d.Turn, ledger.Interrupted, CodeHarnessAborted, reason, at), true
	case "interrupt-marker":
		return ledger.Terminal(d.Turn, ledger.Interrupted, CodeHarnessAborted, StopInterruptMarker, at), true
	}
	return ledger.Terminal(d.Turn, ledger.Interrupted, ledger.CodeDaemonLost, "", at), true
}

// TurnStatusOptions configure TurnStatus.
type TurnStatusOptions struct {
	Harness turn.Harness
	// WriterStopped asserts the harness's writer is gone; without it the
	// last turn, when it has no end record, stays unknown.
	WriterStopped bool
	// Ledger, when set, is the session's sidecar ledger; the last turn's
	// recorded terminal, if any, is reported beside the verdict. It is only
	// read.
	Ledger adapters.LedgerStore
	// SessionID is passed to Ledger (a sidecar store ignores it).
	SessionID string
}

// TurnStatusReport describes a session file's last turn.
type TurnStatusReport struct {
	Harness string
	// Turns is how many turns the file holds.
	Turns int
	// Last is the decision on the last turn; nil when the file holds none.
	Last *turnverdict.Decision
	// Stamp is the sidecar ledger's terminal for the last turn, if any.
	Stamp *ledger.Record
	// Damage counts the lines that did not decode; FirstDamage is the first.
	Damage      int
	FirstDamage *events.Error
}

// TurnStatus decides a harness session file's last turn: its verdict, its
// vetoes, what a resume would resend and which calls were left without a
// result. It never writes.
func TurnStatus(ctx context.Context, open OpenSession, o TurnStatusOptions) (TurnStatusReport, error) {
	rep := TurnStatusReport{Harness: o.Harness.Name}
	var last turnverdict.Decision
	err := eachTurn(ctx, open, o.Harness, o.WriterStopped, func(d turnverdict.Decision) error {
		rep.Turns++
		last = d
		return nil
	}, func(e *events.Error) {
		if rep.Damage == 0 {
			rep.FirstDamage = e
		}
		rep.Damage++
	})
	if err != nil {
		return rep, err
	}
	if rep.Turns == 0 {
		return rep, nil
	}
	rep.Last = &last
	if o.Ledger != nil {
		r, ok, err := readStamp(ctx, o.Ledger, o.SessionID, last.Turn)
		if err != nil {
			return rep, err
		}
		if ok {
			rep.Stamp = &r
		}
	}
	return rep, nil
}

// TurnReconcileOptions configure ReconcileTurns.
type TurnReconcileOptions struct {
	Harness turn.Harness
	// Now is the time stamped on every terminal, in milliseconds.
	Now int64
	// SessionID is passed to the ledger store (a sidecar store ignores it).
	SessionID string
	// WriterLive, when set, is asked once before the first append; an error
	// (harnessfs.ErrWriterLive when the harness's own evidence says its
	// writer runs) refuses the whole run and nothing is appended.
	WriterLive func(ctx context.Context) error
	// Collect holds the run's terminals instead of appending them one at a
	// time: the caller appends TurnReconcileResult.Collected.Lines() in one
	// durable append after the whole file is decided (all or nothing), or
	// not at all (a dry run). WriterLive is still asked before the first.
	Collect bool
}

// TurnReconcileResult says what ReconcileTurns decided and wrote.
type TurnReconcileResult struct {
	Turns    int
	Appended []ledger.Record // in file order; nil with Collect
	// Collected (with Collect) is the terminals to append, in file order,
	// held compactly.
	Collected Stamps
	// AlreadyStamped counts decided turns the ledger already settled;
	// Unknown counts the turns the evidence cannot decide (never stamped).
	AlreadyStamped, Unknown int
	// Duplicate lists turn keys seen twice in the file; only the first
	// occurrence is stamped.
	Duplicate []string
	Damage    int
}

// ReconcileTurns is the after-a-crash command for a harness that keeps no
// terminal ledger of its own: running it asserts that the harness's writer
// is gone (o.WriterLive may still refuse). Every turn the evidence decides
// whose key the ledger has not settled gets its terminal (TurnTerminal),
// appended durably in file order; unknown turns get nothing. A second run
// appends nothing, and a settled turn is never stamped again — even if the
// file has changed since. The harness's own file is only read.
func ReconcileTurns(ctx context.Context, open OpenSession, led adapters.LedgerStore, o TurnReconcileOptions) (TurnReconcileResult, error) {
	var res TurnReconcileResult
	keys, err := readStampedKeys(ctx, led, o.SessionID)
	if err != nil {
		return res, err
	}
	res.Collected.keys = keys
	asked := o.WriterLive == nil
	err = eachTurn(ctx, open, o.Harness, true, func(d turnverdict.Decision) error {
		res.Turns++
		k, _, _ := keys.get(d.Turn)
		if k&keySeen != 0 {
			res.Duplicate = append(res.Duplicate, strings.Clone(d.Turn))
			return nil
		}
		// The set copies the key out of the codec's strings, which share
		// one allocation per record (a Codex turn_context's with its model,
		// cwd and instructions).
		off, err := keys.add(d.Turn, keySeen)
		if err != nil {
			return err
		}
		rec, ok := TurnTerminal(d, o.Now)
		switch {
		case !ok:
			res.Unknown++
			return nil
		case k&keyStamped != 0:
			res.AlreadyStamped++
			return nil
		}
		if !asked {
			asked = true
			if err := o.WriterLive(ctx); err != nil {
				return err
			}
		}
		if o.Collect {
			res.Collected.add(off, rec)
			return nil
		}
		if err := led.AppendLedger(ctx, o.SessionID, ledger.Encode(rec)); err != nil {
			return fmt.Errorf("tailproof: stamp turn %s: %w", d.Turn, err)
		}
		res.Appended = append(res.Appended, rec)
		return nil
	}, func(*events.Error) { res.Damage++ })
	return res, err
}

// A key's flags in ReconcileTurns' keySet: the ledger settles the key; the
// file holds a turn with it (a second one is a duplicate).
const (
	keyStamped uint8 = 1 << iota
	keySeen
)

// eachTurn streams the decisions on a session file's turns to fn, and its
// undecodable lines to damage.
func eachTurn(ctx context.Context, open OpenSession, h turn.Harness, writerStopped bool,
	fn func(turnverdict.Decision) error, damage func(*events.Error)) error {
	rc, err := openHarness(ctx, open, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := turnverdict.NewDecider(turnverdict.Options{WriterStopped: writerStopped})
	n := 0
	for a, err := range turn.Read(rc, h) {
		if err != nil {
			return fmt.Errorf("tailproof: read %s session: %w", h.Name, err)
		}
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("tailproof: read %s session: %w", h.Name, err)
			}
		}
		if a.Kind == turn.KindDamage && a.Damage != nil && !a.Torn {
			damage(a.Damage)
		}
		if d, ok := dec.Add(a); ok {
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	if d, ok := dec.Finish(); ok {
		return fn(d)
	}
	return nil
}

// readStampedKeys reads the keys a ledger settles (any terminal: nothing
// tailproof writes ever follows one) into a set, marked keyStamped. Only the
// keys are kept, compactly (keySet), not the records.
func readStampedKeys(ctx context.Context, led adapters.LedgerStore, id string) (*keySet, error) {
	keys := newKeySet()
	var full error
	err := eachStamp(ctx, led, id, func(r ledger.Record) {
		if _, err := keys.add(r.PromptID, keyStamped); err != nil {
			full = err
		}
	})
	if err == nil {
		err = full
	}
	return keys, err
}

// readStamp is the first terminal a ledger records for key, if any.
func readStamp(ctx context.Context, led adapters.LedgerStore, id, key string) (ledger.Record, bool, error) {
	var first ledger.Record
	found := false
	err := eachStamp(ctx, led, id, func(r ledger.Record) {
		if !found && r.PromptID == key {
			first, found = r, true
		}
	})
	return first, found, err
}

// eachStamp streams a ledger's terminal records to fn.
func eachStamp(ctx context.Context, led adapters.LedgerStore, id string, fn func(ledger.Record)) error {
	rc, err := led.OpenLedger(ctx, id)
	if err != nil {
		return fmt.Errorf("tailproof: open sidecar ledger: %w", err)
	}
	defer rc.Close()
	if _, _, err := ledger.ReadEach(rc, false, func(r ledger.Record) {
		if r.IsTerminal() {
			fn(r)
		}
	}); err != nil {
		return fmt.Errorf("tailproof: read sidecar ledger: %w", err)
	}
	return nil
}

// TurnStep is one line of a harness session file as the decision sees it:
// the record its codec read (or why it could not), the acts the mapper made
// of it, and the decisions it completed — a turn is decided when the next
// one opens, the last one at the end (Final).
type TurnStep struct {
	Pos     events.Position
	Record  events.Body   // nil when the line did not decode
	Damage  *events.Error // the line's decode error, classified
	Acts    []turn.Act
	Decided []turnverdict.Decision
	Final   bool // the end of the file: Decided holds the last turn
}

// ReplayTurns steps through a harness session file line by line (what
// `tailproof replay --harness` prints), calling fn for each line and once
// more at the end. It never writes.
func ReplayTurns(ctx context.Context, open OpenSession, h turn.Harness, writerStopped bool, fn func(TurnStep) error) error {
	rc, err := openHarness(ctx, open, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := turnverdict.NewDecider(turnverdict.Options{WriterStopped: writerStopped})
	m := turn.MapperFor(h)
	for ev, err := range events.Decode(rc, h.Codec, h.Options) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tailproof: replay %s session: %w", h.Name, err)
		}
		var st TurnStep
		if err != nil {
			de, ok := err.(*events.Error)
			if !ok {
				return fmt.Errorf("tailproof: read %s session: %w", h.Name, err)
			}
			st.Pos, st.Damage = de.Pos, de
			st.Acts = []turn.Act{{Kind: turn.KindDamage, Pos: de.Pos, Damage: de, Torn: turn.Unterminated(de)}}
		} else {
			st.Pos, st.Record = ev.Pos, ev.Body
			st.Acts = m.Map(nil, ev)
		}
		for _, a := range st.Acts {
			if d, ok := dec.Add(a); ok {
				st.Decided = append(st.Decided, d)
			}
		}
		if err := fn(st); err != nil {
			return err
		}
	}
	final := TurnStep{Final: true}
	if d, ok := dec.Finish(); ok {
		final.Decided = []turnverdict.Decision{d}
	}
	return fn(final)
}

func openHarness(ctx context.Context, open OpenSession, h turn.Harness) (io.ReadCloser, error) {
	if h.Codec == nil || h.Mapper == nil {
		return nil, errors.New("tailproof: harness has no codec or mapper")
	}
	rc, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("tailproof: open %s session: %w", h.Name, err)
	}
	return rc, nil
}
