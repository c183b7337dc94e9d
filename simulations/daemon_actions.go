package simulations

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/projections/ownership"
)

// The model's actions: what the daemon does between crashes (admission,
// dispatch, turn steps, cancel, deadlines, background and cron turns,
// compression, writeback, archive cycles).

// Admit admits a prompt: tail marker (newer daemons), then the write-ahead
// in_flight record, then the FIFO queue.
func (d *Daemon) Admit() error {
	d.tick()
	p := &prompt{id: "p" + strconv.Itoa(len(d.prompts)+1), at: d.clock, final: -1}
	tail := ""
	if d.ver.Marker {
		tail, _ = d.store.TranscriptTailUUID(d.ctx, d.sid)
	}
	d.prompts = append(d.prompts, p)
	d.byID[p.id] = p
	d.queue = append(d.queue, p)
	d.tracef("admit %s at B%+d tail=%q", p.id, p.at-recordBaseMs, tail)
	return d.appendLedger(ledger.InFlight(p.id, p.at, tail))
}

// Dispatch starts the head of the queue when nothing is running. A queued
// prompt may abort a running 0.24.4 notification turn first (the agent's
// prompt path aborts it and waits for it): the aborted turn still writes its
// partial answer, stamped.
func (d *Daemon) Dispatch() error {
	if d.running == nil && d.bg != nil && len(d.queue) > 0 && d.abortsBackground() {
		if err := d.abortBackground(); err != nil {
			return err
		}
	}
	if !d.idle() || len(d.queue) == 0 {
		return nil
	}
	p := d.queue[0]
	d.queue = d.queue[1:]
	p.dispatched = true
	d.running = &turn{p: p, steps: d.plan(p), started: d.clock, start: d.last, first: len(d.recs)}
	d.observe(ownership.Foreground, ownership.Start, p.id)
	d.tracef("dispatch %s", p.id)
	return d.Step()
}

// plan draws a prompt's turn: its user record, tool rounds (calls with or
// without ids, each answered), a final answer — or a local slash command, or
// an error part way — then the settle writes. On the 0.24.4 version some
// turns take one of the agent's other shapes (plan024).
func (d *Daemon) plan(p *prompt) []step {
	var s []step
	if d.pct(d.prof.SlashPct) {
		s = append(s, step{kind: stSlashUser}, step{kind: stSlashResult})
		return append(s, d.settle(step{state: "completed"})...)
	}
	if d.ver.is024() {
		if s, ok := d.plan024(p); ok {
			return s
		}
	}
	return d.answerTurn(p, []step{{kind: stUser}})
}

// answerTurn continues a turn opened by s: tool rounds, then a final answer
// or an error part way.
func (d *Daemon) answerTurn(p *prompt, s []step) []step {
	s = d.rounds(p, s)
	if d.pct(d.prof.ErrPct) {
		cut := 1 + d.src.IntN(len(s))
		s = s[:cut:cut]
		e := step{kind: stError, state: "error", ledger: "api_error"}
		if d.ver.is024() {
			s, e = d.error024(s)
		}
		s = append(s, e)
		return append(s, d.settle(e)...)
	}
	s = append(s, step{kind: stText})
	if d.ver.is024() {
		// The end_turn turn's one tool-free answer: its branch checkpoint
		// comes before the settle writes.
		s = append(s, step{kind: stCheckpoint})
	}
	return append(s, d.settle(step{state: "completed", answered: d.ver.is024()})...)
}

// rounds appends 0–2 tool rounds (1–2 calls each, each answered) to s.
func (d *Daemon) rounds(p *prompt, s []step) []step {
	noID := d.pct(d.prof.NoIDPct)
	rounds := d.src.IntN(3)
	for r := 0; r < rounds; r++ {
		n := 1 + d.src.IntN(2)
		calls := make([]string, n)
		for i := range calls {
			if !noID {
				calls[i] = p.id + "-c" + strconv.Itoa(r) + strconv.Itoa(i)
			}
		}
		s = append(s, step{kind: stCall, calls: calls})
		for i := range calls {
			s = append(s, step{kind: stResult, calls: calls[i : i+1]})
		}
	}
	return s
}

// settle is the bookkeeping after a turn ends: the turn_result record (newer
// daemons) and the ledger terminal, in either order. end carries the
// outcome: state, error codes, resultText.
func (d *Daemon) settle(end step) []step {
	term, tr := end, end
	term.kind, tr.kind = stTerminal, stTurnResult
	if !d.ver.TurnResult {
		return []step{term}
	}
	if d.src.IntN(2) == 0 {
		return []step{tr, term}
	}
	return []step{term, tr}
}

