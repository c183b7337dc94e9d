package simulations

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/projections/ownership"
)

// Source is the randomness the model draws from: a seeded *rand.Rand in
// runs, rapid's draws in property tests (so a failure shrinks to a minimal
// interleaving). IntN returns a value in [0, n).
type Source interface {
	IntN(n int) int
}

// Truth is what really happened to a prompt, known only to the model.
type Truth uint8

const (
	TruthNeverStarted Truth = iota // queued (admitted) when the process died
	TruthInterrupted               // dispatched; the crash cut its turn
	TruthCompleted                 // its turn finished (the terminal may not have reached the ledger)
	TruthErrored                   // its turn ended in an error
	TruthCancelled                 // cancelled while queued
	TruthDeadline                  // settled by the prompt deadline; its agent kept writing
)

var truthNames = [...]string{"never-started", "interrupted", "completed", "errored", "cancelled", "deadline-exceeded"}

func (t Truth) String() string { return truthNames[t] }

// Version is what a daemon version writes. Older daemons write neither the
// tail marker nor prompt identity; newer ones write both, and turn_result.
type Version struct {
	Name       string
	Marker     bool // in_flight carries tailUuid
	Identity   bool // the prompt's user record carries daemonPromptId
	TurnResult bool // a turn_result system record at settle
	// Stamps: background notification turns as Qwen Code 0.24.4 runs them
	// (ADR 0015) — system/background_task_completed when the task's result
	// is queued, then every record the turn writes stamped backgroundTurn;
	// no deliveredTurn. Without it a notification turn is the fallback
	// writer's: its notification marked deliveredTurn, nothing stamped.
	// With Identity it also writes 0.24.4's call identities (ADR 0023): a
	// file_history_snapshot naming the prompt's turn after its user record,
	// ui_telemetry (api_response, tool_call) naming the call's turn before
	// each assistant and tool_result record, usageMetadata on a completed
	// call's assistant record.
	Stamps bool
	// CronOpener: a cron turn opens with a user/cron record (the
	// interactive CLI's recordCronPrompt). 0.24.4's serve agent writes none:
	// its cron turns leave only model and tool records, with no identity
	// and no stamp, and the model does not run them for that version (see
	// Daemon.Background).
	CronOpener bool
}

// Versions are the daemon versions the model runs, oldest first. Only
// "identity" is a released writer (Qwen Code 0.24.4's shapes); "plain" and
// "marker" are the older ledgers (no identity, no tail marker) with the
// fallback writer's background turns.
var Versions = []Version{
	{Name: "plain", CronOpener: true},
	{Name: "marker", Marker: true, CronOpener: true},
	{Name: "identity", Marker: true, Identity: true, TurnResult: true, Stamps: true},
}

// Profile weights the model's actions; a scenario's class is its profile
// and daemon version.
type Profile struct {
	Name string
	// Weights of the actions, indexed by action.
	W [NumActions]int
	// Clock: percent of ticks that do not advance, and that step back.
	EqualPct, BackPct int
	// Crash kind percents: power loss (unsynced bytes lost or torn) and a
	// crash in the middle of a ledger append; the rest are process kills
	// (page cache survives).
	PowerPct, TornLedgerPct int
	// Restarts: how many crashes before the final one, at most.
	MaxRestarts int
	// Percent of restarts that reconcile with tailproof's rules (the rest
	// skip reconciliation, as a restore that bypassed it).
	ReconcileOnRestartPct int
	// Per-turn shape.
	ErrPct, SlashPct, NoIDPct int
}

// Action is one thing the daemon can do next (Daemon.Do); profiles weight
// them and rapid draws them.
type Action uint8

// The actions, in the order profiles index their weights.
const (
	ActAdmit Action = iota
	ActDispatch
	ActStep
	ActCancel
	ActDeadline
	ActWedged
	ActBackground
	ActCompress
	ActTitle
	ActWriteback
	ActArchive
	ActRestart
	NumActions
)

var actionNames = [NumActions]string{"admit", "dispatch", "step", "cancel", "deadline", "wedged-step",
	"background", "compress", "title", "writeback", "archive-cycle", "crash-restart"}

func (a Action) String() string { return actionNames[a] }

// prompt is one admitted prompt and what the model knows about it.
type prompt struct {
	id         string
	at         int64
	truth      Truth
	dispatched bool
	finished   bool // its turn finished (final record written)
	final      int  // index into d.recs of its final record (-1: none)
	lost       bool // finished, but a crash lost or corrupted its final record
	settled    bool // a terminal was acknowledged by the ledger
	dead       bool // the process that ran it died
}

type stepKind uint8

const (
	stUser stepKind = iota
	stSlashUser
	stSlashResult
	stNotification
	stCron
	stBgDone // system/background_task_completed (never stamped)
	stCall
	stResult
	stText
	stError
	stTurnResult
	stTerminal
)

type step struct {
	kind  stepKind
	calls []string
	state string // turn_result / terminal state
	// unstamped: a record of a stamped background turn written outside it
	// (the task-completed record; a daemon-delivered notification, persisted
	// on arrival).
	unstamped bool
}

