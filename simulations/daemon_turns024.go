package simulations

import (
	"strconv"

	"github.com/tailproof/tailproof/projections/ownership"
)

// The prompt-turn shapes of the published Qwen Code 0.24.4 agent beyond a
// plain answered turn, read in its bundle
// (~/.cache/tailproof/qwen-code-0.24.4/node_modules/@qwen-code/qwen-code/chunks/,
// line numbers approximate). Only the identity version (Version.is024)
// writes them.
//
//   - #executePromptInner (acpAgent-GQCJ4KZY.js ~6990–7290): the turn counter
//     moves first (this.turn += 1); a retry or continue writes no user
//     record (~7125) but its file_history_snapshot (~7274); a restored
//     question writes neither; a restored question with nothing to restore
//     (~7067) and a continue whose re-detection finds no interrupted turn
//     (~7094) return end_turn having written nothing; a UserPromptSubmit hook
//     that blocks (~7240) returns end_turn after the user record and before
//     the snapshot.
//   - A tool batch with a call the permission step cancelled
//     (stopAfterPermissionCancel, ~7646; the result is status "cancelled",
//     executionStatus "not_started", earlyErrorResponse ~12235) ends the turn
//     end_turn with no final answer.
//   - Loop detection and repeated tool failure on a daemon prompt throw
//     createLoopDetectedTurnError: RequestError(-32603) (~3610, ~7685), so
//     the turn_result is state "error" with code "-32603" and the bridge's
//     terminal code is "-32603"; a plain Error has no code in the
//     turn_result and reaches the bridge as -32603 (ADR 0026). A failed or
//     aborted stream leaves its partial answer without telemetry or usage
//     (GeminiChat pendingPartialAssistantRecord, chunk-DPEB6S2R.js).
//   - A branch_checkpoint follows an end_turn turn's one tool-free answer
//     (~6646; recordBranchCheckpointTransaction, chunk-DPEB6S2R.js ~31105;
//     none when the turn has no such answer), before #settleTurnRecording
//     (~8771) queues the turn_result: resultText only when the turn captured
//     final text, cancelledAt only for a cancel the bridge asked for, the
//     record flushed before prompt() returns (~6351), then the bridge's
//     cancelled terminal.
//
// A turn that ends end_turn without an answer is completed (the daemon's
// terminal is completed, stopReason end_turn) once a record on disk shows
// the end: after a permission-cancelled batch the end is certain (the batch
// itself shows it), so the turn is completed when the batch is written; a
// blocked hook's or an empty continue's end is in the agent's memory only
// until a record of it reaches disk, and a crash before that is scored as a
// cut turn — as a crash before a streamed answer's record is (ADR 0008,
// 2026-12-01). That record is its turn_result or the bridge's completed
// terminal, whichever lands first: #settleTurnRecording only queues a
// completed turn's turn_result (recordTurnResult → appendRecord →
// enqueueRecordWrite, chunk-DPEB6S2R.js ~32030; it flushes only a
// cancelled one), and the bridge appends the terminal from the result
// prompt() returned (promptLedgerTerminalRecord, chunk-ODAWVZRE.js ~9755),
// so either order reaches disk, and once either is there the turn is over
// (2026-12-02; before, a completed terminal without the turn_result was
// labelled interrupted). stFinish marks the end; unrecorded says it is the
// second kind.

// plan024 draws a 0.24.4 prompt turn other than a plain user turn; ok is
// false for a plain one (about 11 in 16).
func (d *Daemon) plan024(p *prompt) (s []step, ok bool) {
	done := step{state: "completed"}
	switch d.src.IntN(16) {
	case 0: // a continue or restored question with nothing to do: no write
		p.shape = "nothing to continue"
		s = []step{{kind: stTurnNo}, {kind: stFinish, unrecorded: true}}
	case 1: // a blocking UserPromptSubmit hook: the user record only
		p.shape = "blocked by a hook"
		s = []step{{kind: stUser, bare: true}, {kind: stFinish, unrecorded: true}}
	case 2: // a permission cancel ends the turn after its tool batch
		p.shape = "ended by a permission cancel"
		s = d.rounds(p, []step{{kind: stUser}})
		n := 1 + d.src.IntN(2)
		calls := make([]string, n)
		for i := range calls {
			calls[i] = p.id + "-d" + strconv.Itoa(i)
		}
		s = append(s, step{kind: stCall, calls: calls})
		denied := d.src.IntN(n)
		for i := range calls {
			s = append(s, step{kind: stResult, calls: calls[i : i+1], denied: i == denied})
		}
		s = append(s, step{kind: stFinish})
	case 3: // a retry or continue with work: snapshot, no user record
		p.shape = "retry or continue"
		return d.answerTurn(p, []step{{kind: stSnapshot}}), true
	default:
		return nil, false
	}
	return append(s, d.settle(done)...), true
}