// Step advances the running prompt's turn by one write.
func (d *Daemon) Step() error {
	if d.running == nil {
		return nil
	}
	t := d.running
	done, err := d.advance(t)
	if done {
		d.running = nil
	}
	return err
}

// advance performs t's next step and reports whether t has no steps left.
func (d *Daemon) advance(t *turn) (bool, error) {
	if len(t.steps) == 0 {
		return true, nil
	}
	d.tick()
	s := t.steps[0]
	p := t.p
	var err error
	switch s.kind {
	case stUser, stSlashUser:
		r := rec{kind: recUser}
		if s.kind == stSlashUser {
			r.kind = recSlashUser
		}
		if d.ver.Identity {
			r.daemon = p.id
		}
		err = d.write(&r)
		if err == nil && s.kind == stUser && d.ver.is024() {
			// 0.24.4's ACP prompt path: the turn runs as "<sid>########<n>"
			// and its file_history_snapshot names it right after the
			// prompt's user record (ADR 0023) — unless a UserPromptSubmit
			// hook blocked the turn first (s.bare).
			if s.bare {
				d.turns++
			} else {
				err = d.snapshot(t)
			}
		}
	case stSnapshot:
		err = d.snapshot(t)
	case stTurnNo:
		d.turns++
	case stFinish:
		if s.unrecorded && p.truth != TruthDeadline && p.truth != TruthCancelled {
			p.ended = true
			d.observe(ownership.Foreground, ownership.Streamed, p.id)
		} else {
			d.finishTurn(t)
		}
	case stCheckpoint:
		err = d.write(&rec{kind: recCheckpoint, prompt: t.start, calls: []string{t.answer}})
	case stPartial:
		err = d.write(&rec{kind: recAssistantText, bg: stampOf(t, s)})
	case stNotification:
		// The fallback writer marks the delivered turn's notification; 0.24.4
		// stamps it instead (unless it was persisted on delivery).
		err = d.write(&rec{kind: recNotification, delivered: t.stamp == "", bg: stampOf(t, s)})
	case stCron:
		err = d.write(&rec{kind: recCron})
	case stBgDone:
		err = d.write(&rec{kind: recBgDone})
	case stCall:
		if err = d.telemetry(t, s, "api_response", ""); err == nil {
			err = d.write(&rec{kind: recAssistantCall, calls: s.calls, bg: stampOf(t, s), usage: d.usage(t)})
		}
	case stResult:
		if err = d.telemetry(t, s, "tool_call", s.calls[0]); err == nil {
			err = d.write(&rec{kind: recToolResult, calls: s.calls, bg: stampOf(t, s), denied: s.denied})
		}
	case stText, stSlashResult:
		k := recAssistantText
		if s.kind == stSlashResult {
			k = recSlashResult
		} else {
			err = d.telemetry(t, s, "api_response", "")
		}
		if err == nil {
			err = d.write(&rec{kind: k, bg: stampOf(t, s), usage: k == recAssistantText && d.usage(t)})
			t.answer = d.last
		}
		if err == nil {
			d.finishTurn(t)
		}
	case stError:
		if p != nil && p.truth != TruthDeadline {
			p.truth = TruthErrored
			d.observe(ownership.Foreground, ownership.Streamed, p.id)
		}
	case stTurnResult:
		err = d.write(&rec{kind: recTurnResult, prompt: p.id, state: s.state, started: t.started,
			code: s.code, cancelled: s.cancelAt, answered: s.answered})
		if err == nil && p.ended && !p.finished {
			d.finishTurn(t)
		}
		if err == nil && len(t.steps) == 1 && p.settled {
			d.observe(ownership.Foreground, ownership.Settle, p.id)
		}
	case stTerminal:
		code := ""
		if s.state == "error" {
			code = s.ledger
		}
		stop := ""
		if s.state == "completed" {
			stop = "end_turn"
		}
		if err = d.appendLedger(ledger.Terminal(p.id, ledger.TerminalState(s.state), code, stop, d.clock)); err == nil {
			p.settled = true
			if p.ended && !p.finished && s.state == "completed" {
				// The bridge appends the terminal after prompt() returned
				// (acpAgent-GQCJ4KZY.js ~6339): the turn is over whether or
				// not its queued turn_result reached the transcript, and the
				// fsynced ledger record that shows it cannot be lost.
				p.finished, p.truth, p.final = true, TruthCompleted, -1
			}
			if len(t.steps) == 1 {
				d.observe(ownership.Foreground, ownership.Settle, p.id)
			}
		}
	}
	if err != nil {
		return false, err
	}
	if p != nil && !p.finished && p.truth == TruthNeverStarted {
		p.truth = TruthInterrupted
	}
	t.steps = t.steps[1:]
	return len(t.steps) == 0, nil
}

