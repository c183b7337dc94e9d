package tailproof

import (
	"errors"
	"fmt"
)

// MaxTimeValue is the largest magnitude, in milliseconds from the epoch, of
// an ECMAScript time value (ECMA-262 §21.4.1.1: ±8.64e15 ms, ±100,000,000
// days). Qwen Code reads a ledger record's `at` into a JavaScript Date, and a
// value past it is an Invalid Date: this is a fact of the language, not of
// Qwen Code 0.24.4.
const MaxTimeValue = 8_640_000_000_000_000

// ErrInvalidClock classifies a clock Reconcile refused to stamp: a time
// outside the JavaScript Date range, or a terminal that would precede its
// own prompt's admission (the in_flight record's `at`). Nothing is appended,
// not even in a dry run, which reports what a real run would do.
var ErrInvalidClock = errors.New("invalid clock")

// admissions answers the clock check's question: the latest admission time
// (the `at` of the latest in_flight record) of a prompt that is open. Only a
// dangling prompt (latest record in_flight) is ever given a terminal, and its
// latest in_flight record is its latest record, so the open prompts are all
// the check can ask about. The reconcile core's ledger view keeps exactly
// those records (reconcile.Core.OpenAdmissionAt); a map of its own here
// duplicated them, at a hash and often an allocation per ledger record.
type admissions interface {
	OpenAdmissionAt(id string) (float64, bool)
}

// checkClock refuses now for a terminal of target: outside ±MaxTimeValue,
// or earlier than target's admission. A terminal earlier than its in_flight
// record would run the ledger's clock backwards, and the temporal guards of
// every later decision read that clock.
func checkClock(a admissions, now int64, target string) error {
	if now < -MaxTimeValue || now > MaxTimeValue {
		return fmt.Errorf("tailproof: %w: %d ms is outside the JavaScript Date range (±%d): nothing appended", ErrInvalidClock, now, int64(MaxTimeValue))
	}
	if at, ok := a.OpenAdmissionAt(target); ok && float64(now) < at {
		return fmt.Errorf("tailproof: %w: %d is before prompt %s's own admission at %.0f, and a terminal cannot precede its prompt: nothing appended", ErrInvalidClock, now, target, at)
	}
	return nil
}
