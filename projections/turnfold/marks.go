package turnfold

import (
	"strconv"

	"github.com/tailproof/tailproof/events/turn"
)

// mark folds a turn mark. The open turn's first mark names it; a mark that
// names another turn closes the open turn (the writer moved on without an
// opener) and is kept for the turn the next progress opens. A mark while no
// turn is open, or after the open turn's end, waits the same way. Records
// that name no turn (marks with an empty Turn) are not marks.
func (f *Fold) mark(a turn.Act) *Turn {
	if a.Turn == "" {
		return nil
	}
	t := f.cur
	if t != nil && a.Turn != t.Mark && f.closedMark(a.Turn) {
		// A record of a turn that already closed, inside another: that
		// turn's writer is still writing (a Qwen agent the prompt deadline
		// released keeps going beside the next prompt), so this turn's
		// records are not its own alone.
		if !t.HasEnd {
			t.SeqProblems = append(t.SeqProblems, "line "+strconv.Itoa(a.Pos.Line)+": a record of earlier turn "+a.Turn+" inside this one")
		}
		return nil
	}
	switch {
	case t == nil:
		f.setPending(a)
	case t.Mark == "" && !t.HasEnd && t.LastProgress != turn.KindPrompt && t.LastProgress != turn.KindNone:
		// The turn worked without naming itself, and now a record names a
		// turn: a harness that marks its turns marks them from their
		// start (Qwen's snapshot follows the prompt at once), so this is
		// another turn's (a cron turn after a restart, behind a local
		// slash command that marks nothing).
		return f.moveOn(t, a)
	case t.Mark == "" && !t.HasEnd && t.LastProgress == turn.KindPrompt && t.LastStop == turn.StopUnclear &&
		a.Pos.Line != t.LastProgressPos.Line+1:
		// A prompt the harness may have ended the turn at, and a mark that
		// is not the very next record: the harness's own mark follows its
		// prompt at once (Qwen's snapshot), so this one may be the next
		// turn's (a retry turn after a restart writes a snapshot and no
		// prompt). The turn is over at its prompt.
		return f.moveOn(t, a)
	case t.Mark == "" && !t.HasEnd:
		t.Mark = a.Turn
		t.wentOn()
	case t.Mark == a.Turn:
		// The open (or just ended) turn's own record.
		t.wentOn()
	case t.HasEnd:
		f.setPending(a)
	default:
		// Another turn's record while this one is open: it is over, with
		// what it wrote so far. The next progress opens the other turn.
		return f.moveOn(t, a)
	}
	return nil
}

func (f *Fold) closedMark(m string) bool {
	for _, x := range f.closedMarks {
		if x == m {
			return true
		}
	}
	return false
}

// closing remembers a closing turn's id and mark.
func (f *Fold) closing(t *Turn) {
	f.recent = append(f.recent, t.ID)
	if len(f.recent) > recentTurns {
		f.recent = f.recent[1:]
	}
	if t.Mark != "" {
		f.closedMarks = append(f.closedMarks, t.Mark)
		if len(f.closedMarks) > recentTurns {
			f.closedMarks = f.closedMarks[1:]
		}
	}
}

// moveOn closes the open turn t at mark a of another turn.
func (f *Fold) moveOn(t *Turn, a turn.Act) *Turn {
	f.closing(t)
	t.Notes = append(t.Notes, "line "+strconv.Itoa(a.Pos.Line)+": a record of another turn ("+a.Turn+") follows: the writer moved on")
	f.cur = nil
	f.setPending(a)
	return t
}

// wentOn records that the harness went on with the turn past a prompt at
// which it might have ended it (a Prompt with Stop StopUnclear): a mark of
// the turn's own came after it.
func (t *Turn) wentOn() {
	if !t.HasEnd && t.LastProgress == turn.KindPrompt && t.LastStop == turn.StopUnclear {
		t.LastStop = turn.StopContinue
	}
}

// setPending keeps mark a for the turn the next progress opens, with the
// parent link of the first record that named it (a repeat of the pending
// name, the turn's own telemetry after its snapshot, keeps the first).
func (f *Fold) setPending(a turn.Act) {
	if f.pendingMark != a.Turn {
		f.pendingMark, f.pendingParent = a.Turn, a.Parent
	}
}