// error024 is how a 0.24.4 turn cut by an error ends: maybe the failed
// stream's partial answer, then the error with the codes the real writer
// writes.
func (d *Daemon) error024(s []step) ([]step, step) {
	if last := s[len(s)-1].kind; last != stCall && d.src.IntN(3) == 0 {
		s = append(s, step{kind: stPartial})
	}
	e := step{kind: stError, state: "error", ledger: "-32603"}
	switch d.src.IntN(4) {
	case 0, 1: // a RequestError -32603 (loop detection, repeated tool failure)
		e.code = "-32603"
	case 2: // a RequestError 429 (rate limit): both keep its code
		e.code, e.ledger = "429", "429"
	}
	return s, e // case 3: a plain Error, no code in the turn_result
}

// snapshot is a 0.24.4 prompt turn's start: the next turn id, named by its
// file_history_snapshot.
func (d *Daemon) snapshot(t *turn) error {
	d.turns++
	t.callID = d.sid + "########" + strconv.Itoa(d.turns)
	return d.write(&rec{kind: recSnapshot, prompt: t.callID})
}

// finishTurn marks the running prompt's turn finished: its final answer, or an
// end_turn without one. The prompt's final record is the turn's last
// record (-1: it wrote none).
func (d *Daemon) finishTurn(t *turn) {
	p := t.p
	if p == nil || p.truth == TruthDeadline || p.truth == TruthCancelled {
		return
	}
	if p.ended {
		// An end the agent decided before (unrecorded): its turn_result is
		// the record that shows it.
		p.finished, p.truth, p.final = true, TruthCompleted, len(d.recs)-1
		return
	}
	p.finished, p.truth, p.final = true, TruthCompleted, -1
	if n := len(d.recs) - 1; n >= t.first {
		p.final = n
	}
	d.observe(ownership.Foreground, ownership.Streamed, p.id)
}

// usage says whether a completed call of t writes usageMetadata: under call
// identity, unless the run's provider reports no tokens.
func (d *Daemon) usage(t *turn) bool {
	return (t.callID != "" || t.stamp != "") && !d.noUsage
}

// cancellable says the running prompt can be cancelled by the user (0.24.4:
// the bridge's cancel aborts the running turn): its turn has not ended. An
// end the agent decided (ended: a blocking hook, nothing to continue) is
// past cancelling: #promptWithTurnRecording returned end_turn, and prompt()
// settles it "completed" (acpAgent-GQCJ4KZY.js ~6339) whatever the abort
// signal says afterwards.
func (d *Daemon) cancellable() bool {
	t := d.running
	if !d.ver.is024() || t == nil || len(t.steps) == 0 {
		return false
	}
	p := t.p
	return !p.finished && !p.ended && p.truth != TruthErrored && p.truth != TruthDeadline && p.truth != TruthCancelled
}

// cancelRunning cancels the running prompt: a call in flight leaves its
// partial answer (half the time), then the turn_result with cancelledAt is
// flushed and the bridge appends the cancelled terminal.
func (d *Daemon) cancelRunning() error {
	d.tick()
	t := d.running
	var rest []step
	if k := t.steps[0].kind; (k == stCall || k == stText) && d.src.IntN(2) == 0 {
		rest = append(rest, step{kind: stPartial})
	}
	t.steps = append(rest, step{kind: stTurnResult, state: "cancelled", cancelAt: d.clock},
		step{kind: stTerminal, state: "cancelled"})
	t.p.truth = TruthCancelled
	d.observe(ownership.Foreground, ownership.Streamed, t.p.id)
	d.tracef("cancel running %s", t.p.id)
	return nil
}

// cronTurn is a 0.24.4 serve cron turn (#executeCronPromptInner,
// acpAgent-GQCJ4KZY.js; observed on the real daemon: docs/qwen-0.24.4-records.md,
// "Cron turns in serve"): no opener, no stamp, no ledger record, no
// turn_result; every completed call's telemetry names
// "<sid>########cron<ms>". A prompt aborts it at once (prompt():
// cronAbortController.abort()), leaving a partial answer without telemetry.
func (d *Daemon) cronTurn(t *turn) {
	t.class = ownership.Cron
	t.callID = d.sid + "########cron" + strconv.FormatInt(d.clock, 10)
}
