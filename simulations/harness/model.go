package harness

import (
	"math/rand/v2"
	"strconv"

	"github.com/tailproof/tailproof/events/turn"
)

// action is one thing the writer model does: most write one record line;
// a dropped record writes nothing (the harness lost it); a flush ends a
// Claude Code batch.
type action struct {
	line []byte
	turn int // the model turn the line belongs to; -1: none (session records)
	// finish: the harness finished turn `turn` here (its work is done and,
	// unless dropped, this is the record that says so).
	finish bool
	// abort: the harness recorded an interrupt of `turn` (the person pressed
	// Esc, the turn was replaced): its truth is interrupted from here on.
	abort bool
	// flush: a batching writer writes and fsyncs everything buffered after
	// this action.
	flush bool
	// prompt is the text of a prompt this line carries, and whose it is.
	prompt string
	source turn.Source
	// corrupt: the model damaged this line on purpose (a splice, a NUL run):
	// nothing in it is evidence.
	corrupt bool
}

// turnTruth is what happened to one turn, whatever the file says.
type turnTruth struct {
	first    int // action index of the turn's first record
	finishAt int // action index of its finish (-1: never finished)
	abortAt  int // action index of a recorded interrupt (-1: none)
	// lastLine is the action of the turn's last record written: its end
	// record, or the record that stands for it when the end was dropped.
	// A turn whose lastLine did not reach the disk lost its completion.
	lastLine int
	life     int // which writer process wrote it (0, or 1 after a resume)
}

// session is a model run: everything the writer did, in order.
type session struct {
	harness string
	class   string
	acts    []action
	turns   []turnTruth
	// resumeAt is the action index at which the first writer died and the
	// second one took over (len(acts) when it never did); what the first
	// life left on disk is base (decided when the run is built).
	resumeAt int
	base     []byte
	// cutLine is the line the first writer was writing when it died.
	cutLine []byte
	// repaired / reconciled: what the restart between the lives did.
	repaired, reconciled bool
	fsyncs               bool // the writer fsyncs its batches (Claude Code 2.1.328)
	seals                bool // the writer seals a torn tail before appending (Claude Code 2.1.328)
}

// profile is a class of sessions: the mix of behaviours the writer shows.
type profile struct {
	name string
	// probabilities per turn
	tools, interrupt, compact, inject, lostEnd, corrupt, notify, sidechain, steer, apiError float64
	// Claude Code: noHooks, a session without Stop hooks; block, a Stop
	// hook blocking a turn's first answer.
	noHooks, block                      float64
	legacy, ordinals, resume, oldWriter bool
	// nullStops: Claude Code 2.1.39's writer; upgrade: the resumed life is
	// 2.1.328's.
	nullStops, upgrade bool
}

func (p profile) chance(r *rand.Rand, x float64) bool { return x > 0 && r.Float64() < x }

// ids the model gives the things it writes: unique per run, so a
// decision's key and a resend's text name one model turn and one prompt.
func promptText(t, j int, r *rand.Rand) string {
	return "prompt " + strconv.Itoa(t) + "." + strconv.Itoa(j) + " rename 日本語 " + strconv.Itoa(r.IntN(1000))
}

func itoa(n int) string { return strconv.Itoa(n) }
