package simulations

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/machines"
)

// Crashes of the model: how the process dies, what the filesystem keeps,
// and the fork that lets every action be a crash point.

// CrashKind is how the process died.
type CrashKind uint8

const (
	CrashKill  CrashKind = iota // SIGKILL: the page cache survives
	CrashPower                  // power loss: unsynced bytes are lost or torn
)

// String names the crash as the trace does.
func (k CrashKind) String() string {
	if k == CrashPower {
		return "power loss"
	}
	return "kill"
}

// armTornLedger arms a crash inside the next ledger append's write, letting
// a prefix of its bytes land.
func (d *Daemon) armTornLedger() {
	// Not a halting fault: the process dies at the failed write (the model
	// treats the error as the crash), but the kernel must stay usable so a
	// kill can still keep the page cache. A dead process cannot roll its
	// append back (ADR 0022), so the cut the store would make fails too.
	d.mem.Inject(memory.Fault{Op: memory.OpWrite, Path: d.lpath, Torn: d.src.IntN(64)})
	d.mem.Inject(memory.Fault{Op: memory.OpTruncate, Path: d.lpath})
}

// crash kills the process (the filesystem reboots) and records every
// prompt's truth at this point.
func (d *Daemon) crash(kind CrashKind) error { return d.crashAs(kind, false) }

// crashAs is crash; final says nothing will run on this filesystem but
// recovery. A kill then leaves the kernel exactly as it was — no reboot, so
// no writeback is needed to keep the page cache: every reader sees the same
// bytes either way, and only a later power loss (there is none) could tell
// synced from unsynced.
func (d *Daemon) crashAs(kind CrashKind, final bool) error {
	if d.trace != nil {
		d.tracef("crash (%s)", kind)
	}
	if d.tf != nil {
		d.tf.Close()
		d.tf = nil
	}
	var keep func(string, []byte) int
	if kind == CrashKill && final {
		d.mem.ClearFaults()
		keep = nil
	} else if kind == CrashKill {
		// The kernel outlives the process: the transcript and its directory
		// entry are as written, and so is any partial ledger write.
		d.mem.ClearFaults()
		if _, err := d.mem.Stat(d.tpath); err == nil {
			f, err := d.mem.OpenFile(d.tpath, os.O_RDONLY, 0)
			if err == nil {
				d.tf = f
				err = d.Writeback()
				f.Close()
				d.tf = nil
			}
			if err != nil && !isCrash(err) {
				return err
			}
		}
		keep = func(_ string, b []byte) int { return len(b) }
	} else {
		keep = func(_ string, b []byte) int {
			if d.src.IntN(3) == 0 {
				return 0
			}
			return d.src.IntN(len(b) + 1)
		}
	}
	d.mem.ClearFaults()
	if kind != CrashKill || !final {
		d.mem.CrashKeeping(keep)
	}
	d.crashes++
	for _, p := range d.prompts {
		p.dead = true
	}
	d.queue, d.running, d.bg, d.wedged = nil, nil, nil, nil
	if d.adm != nil {
		d.adm = machines.NewAdmission()
	}
	// What survived of the transcript, as the restarted daemon sees it.
	data, err := d.mem.ReadFileShared(d.tpath)
	if err != nil {
		data = nil
	}
	size := int64(len(data))
	n := 0
	for n < len(d.recs) && d.recs[n].end-1 <= size {
		n++
	}
	readable := func(i int) bool {
		r := d.recs[i]
		if !r.glued {
			return true
		}
		// A glued record is readable only through the }{ recovery, when the
		// fragment before it was a whole object.
		return i > 0 && d.recs[i-1].end-1 == r.start
	}
	for _, p := range d.prompts {
		if p.finished && !p.lost && p.final >= 0 && (p.final >= n || !readable(p.final)) {
			p.lost = true
		}
	}
	// Capped: an append after the cut must not write into the array a fork
	// shares (fork hands out the records capped at their length too).
	d.recs = d.recs[:n:n]
	d.size = size
	d.endsNL = size == 0 || data[size-1] == '\n'
	d.last = ""
	for i := n - 1; i >= 0; i-- {
		if readable(i) {
			d.last = d.recs[i].uuid
			break
		}
	}
	// A restarted process: none of the old store's in-process state.
	d.store = memory.NewQwenStoreOn(d.mem, memory.DefaultQwenLayout)
	return d.checkAcked()
}