// Cancel cancels a queued prompt, or on the 0.24.4 version the running
// one (cancelRunning).
func (d *Daemon) Cancel() error {
	if d.cancellable() && (len(d.queue) == 0 || d.src.IntN(2) == 0) {
		return d.cancelRunning()
	}
	if len(d.queue) == 0 {
		return nil
	}
	d.tick()
	i := d.src.IntN(len(d.queue))
	p := d.queue[i]
	if err := d.appendLedger(ledger.Terminal(p.id, ledger.Cancelled, "", "", d.clock)); err != nil {
		return err
	}
	d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
	p.truth, p.settled = TruthCancelled, true
	d.tracef("cancel %s", p.id)
	return nil
}

// Deadline fires the running prompt's deadline: the error terminal is
// published and the queue released, but the wedged agent keeps writing.
func (d *Daemon) Deadline() error {
	t := d.running
	if t == nil || t.p.finished || t.p.truth == TruthErrored || t.p.truth == TruthCancelled {
		return nil
	}
	d.tick()
	if err := d.appendLedger(ledger.Terminal(t.p.id, ledger.Error, "prompt_deadline_exceeded", "", d.clock)); err != nil {
		return err
	}
	t.p.truth, t.p.settled = TruthDeadline, true
	d.observe(ownership.Foreground, ownership.Settle, t.p.id)
	d.tracef("deadline %s", t.p.id)
	// The agent's remaining model and tool writes continue; its settle
	// bookkeeping is gone (the prompt is settled).
	var rest []step
	for _, s := range t.steps {
		if s.kind != stTerminal && s.kind != stTurnResult && s.kind != stError && s.kind != stFinish && s.kind != stCheckpoint {
			rest = append(rest, s)
		}
	}
	d.running = nil
	if len(rest) > 0 {
		t.steps = rest
		d.wedged = append(d.wedged, t)
	}
	return nil
}

// Wedged lets one wedged agent write its next record.
func (d *Daemon) Wedged() error {
	if len(d.wedged) == 0 {
		return nil
	}
	i := d.src.IntN(len(d.wedged))
	done, err := d.advance(d.wedged[i])
	if done {
		d.wedged = append(d.wedged[:i:i], d.wedged[i+1:]...)
	}
	return err
}

// telemetry writes the ui_telemetry record 0.24.4 writes before a call's
// record (logApiResponse before the assistant record of a completed model
// call, logToolCall before a tool_result), naming the call's turn: the
// prompt's internal turn id, or a notification turn's turnId. Only turns
// that carry such an id write it (the identity version).
func (d *Daemon) telemetry(t *turn, s step, event, callID string) error {
	id := t.callID
	if t.stamp != "" {
		id = t.stamp
	}
	if id == "" {
		return nil
	}
	return d.write(&rec{kind: recTelemetry, prompt: id, state: event, calls: []string{callID}, bg: stampOf(t, s)})
}

// stampOf is the backgroundTurn stamp of step s of turn t.
func stampOf(t *turn, s step) string {
	if s.unstamped {
		return ""
	}
	return t.stamp
}

// Compress writes a chat_compression checkpoint.
func (d *Daemon) Compress() error {
	d.tick()
	return d.write(&rec{kind: recCompression})
}

// Title writes a custom_title record (renameSession's shape, no provenance).
func (d *Daemon) Title() error {
	d.tick()
	return d.write(&rec{kind: recTitle})
}

// Writeback is the kernel flushing the transcript's dirty pages and the
// journal committing its directory entry — Qwen never fsyncs it itself.
func (d *Daemon) Writeback() error {
	if d.tf == nil {
		return nil
	}
	if err := d.tf.Sync(); err != nil {
		return fmt.Errorf("simulations: writeback: %w", err)
	}
	for dir := filepath.Dir(d.tpath); ; dir = filepath.Dir(dir) {
		if err := d.mem.SyncDir(dir); err != nil {
			return fmt.Errorf("simulations: writeback %s: %w", dir, err)
		}
		if dir == "/" {
			return nil
		}
	}
}

// ArchiveCycle archives and unarchives the idle session through the store
// (transcript and ledger move together).
func (d *Daemon) ArchiveCycle() error {
	if !d.idle() || len(d.wedged) > 0 {
		return nil
	}
	if _, err := d.mem.Stat(d.tpath); err != nil {
		return nil // Qwen archives sessions that have a transcript
	}
	if d.tf != nil {
		d.tf.Close()
		d.tf = nil
	}
	if _, err := d.store.Archive(d.ctx, d.sid); err != nil {
		return fmt.Errorf("simulations: archive: %w", err)
	}
	if _, err := d.store.Unarchive(d.ctx, d.sid); err != nil {
		return fmt.Errorf("simulations: unarchive: %w", err)
	}
	d.tracef("archive/unarchive cycle")
	return nil
}
