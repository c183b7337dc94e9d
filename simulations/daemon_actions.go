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
	if d.running == nil && d.bg != nil && d.bg.stamp != "" && d.bg.began() && len(d.queue) > 0 && d.src.IntN(2) == 0 {
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
	d.running = &turn{p: p, steps: d.plan(p), started: d.clock}
	d.observe(ownership.Foreground, ownership.Start, p.id)
	d.tracef("dispatch %s", p.id)
	return d.Step()
}

// plan draws a prompt's turn: its user record, tool rounds (calls with or
// without ids, each answered), a final answer — or a local slash command, or
// an error part way — then the settle writes.
func (d *Daemon) plan(p *prompt) []step {
	var s []step
	if d.pct(d.prof.SlashPct) {
		s = append(s, step{kind: stSlashUser}, step{kind: stSlashResult})
		return append(s, d.settle("completed")...)
	}
	s = append(s, step{kind: stUser})
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
	if d.pct(d.prof.ErrPct) {
		cut := 1 + d.src.IntN(len(s))
		s = append(s[:cut:cut], step{kind: stError})
		return append(s, d.settle("error")...)
	}
	s = append(s, step{kind: stText})
	return append(s, d.settle("completed")...)
}

// settle is the bookkeeping after a turn ends: the turn_result record (newer
// daemons) and the ledger terminal, in either order.
func (d *Daemon) settle(state string) []step {
	term := step{kind: stTerminal, state: state}
	if !d.ver.TurnResult {
		return []step{term}
	}
	tr := step{kind: stTurnResult, state: state}
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
		if err == nil && s.kind == stUser && d.ver.Identity && d.ver.Stamps {
			// 0.24.4's ACP prompt path: the turn runs as "<sid>########<n>"
			// and its file_history_snapshot names it right after the
			// prompt's user record (ADR 0023).
			d.turns++
			t.callID = d.sid + "########" + strconv.Itoa(d.turns)
			err = d.write(&rec{kind: recSnapshot, prompt: t.callID})
		}
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
			err = d.write(&rec{kind: recAssistantCall, calls: s.calls, bg: stampOf(t, s), usage: t.callID != "" || t.stamp != ""})
		}
	case stResult:
		if err = d.telemetry(t, s, "tool_call", s.calls[0]); err == nil {
			err = d.write(&rec{kind: recToolResult, calls: s.calls, bg: stampOf(t, s)})
		}
	case stText, stSlashResult:
		k := recAssistantText
		if s.kind == stSlashResult {
			k = recSlashResult
		} else {
			err = d.telemetry(t, s, "api_response", "")
		}
		if err == nil {
			err = d.write(&rec{kind: k, bg: stampOf(t, s), usage: k == recAssistantText && (t.callID != "" || t.stamp != "")})
		}
		if err == nil && p != nil && p.truth != TruthDeadline {
			p.finished, p.truth, p.final = true, TruthCompleted, len(d.recs)-1
			d.observe(ownership.Foreground, ownership.Streamed, p.id)
		}
	case stError:
		if p != nil && p.truth != TruthDeadline {
			p.truth = TruthErrored
			d.observe(ownership.Foreground, ownership.Streamed, p.id)
		}
	case stTurnResult:
		err = d.write(&rec{kind: recTurnResult, prompt: p.id, state: s.state, started: t.started})
		if err == nil && len(t.steps) == 1 && p.settled {
			d.observe(ownership.Foreground, ownership.Settle, p.id)
		}
	case stTerminal:
		code := ""
		if s.state == "error" {
			code = "api_error"
		}
		stop := ""
		if s.state == "completed" {
			stop = "end_turn"
		}
		if err = d.appendLedger(ledger.Terminal(p.id, ledger.TerminalState(s.state), code, stop, d.clock)); err == nil {
			p.settled = true
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

// Cancel cancels a queued prompt (not the running one).
func (d *Daemon) Cancel() error {
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
	if t == nil || t.p.finished || t.p.truth == TruthErrored {
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
		if s.kind != stTerminal && s.kind != stTurnResult && s.kind != stError {
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

// Background runs a background notification or cron turn one step at a
// time (no ledger records, no turn_result); FIFO dispatch waits for it.
//
// A 0.24.4 notification turn (Version.Stamps) is what the ACP agent writes
// for a finished background task: either the in-process path
// (#enqueueBackgroundNotification: background_task_completed, then inside
// the turn the stamped notification) or the daemon-delivered one
// (recordNotificationStrict on arrival, unstamped, then
// background_task_completed), followed by the turn's model and tool
// records, every one stamped. The fallback writer's turn opens with a
// deliveredTurn notification or a cron record. 0.24.4's serve cron turns
// write no opener at all; that shape is not run (ADR 0015: nothing on disk
// tells its records from the preceding turn's).
func (d *Daemon) Background() error {
	if d.bg != nil {
		done, err := d.advance(d.bg)
		if done {
			d.observe(d.bg.class, ownership.Settle, d.bg.id)
			d.bg = nil
		}
		return err
	}
	if d.running != nil {
		return nil
	}
	id := "bg-" + strconv.Itoa(d.seq)
	t := &turn{class: ownership.Notification, id: id}
	switch {
	case d.ver.Stamps:
		t.stamp = d.sid + "########notification" + id
		if d.src.IntN(2) == 0 {
			t.steps = []step{{kind: stBgDone}, {kind: stNotification}}
		} else {
			t.steps = []step{{kind: stNotification, unstamped: true}, {kind: stBgDone}}
		}
	case d.ver.CronOpener && d.src.IntN(2) == 0:
		t.class, t.steps = ownership.Cron, []step{{kind: stCron}}
	default:
		t.steps = []step{{kind: stNotification}}
	}
	if d.src.IntN(3) > 0 {
		t.steps = append(t.steps, step{kind: stCall, calls: []string{id}}, step{kind: stResult, calls: []string{id}})
	}
	t.steps = append(t.steps, step{kind: stText})
	d.bg = t
	d.observe(t.class, ownership.Start, t.id)
	d.tracef("background turn")
	return d.Background()
}

// began reports whether the background turn has written its user entry: a
// notification still queued behind a prompt is not aborted, it waits.
func (t *turn) began() bool {
	for _, s := range t.steps {
		if s.kind == stNotification {
			return false
		}
	}
	return true
}

// abortBackground is a prompt aborting the running notification turn: the
// turn writes what it had (a partial answer, stamped, half the time) and
// ends without its remaining steps.
func (d *Daemon) abortBackground() error {
	t := d.bg
	d.tracef("prompt aborts the background turn")
	if d.src.IntN(2) == 0 {
		d.tick()
		if err := d.write(&rec{kind: recAssistantText, bg: t.stamp}); err != nil {
			return err
		}
	}
	d.observe(t.class, ownership.Settle, t.id)
	d.bg = nil
	return nil
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
