package simulations

import (
	"github.com/tailproof/tailproof"
)

// Outcome scores one verdict on one dangling prompt against its truth.
type Outcome uint8

const (
	Unknown Outcome = iota // no terminal appended
	Correct                // the terminal matches what happened
	Wrong                  // completed for a prompt that did not complete, interrupted for one that did
)

// Judge scores verdict v for a prompt whose truth is t. lost says the crash
// lost (or corrupted) the record that finished a completed turn: the durable
// history then ends inside the turn, and interrupted is what that history
// shows — scored correct and counted apart as a lost completion. Interrupted
// for a never-started prompt is correct: it was interrupted before it ran.
func Judge(v tailproof.Verdict, t Truth, lost bool) (o Outcome, lostCompletion bool) {
	switch v {
	case tailproof.VerdictCompleted:
		if t == TruthCompleted {
			return Correct, false
		}
		return Wrong, false
	case tailproof.VerdictInterrupted:
		if t != TruthCompleted {
			return Correct, false
		}
		if lost {
			return Correct, true
		}
		return Wrong, false
	case tailproof.VerdictCancelled:
		// The prompt's own turn_result settled it (ADR 0026).
		if t == TruthCancelled {
			return Correct, false
		}
		return Wrong, false
	case tailproof.VerdictError:
		if t == TruthErrored {
			return Correct, false
		}
		return Wrong, false
	}
	return Unknown, false
}

// Tally counts dangling prompts by outcome.
type Tally struct {
	Dangling int `json:"dangling"`
	Correct  int `json:"correct"`
	Unknown  int `json:"unknown"`
	Wrong    int `json:"wrong"`
	// LostCompletion: interrupted stamped on a completed turn whose final
	// record the crash lost (counted in Correct).
	LostCompletion int `json:"lostCompletion"`
	// UnknownBy counts unknown prompts by the guard that stopped the
	// recovery ("" when nothing was dangling for it to decide).
	UnknownBy map[string]int `json:"unknownBy,omitempty"`
}

func (t *Tally) because(guard string) {
	if guard == "" {
		guard = "none"
	}
	if t.UnknownBy == nil {
		t.UnknownBy = map[string]int{}
	}
	t.UnknownBy[guard]++
}

func (t *Tally) add(o Tally) {
	t.Dangling += o.Dangling
	t.Correct += o.Correct
	t.Unknown += o.Unknown
	t.Wrong += o.Wrong
	t.LostCompletion += o.LostCompletion
	for k, v := range o.UnknownBy {
		if t.UnknownBy == nil {
			t.UnknownBy = map[string]int{}
		}
		t.UnknownBy[k] += v
	}
}

func (t *Tally) count(o Outcome, lost bool) {
	t.Dangling++
	switch o {
	case Correct:
		t.Correct++
	case Wrong:
		t.Wrong++
	default:
		t.Unknown++
	}
	if lost {
		t.LostCompletion++
	}
}