// turn is a running agent turn: a prompt's, or a background one (p == nil).
type turn struct {
	p     *prompt
	steps []step
	class ownership.Class // background turns: notification or cron
	id    string
	// stamp is the backgroundTurn turnId every record of the turn carries
	// ("" for prompt turns and unstamped writers).
	stamp string
	// started is the clock at dispatch (turn_result's startedAt).
	started int64
	// callID is the internal turn id of a prompt's turn under call identity
	// ("<sid>########<n>", Version.Stamps with Identity; "" otherwise): its
	// snapshot and every call's telemetry name it.
	callID string
}

// recInfo locates one transcript record in the file as the model wrote it.
type recInfo struct {
	uuid       string
	start, end int64 // byte range including the newline
	glued      bool  // written after a torn fragment: unreadable unless the fragment was a whole object
}

// Daemon is the model of one Qwen-style agent daemon process serving one
// session, restarted after every crash over the same filesystem.
type Daemon struct {
	ctx   context.Context
	src   Source
	prof  *Profile
	ver   Version
	sid   string
	mem   *memory.FS
	store *memory.QwenStore
	tpath string
	lpath string
	tf    vfs.File
	clock int64
	seq   int
	// turns is the ACP agent's turn counter (this.turn), primed from the
	// transcript after a restart (primeTurnFromHistory), so it runs on.
	turns   int
	prompts []*prompt
	byID    map[string]*prompt
	queue   []*prompt
	running *turn
	bg      *turn
	wedged  []*turn
	recs    []recInfo
	size    int64 // transcript bytes written (page cache)
	endsNL  bool  // transcript ends with a newline (or is empty)
	last    string
	acked   [][]byte // ledger lines whose append returned nil, in order
	crashes int
	armed   bool // a torn ledger append is armed
	// adm is the process's continuation admission, fed the live turns the
	// model runs; a restart starts a fresh one (nothing is live).
	adm          *machines.Admission
	continues    int // continuations admitted (each settled at once)
	wedgedWindow int // continuations admissible while a wedged agent still wrote
	trace        []string
	buf          []byte
	// Violations found while running (restart reconciliations).
	violations []string
	wrong      []string // tailproof's wrong terminals
	restartRec restartStats
	collect    bool // record evidence keys (Config.Ambiguity)
	// shapes, when set, collects the shape of every record written
	// (ModelShapes); shapeErr is the first line that did not parse.
	shapes   map[string]RecordShape
	shapeErr error
}

type restartStats struct {
	decided, wrong int
	// digest is the running hash of every restart's verdicts (Digest).
	digest uint64
}

// SessionID is the session every model daemon serves.
const SessionID = "00000000-0000-4000-8000-00000000517a"

// NewDaemon returns a daemon of version ver over a fresh in-memory store,
// drawing every choice from src and weighting actions by prof.
func NewDaemon(ctx context.Context, src Source, prof *Profile, ver Version) *Daemon {
	d := &Daemon{ctx: ctx, src: src, prof: prof, ver: ver, sid: SessionID, clock: recordBaseMs,
		byID: map[string]*prompt{}, endsNL: true}
	d.store = memory.NewQwenStore()
	d.mem = d.store.Mem()
	d.adm = machines.NewAdmission()
	d.tpath, _ = d.store.Layout().TranscriptPath(d.sid, jsonl.Active)
	d.lpath, _ = d.store.Layout().LedgerPath(d.sid, jsonl.Active)
	return d
}

func (d *Daemon) tracef(format string, args ...any) {
	if d.trace != nil {
		d.trace = append(d.trace, fmt.Sprintf(format, args...))
	}
}

func (d *Daemon) pct(p int) bool { return p > 0 && d.src.IntN(100) < p }

// tick moves the daemon's clock: usually forward, sometimes not at all
// (equal milliseconds), sometimes backward (an NTP step).
func (d *Daemon) tick() {
	switch r := d.src.IntN(100); {
	case r < d.prof.EqualPct:
	case r < d.prof.EqualPct+d.prof.BackPct:
		d.clock -= int64(1 + d.src.IntN(120_000))
		d.tracef("clock steps back to B%+d", d.clock-recordBaseMs)
	default:
		d.clock += int64(1 + d.src.IntN(1500))
	}
}

func (d *Daemon) newUUID() string {
	d.seq++
	return "r" + strconv.Itoa(d.crashes) + "-" + strconv.Itoa(d.seq)
}

