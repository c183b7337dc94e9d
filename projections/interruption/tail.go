package interruption

import (
	"strconv"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/projections/apihistory"
)

// Mode selects how trailing notifications are recognised before the tail is
// cut.
type Mode uint8

const (
	// ShapeOnly is the reference daemon path (reconcileDanglingPromptTerminals
	// and headless continue): effectiveHistoryEnd with no count, so every
	// trailing user entry made only of task-notification envelopes is trimmed,
	// whoever wrote it.
	ShapeOnly Mode = iota
	// Provenance trims a trailing envelope-shaped entry only when the record
	// that pushed it says it is a cold system notification (provenance
	// "system", subtype "notification", neither 0.24.4's backgroundTurn stamp
	// nor a newer writer's deliveredTurn flag). A record that
	// carries no provenance at all (legacy transcripts, compressed history)
	// falls back to the shape test and marks the tail Guessed.
	Provenance
)

func (m Mode) String() string {
	if m == Provenance {
		return "provenance"
	}
	return "shape"
}

// Tail is a history tail normalised once for classification. Reconcile and
// status both derive their verdicts from the same Tail so they can never
// disagree about where the history ends.
type Tail struct {
	Mode Mode
	// Entries are the last TailCount entries before the trimmed run.
	Entries []apihistory.Entry
	// Start is the full-history index of Entries[0].
	Start int
	// Trimmed is how many trailing entries were cut as notifications, and
	// TrimmedEntries are those entries (oldest first).
	Trimmed        int
	TrimmedEntries []apihistory.Entry
	// Guessed is true when at least one trimmed entry was cut on shape alone
	// because its record carried no provenance.
	Guessed bool
	// Total is the length of the full history.
	Total int
}

// Describe prints the tail's bounds, one line.
func (t Tail) Describe() string {
	s := "tail mode=" + t.Mode.String() + " entries=" + strconv.Itoa(len(t.Entries)) +
		" start=" + strconv.Itoa(t.Start) + " trimmed=" + strconv.Itoa(t.Trimmed) +
		" total=" + strconv.Itoa(t.Total)
	if t.Guessed {
		s += " guessed"
	}
	return s
}

// ClassifiableTail normalizes the history tail once: trim trailing system
// notifications (per mode), then take the last TailCount entries before them.
func ClassifiableTail(res apihistory.Result, mode Mode) Tail {
	h := res.Tail
	end := len(h)
	guessed := false
	for end > 0 {
		e := &h[end-1]
		if !apihistory.IsSystemNotificationContent(e.Content) {
			break
		}
		if mode == Provenance {
			if legacy(e) {
				guessed = true
			} else if !e.ColdNotification {
				break
			}
		}
		end--
	}
	from := max(0, end-TailCount)
	t := Tail{
		Mode:    mode,
		Entries: h[from:end:end],
		Start:   res.Start() + from,
		Trimmed: len(h) - end,
		Guessed: guessed,
		Total:   res.Total,
	}
	if t.Trimmed > 0 {
		t.TrimmedEntries = h[end:]
	}
	return t
}

// legacy reports an entry whose pushing record carried no provenance, so its
// kind can only be guessed from its shape.
func legacy(e *apihistory.Entry) bool {
	return e.Compressed || len(e.Sources) == 0 || e.Sources[0].Origin == events.OriginNone
}

// Classify is detectTurnInterruption on a normalised tail. The trim already
// happened in ClassifiableTail, so detection runs with an authoritative count
// of zero: an envelope the mode chose to keep (a real prompt, a delivered
// notification turn) stays classifiable instead of being re-trimmed by shape.
func Classify(t Tail, completedIDs []string) Verdict {
	zero := 0
	return Detect(t.Entries, completedIDs, &zero)
}

// TailHoldsAnyFunctionCall is reconcile's id-less upgrade: the last entry of
// the tail is a model entry with any functionCall part, id or not.
func TailHoldsAnyFunctionCall(t Tail) bool {
	if len(t.Entries) == 0 {
		return false
	}
	last := &t.Entries[len(t.Entries)-1]
	if last.Content.Role != "model" {
		return false
	}
	for _, p := range last.Content.Parts {
		if p.Kind == qwen.PartFunctionCall {
			return true
		}
	}
	return false
}

// TailClassification is the one classifier step reconciliation and status
// share: the classifiable tail, its verdict, and the id-less upgrade.
type TailClassification struct {
	Tail    Tail
	Verdict Verdict
	// IdlessUpgrade: the verdict is none but the tail's last model entry
	// holds a functionCall (without an id): the turn was cut mid tool call.
	IdlessUpgrade bool
}

// ClassifyTail normalizes the history tail once and classifies it:
// ClassifiableTail, Classify, then the id-less upgrade. Every consumer that
// asks "how does this history end?" goes through here.
func ClassifyTail(res apihistory.Result, mode Mode) TailClassification {
	t := ClassifiableTail(res, mode)
	v := Classify(t, res.CompletedToolCallIDs)
	return TailClassification{Tail: t, Verdict: v,
		IdlessUpgrade: v.Kind == KindNone && TailHoldsAnyFunctionCall(t)}
}
