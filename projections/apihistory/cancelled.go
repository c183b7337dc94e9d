package apihistory

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

type promptHint struct {
	count  int
	idx    int
	daemon string
}

type resultHint struct {
	count     int
	idx       int
	cancelled bool // state cancelled with a cancelledAt
}

type attemptHint struct {
	ok       bool
	idx      int
	promptID string
	daemon   string
}

// hint folds one record's settlement hint (getSessionTurnSettlementHint).
// Only counters keyed by prompt ids are kept: the cancelled-last-turn test
// needs each id's multiplicity and the index of its single occurrence, never
// the records themselves. Kept ids are cloned: a record's strings share one
// allocation (events/qwen), and a map key that aliases it would keep the
// whole record's text alive for the rest of the fold.
func (f *Fold) hint(rec *qwen.Record) {
	idx := f.records
	switch {
	case rec.Type == qwen.TypeUser && !rec.HasSubtype:
		if rec.PromptID != "" {
			h := f.prompts[rec.PromptID]
			if h == nil {
				h = &promptHint{}
				f.prompts[strings.Clone(rec.PromptID)] = h
			}
			h.count++
			h.idx = idx
			if h.daemon != rec.DaemonPromptID {
				h.daemon = strings.Clone(rec.DaemonPromptID)
			}
		}
		if rec.DaemonPromptID != "" {
			f.daemons[strings.Clone(rec.DaemonPromptID)]++
		}
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeTurnAttempt:
		f.attempt = attemptHint{ok: true, idx: idx, promptID: rec.PromptID, daemon: rec.DaemonPromptID}
		if rec.DaemonPromptID != "" {
			f.daemons[strings.Clone(rec.DaemonPromptID)]++
		}
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeTurnResult:
		t := rec.TurnResult
		if !validTurnResult(t) {
			return
		}
		h := f.outcomes[t.PromptID]
		if h == nil {
			h = &resultHint{}
			f.outcomes[strings.Clone(t.PromptID)] = h
		}
		h.count++
		h.idx = idx
		h.cancelled = t.State == "cancelled" && t.HasCancelledAt
	}
}

// validTurnResult is isTurnResultRecordPayload restricted to the fields the
// transcript codec decodes (see doc.go for what cannot be checked).
func validTurnResult(t *qwen.TurnResult) bool {
	if t == nil || t.PromptID == "" || utf16Len(t.PromptID) > 256 || utf16Len(t.StopReason) > 256 {
		return false
	}
	switch t.State {
	case "completed", "cancelled", "error":
	default:
		return false
	}
	if _, ok := jsonNumber(t.EndedAt); !ok {
		return false
	}
	if t.HasCancelledAt {
		if _, ok := jsonNumber(t.CancelledAt); !ok {
			return false
		}
	}
	return true
}

// cancelledLastTurn is isLastApiPromptCancelled over the kept tail plus the
// evicted-prompt memo.
func (f *Fold) cancelledLastTurn(tail []Entry) bool {
	// effectiveHistoryEnd(history, trailing): trim notification-shaped
	// entries, but only inside the flagged trailing run.
	end := len(tail)
	from := len(tail) - f.flagRun
	for end > 0 && IsSystemNotificationContent(tail[end-1].Content) && end-1 >= from {
		end--
	}
	found, pid := false, ""
	for i := end - 1; i >= 0; i-- {
		if isLastPromptCandidate(tail[i].Content, tail[i].PromptID != "") {
			found, pid = true, tail[i].PromptID
			break
		}
	}
	if !found && f.evictedPromptFound {
		pid = f.evictedPromptID
	}
	if pid == "" || f.tags[pid] != 1 {
		return false
	}
	p := f.prompts[pid]
	if p == nil || p.count != 1 {
		return false
	}
	ownerIdx, ownerPrompt, ownerDaemon := p.idx, pid, p.daemon
	if f.attempt.ok && f.attempt.idx > ownerIdx {
		ownerIdx, ownerPrompt, ownerDaemon = f.attempt.idx, f.attempt.promptID, f.attempt.daemon
	}
	if ownerPrompt != pid || ownerDaemon == "" || f.daemons[ownerDaemon] != 1 {
		return false
	}
	r := f.outcomes[ownerDaemon]
	return r != nil && r.count == 1 && r.idx > ownerIdx && r.cancelled
}