// write appends one record to the transcript the way Qwen's writer does:
// one write of the line and its newline, no fsync, no torn-tail seal.
func (d *Daemon) write(r *rec) error {
	r.uuid, r.parent, r.ms = d.newUUID(), d.last, d.clock
	if d.tf == nil {
		if err := d.mem.MkdirAll(filepath.Dir(d.tpath), 0o700); err != nil {
			return fmt.Errorf("simulations: mkdir chats: %w", err)
		}
		f, err := d.mem.OpenFile(d.tpath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("simulations: open transcript: %w", err)
		}
		d.tf = f
	}
	d.buf = encode(d.buf[:0], d.sid, r)
	if _, err := d.tf.Write(d.buf); err != nil {
		return fmt.Errorf("simulations: write transcript: %w", err)
	}
	d.tracef("  transcript %s", bytes.TrimSpace(d.buf))
	d.noteShape(d.buf)
	d.recs = append(d.recs, recInfo{uuid: r.uuid, start: d.size, end: d.size + int64(len(d.buf)), glued: !d.endsNL})
	d.size += int64(len(d.buf))
	d.endsNL = true
	d.last = r.uuid
	return nil
}

// appendLedger appends through the real store (seal, fsync, directory
// fsync). An error other than a crash the model armed is a failure.
func (d *Daemon) appendLedger(r ledger.Record) error {
	line := ledger.Encode(r)
	d.tracef("  ledger %s", line)
	if err := d.store.AppendLedger(d.ctx, d.sid, line); err != nil {
		return err
	}
	d.acked = append(d.acked, line)
	return nil
}

func (d *Daemon) idle() bool { return d.running == nil && d.bg == nil }

// observe reports a live turn event to the admission machine, as the
// daemon's runtime does; a refusal means the model fed it an inconsistent
// stream, which is a model failure.
func (d *Daemon) observe(c ownership.Class, ph ownership.Phase, turn string) {
	if d.adm == nil {
		return // a fork: its process only runs to its crash, admission is the timeline's
	}
	if err := d.adm.Observe(d.ctx, ownership.Event{Class: c, Phase: ph, Turn: turn}); err != nil {
		d.violations = append(d.violations, "admission: "+err.Error())
	}
}

// probeAdmission checks the continuation gate against the truth after every
// action: it must refuse while a prompt or a background turn is live and
// admit when nothing is. When it admits, a continuation is started and
// settled at once through the real Continue path.
func (d *Daemon) probeAdmission() {
	live := d.running != nil || d.bg != nil
	vetoes := d.adm.Check(machines.ContinueRequest{ID: "probe"})
	switch {
	case live && len(vetoes) == 0:
		d.violations = append(d.violations, "admission: a continuation is admissible while a turn is live")
		return
	case live:
		return
	case len(vetoes) > 0:
		d.violations = append(d.violations, fmt.Sprintf("admission: refused with nothing live: %v", vetoes))
		return
	}
	if len(d.wedged) > 0 {
		d.wedgedWindow++
	}
	id := "continue-" + strconv.Itoa(d.continues+1)
	if err := d.adm.Continue(d.ctx, machines.ContinueRequest{ID: id}); err != nil {
		d.violations = append(d.violations, "admission: continue refused with nothing live: "+err.Error())
		return
	}
	d.continues++
	d.observe(ownership.Foreground, ownership.Settle, id)
}

// ---- actions ----

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

// ---- crash ----

// CrashKind is how the process died.
type CrashKind uint8

const (
	CrashKill  CrashKind = iota // SIGKILL: the page cache survives
	CrashPower                  // power loss: unsynced bytes are lost or torn
)

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
	d.tracef("crash (%s)", map[CrashKind]string{CrashKill: "kill", CrashPower: "power loss"}[kind])
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
	data, err := d.mem.ReadFile(d.tpath)
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
		if p.finished && !p.lost && (p.final >= n || !readable(p.final)) {
			p.lost = true
		}
	}
	d.recs = d.recs[:n]
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
	data, err := d.mem.ReadFile(d.lpath)
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
		clock: d.clock, seq: d.seq, turns: d.turns, size: d.size, endsNL: d.endsNL, last: d.last, crashes: d.crashes, armed: d.armed}
	f.mem = d.mem.Clone()
	f.store = memory.NewQwenStoreOn(f.mem, d.store.Layout())
	if d.tf != nil {
		tf, err := f.mem.OpenFile(f.tpath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("simulations: fork: reopen transcript: %w", err)
		}
		f.tf = tf
	}
	remap := make(map[*prompt]*prompt, len(d.prompts))
	f.prompts = make([]*prompt, len(d.prompts))
	f.byID = make(map[string]*prompt, len(d.prompts))
	for i, p := range d.prompts {
		c := *p
		f.prompts[i], f.byID[c.id], remap[p] = &c, &c, &c
	}
	f.queue = make([]*prompt, len(d.queue))
	for i, p := range d.queue {
		f.queue[i] = remap[p]
	}
	// A turn's steps are never written in place (advance reslices, Deadline
	// builds a new slice), so the copy may share them.
	cp := func(t *turn) *turn {
		if t == nil {
			return nil
		}
		c := *t
		if t.p != nil {
			c.p = remap[t.p]
		}
		return &c
	}
	f.running, f.bg = cp(d.running), cp(d.bg)
	for _, t := range d.wedged {
		f.wedged = append(f.wedged, cp(t))
	}
	f.recs = slices.Clone(d.recs)
	f.acked = slices.Clone(d.acked)
	if d.trace != nil {
		f.trace = slices.Clone(d.trace)
	}
	return f, nil
}
