package apihistory

import (
	"strings"

	"github.com/tailproof/tailproof/events/qwen"
)

type promptHint struct {
	idx       int
	daemon    idKey // keyOf the last occurrence's daemonPromptId
	count     int32
	hasDaemon bool // that daemonPromptId is not empty
}

type resultHint struct {
	idx       int
	count     int32
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
// the records themselves. The ids are kept as 128-bit keys (keyOf), not
// strings.
func (f *Fold) hint(rec *qwen.Record) {
	idx := f.records
	switch {
	case rec.Type == qwen.TypeUser && !rec.HasSubtype && f.fp != nil:
		f.fpPrompt(rec, idx)
	case rec.Type == qwen.TypeUser && !rec.HasSubtype:
		if rec.PromptID != "" {
			k := keyOf(rec.PromptID)
			h := f.prompts[k]
			h.count++
			h.idx = idx
			h.daemon, h.hasDaemon = keyOf(rec.DaemonPromptID), rec.DaemonPromptID != ""
			f.prompts[k] = h
		}
		if rec.DaemonPromptID != "" {
			f.daemons[keyOf(rec.DaemonPromptID)]++
		}
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeTurnAttempt:
		// The attempt's strings are cloned: they are kept past the record,
		// whose strings share one allocation (events/qwen).
		f.attempt = attemptHint{ok: true, idx: idx, promptID: strings.Clone(rec.PromptID), daemon: strings.Clone(rec.DaemonPromptID)}
		if f.fp != nil {
			f.fpAttempt(rec)
		} else if rec.DaemonPromptID != "" {
			f.daemons[keyOf(rec.DaemonPromptID)]++
		}
	case rec.Type == qwen.TypeSystem && rec.Subtype == qwen.SubtypeTurnResult:
		t := rec.TurnResult
		if !validTurnResult(t) {
			return
		}
		if f.fp != nil {
			f.fpOutcome(t, idx)
			return
		}
		k := keyOf(t.PromptID)
		h := f.outcomes[k]
		h.count++
		h.idx = idx
		h.cancelled = t.State == "cancelled" && t.HasCancelledAt
		f.outcomes[k] = h
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
	if pid != "" && f.fp != nil {
		return f.fpCancelled(pid)
	}
	if pid == "" || f.tags[keyOf(pid)] != 1 {
		return false
	}
	p, ok := f.prompts[keyOf(pid)]
	if !ok || p.count != 1 {
		return false
	}
	ownerIdx, ownerPrompt, ownerDaemon, hasDaemon := p.idx, pid, p.daemon, p.hasDaemon
	if f.attempt.ok && f.attempt.idx > ownerIdx {
		ownerIdx, ownerPrompt = f.attempt.idx, f.attempt.promptID
		ownerDaemon, hasDaemon = keyOf(f.attempt.daemon), f.attempt.daemon != ""
	}
	if ownerPrompt != pid || !hasDaemon || f.daemons[ownerDaemon] != 1 {
		return false
	}
	r, ok := f.outcomes[ownerDaemon]
	return ok && r.count == 1 && r.idx > ownerIdx && r.cancelled
}
