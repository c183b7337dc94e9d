package tailproof

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tailproof/tailproof/events/ledger"
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

// admissions records the latest admission time (the `at` of the latest
// in_flight record) of every prompt left open while the ledger is read: a
// terminal removes its prompt. Only a dangling prompt (latest record
// in_flight) is ever given a terminal, and its latest in_flight record is its
// latest record, so the open prompts are all the clock check can ask about;
// keeping every prompt's admission grew by one entry per turn (11 MiB on
// 350,000 turns, ADR 0030). Keys are cloned: a decoded record's strings
// share its line's allocation, which a key would keep alive.
type admissions map[string]float64

func (a admissions) add(r ledger.Record) {
	if !r.InFlight {
		delete(a, r.PromptID)
		return
	}
	if _, ok := a[r.PromptID]; ok {
		a[r.PromptID] = r.AtFloat()
		return
	}
	a[strings.Clone(r.PromptID)] = r.AtFloat()
}

// checkClock refuses now for a terminal of target: outside ±MaxTimeValue,
// or earlier than target's admission. A terminal earlier than its in_flight
// record would run the ledger's clock backwards, and the temporal guards of
// every later decision read that clock.
func (a admissions) checkClock(now int64, target string) error {
	if now < -MaxTimeValue || now > MaxTimeValue {
		return fmt.Errorf("tailproof: %w: %d ms is outside the JavaScript Date range (±%d): nothing appended", ErrInvalidClock, now, int64(MaxTimeValue))
	}
	if at, ok := a[target]; ok && float64(now) < at {
		return fmt.Errorf("tailproof: %w: %d is before prompt %s's own admission at %.0f, and a terminal cannot precede its prompt: nothing appended", ErrInvalidClock, now, target, at)
	}
	return nil
}
