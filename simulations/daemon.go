package simulations

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tailproof/tailproof"
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
	// shape names a 0.24.4 turn other than a plain user turn (plan024).
	shape string
	// ended: the agent ended the turn without an answer and nothing on
	// disk shows it yet (a blocked hook, an empty continue).
	ended bool
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
	// 0.24.4 prompt turns (the identity version):
	stSnapshot   // a retry or continue turn's file_history_snapshot, no user record
	stTurnNo     // the agent's turn counter moves, nothing is written (a restored question or continue with nothing to do)
	stFinish     // the turn returns end_turn with no final answer: no write
	stCheckpoint // branch_checkpoint after an end_turn turn's one tool-free answer
	stPartial    // an aborted or failed stream's partial answer: no telemetry, no usage
)

type step struct {
	kind  stepKind
	calls []string
	state string // turn_result / terminal state
	// unstamped: a record of a stamped background turn written outside it
	// (the task-completed record; a daemon-delivered notification, persisted
	// on arrival).
	unstamped bool
	// code: an error's code in the turn_result ("" = none) and the ledger
	// terminal's (ledger; "" = none).
	code, ledger string
	// answered: the completed turn_result carries resultText; cancelAt:
	// the cancelled turn_result's cancelledAt.
	answered bool
	cancelAt int64
	// denied: the tool result of a call the permission step cancelled;
	// bare: a user record with no snapshot after it (a blocked turn);
	// unrecorded: a turn end that only the turn_result will show.
	denied, bare, unrecorded bool
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
	// start is the record before the turn's first write ("" = none): its
	// branch_checkpoint's startExclusiveRecordUuid; answer is the uuid of
	// its tool-free final answer.
	start, answer string
	// first is the index in d.recs of the turn's first record.
	first int
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
	// noUsage: the provider reports no token counts, so 0.24.4 writes no
	// usageMetadata even on completed calls (recordAssistantTurn writes it
	// only when the stream carried usage; the identity version, drawn per
	// run).
	noUsage bool
	// memo remembers the transcripts recent recoveries read (shared by the
	// timeline and its forks, one goroutine): a run's crash points mostly
	// recover byte-identical transcripts, under both rule sets.
	memo *tailproof.TranscriptMemo
	now  func() int64 // the clock, as Options.Now (made once)
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
	if ver.is024() {
		d.noUsage = src.IntN(8) == 0
	}
	return d
}

// is024 says the version writes what the published Qwen Code 0.24.4
// writes (the identity version).
func (v Version) is024() bool { return v.Identity && v.Stamps }

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
	if d.trace != nil {
		d.tracef("  transcript %s", bytes.TrimSpace(d.buf))
	}
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