// checkAcked is the durability invariant: every ledger line whose append
// returned success is still in the ledger, in order.
func (d *Daemon) checkAcked() error {
	data, err := d.mem.ReadFileShared(d.lpath)
	if err != nil && len(d.acked) > 0 {
		return fmt.Errorf("fsynced ledger lost: %v", err)
	}
	i := 0
	for line := range bytes.Lines(data) {
		if i < len(d.acked) && bytes.Equal(bytes.TrimSuffix(line, []byte{'\n'}), d.acked[i]) {
			i++
		}
	}
	if i < len(d.acked) {
		return fmt.Errorf("fsynced ledger record lost: %s", d.acked[i])
	}
	return nil
}

func isCrash(err error) bool {
	return errors.Is(err, memory.ErrCrashed) || errors.Is(err, memory.ErrInjected)
}

// fork returns an independent copy of the daemon as it is now — its
// filesystem (durable and page-cache bytes), its store, the prompts and
// their truth, the turns it is running — drawing from src from here on. The
// fork is a process that will only run to a crash: it has no admission
// machine (continuations are probed on the timeline) and none of the
// timeline's violations, wrong terminals or counters. Nothing the fork does
// reaches d, and d's next actions never reach the fork.
func (d *Daemon) fork(src Source) (*Daemon, error) {
	f := &Daemon{ctx: d.ctx, src: src, prof: d.prof, ver: d.ver, sid: d.sid, tpath: d.tpath, lpath: d.lpath,
		clock: d.clock, seq: d.seq, turns: d.turns, noUsage: d.noUsage, size: d.size, endsNL: d.endsNL, last: d.last, crashes: d.crashes, armed: d.armed, memo: d.memo}
	f.mem = d.mem.Clone()
	f.store = memory.NewQwenStoreOn(f.mem, d.store.Layout())
	if d.tf != nil {
		tf, err := f.mem.OpenFile(f.tpath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("simulations: fork: reopen transcript: %w", err)
		}
		f.tf = tf
	}
	// One array holds the copies; a prompt's copy is found by its id
	// (unique).
	copies := make([]prompt, len(d.prompts))
	f.prompts = make([]*prompt, len(d.prompts))
	f.byID = make(map[string]*prompt, len(d.prompts))
	for i, p := range d.prompts {
		copies[i] = *p
		f.prompts[i], f.byID[p.id] = &copies[i], &copies[i]
	}
	remap := func(p *prompt) *prompt { return f.byID[p.id] }
	f.queue = make([]*prompt, len(d.queue))
	for i, p := range d.queue {
		f.queue[i] = remap(p)
	}
	// A turn's steps are never written in place (advance reslices, Deadline
	// builds a new slice), so the copy may share them.
	cp := func(t *turn) *turn {
		if t == nil {
			return nil
		}
		c := *t
		if t.p != nil {
			c.p = remap(t.p)
		}
		return &c
	}
	f.running, f.bg = cp(d.running), cp(d.bg)
	for _, t := range d.wedged {
		f.wedged = append(f.wedged, cp(t))
	}
	// Shared, capped at their length: neither side writes an element in
	// place, and an append by either one lands in a new array (crashAs
	// caps its cut too).
	f.recs = d.recs[:len(d.recs):len(d.recs)]
	f.acked = d.acked[:len(d.acked):len(d.acked)]
	if d.trace != nil {
		f.trace = slices.Clone(d.trace)
	}
	return f, nil
}
