package simulations

import (
	"strconv"

	"github.com/tailproof/tailproof/projections/ownership"
)

// Background turns: notification and cron turns, and a prompt aborting one.

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
// deliveredTurn notification or a cron record. A third of the 0.24.4
// version's background turns are serve cron turns (cronTurn): no opener, no
// stamp, only their calls' telemetry names them; since 2026-12-01 the model
// runs them, call identity (ADR 0023) being what tells their records from
// the preceding turn's. A queued prompt aborts a running cron turn at once.
func (d *Daemon) Background() error {
	if d.bg != nil && d.bg.class == ownership.Cron && d.ver.is024() && len(d.queue) > 0 {
		return d.Dispatch() // the queued prompt aborts the cron turn first
	}
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
	case d.ver.is024() && d.src.IntN(3) == 0:
		d.cronTurn(t)
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

// abortsBackground says whether the prompt being dispatched aborts the
// running background turn: always a 0.24.4 cron turn, half the time a
// stamped notification turn that has begun.
func (d *Daemon) abortsBackground() bool {
	if d.bg.class == ownership.Cron && d.ver.is024() {
		return true
	}
	return d.bg.stamp != "" && d.bg.began() && d.src.IntN(2) == 0
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
