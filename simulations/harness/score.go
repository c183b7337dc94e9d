package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// Tally counts one class's outcomes.
type Tally struct {
	Crashes int `json:"crashes"`
	Turns   int `json:"turns"`
	// Completed / Interrupted are right verdicts; LostCompletion are
	// interrupted verdicts on turns that finished but whose finishing
	// records the crash lost (the durable history ends inside the turn:
	// scored right, as ADR 0008 scores Qwen's); Wrong is the target 0.
	Completed      int `json:"completed"`
	Interrupted    int `json:"interrupted"`
	LostCompletion int `json:"lostCompletion"`
	Unknown        int `json:"unknown"`
	Wrong          int `json:"wrong"`
	// Resume plans of interrupted turns: a person's durable prompt missing,
	// or anything listed but that turn's own prompts of a person.
	PromptLost     int `json:"promptLost"`
	InjectedResent int `json:"injectedResent"`
	// The sidecar: stamps appended, stamps that disagree with the truth,
	// appends by the run after the last (the target 0), reconcile runs a
	// crash cut short.
	Stamps           int `json:"stamps"`
	StampWrong       int `json:"stampWrong"`
	Restamped        int `json:"restamped"`
	ReconcileCrashed int `json:"reconcileCrashed"`
	// Repair: files cut, terminated, refused; verdicts a repair changed.
	RepairCut        int `json:"repairCut"`
	RepairTerminated int `json:"repairTerminated"`
	RepairRefused    int `json:"repairRefused"`
	RepairChanged    int `json:"repairChanged"`
}

func (t *Tally) add(o Tally) {
	t.Crashes += o.Crashes
	t.Turns += o.Turns
	t.Completed += o.Completed
	t.Interrupted += o.Interrupted
	t.LostCompletion += o.LostCompletion
	t.Unknown += o.Unknown
	t.Wrong += o.Wrong
	t.PromptLost += o.PromptLost
	t.InjectedResent += o.InjectedResent
	t.Stamps += o.Stamps
	t.StampWrong += o.StampWrong
	t.Restamped += o.Restamped
	t.ReconcileCrashed += o.ReconcileCrashed
	t.RepairCut += o.RepairCut
	t.RepairTerminated += o.RepairTerminated
	t.RepairRefused += o.RepairRefused
	t.RepairChanged += o.RepairChanged
}

// Violations counts every invariant failure in t.
func (t Tally) Violations() int {
	return t.Wrong + t.PromptLost + t.InjectedResent + t.StampWrong + t.Restamped + t.RepairChanged
}

// Violation is one invariant failure and what replays it.
type Violation struct {
	Harness string `json:"harness"`
	Seed    uint64 `json:"seed"`
	Run     int    `json:"run"`
	Crash   int    `json:"crash"`
	Kind    string `json:"kind"`
	Class   string `json:"class"`
	Detail  string `json:"detail"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s seed %d run %d crash %d (%s): %s — replay: go test ./simulations/harness -run TestReplay -args -harness=%s -seed=%d -run=%d -crash=%d",
		v.Harness, v.Class, v.Seed, v.Run, v.Crash, v.Kind, v.Detail, v.Harness, v.Seed, v.Run, v.Crash)
}

func sessionPath(h string) string {
	if h == Claude {
		return "/h/.claude/projects/-w/" + claudeSession + ".jsonl"
	}
	return "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-0199c0de-0000-7000-8000-000000000001.jsonl"
}

const now = 1796029200000

func opener(m *memory.FS, path string) tailproof.OpenSession {
	return func(context.Context) (io.ReadCloser, error) { return m.OpenFile(path, os.O_RDONLY, 0) }
}

func decideAll(h turn.Harness, b []byte) []turnverdict.Decision {
	ds, _ := turnverdict.DecideAll(turn.Read(bytes.NewReader(b), h), turnverdict.Options{WriterStopped: true})
	return ds
}

// checker scores one crash.
type checker struct {
	s     *session
	h     turn.Harness
	i     int // the crash came after action i
	kind  string
	d     disk
	t     Tally
	fails []string
}

func (c *checker) fail(format string, a ...any) { c.fails = append(c.fails, fmt.Sprintf(format, a...)) }

func (c *checker) finished(k int) bool {
	t := c.s.turns[k]
	return t.finishAt >= 0 && t.finishAt <= c.i && !(t.abortAt >= 0 && t.abortAt <= c.i)
}

// lostCompletion: turn k finished, but a crash cut or lost the record
// that says so. A record the model damaged on purpose that did reach the
// disk was not lost by the crash: an interrupted verdict there is wrong.
func (c *checker) lostCompletion(k int) bool {
	last := c.s.turns[k].lastLine
	return c.finished(k) && last >= 0 && !c.d.landed(last)
}

func (c *checker) turnOf(d turnverdict.Decision) int {
	a := c.d.owner(d.Start.Offset)
	if a < 0 {
		return -1
	}
	return c.s.acts[a].turn
}

// judge scores one verdict on model turn k; it returns false for a wrong one.
func (c *checker) judge(k int, v turnverdict.Verdict) bool {
	switch v {
	case turnverdict.Completed:
		if c.finished(k) {
			c.t.Completed++
			return true
		}
	case turnverdict.Interrupted:
		switch {
		case !c.finished(k):
			c.t.Interrupted++
			return true
		case c.lostCompletion(k):
			c.t.LostCompletion++
			return true
		}
	default:
		c.t.Unknown++
		return true
	}
	c.t.Wrong++
	return false
}

func (c *checker) verdicts(ds []turnverdict.Decision) {
	for _, d := range ds {
		c.t.Turns++
		k := c.turnOf(d)
		if k < 0 {
			c.fail("turn %s at %s maps to no model turn", d.Turn, d.Start)
			continue
		}
		if !c.judge(k, d.Verdict) {
			c.fail("wrong verdict: model turn %d (finished %v) decided %s\n%s", k, c.finished(k), d.Verdict, d.Describe())
		}
		if d.Verdict == turnverdict.Interrupted {
			c.resend(k, d)
		}
	}
}

// resend checks an interrupted turn's resume plan against what the person
// typed: every durable prompt of theirs, nothing else.
func (c *checker) resend(k int, d turnverdict.Decision) {
	listed := map[string]bool{}
	for _, p := range d.Resend {
		listed[p.Text] = true
		src, owner, ok := c.promptSource(p.Text)
		switch {
		case !ok || src != turn.SourceUser:
			c.t.InjectedResent++
			c.fail("turn %s resends %q, which is not a person's prompt", d.Turn, p.Text)
		case owner != k:
			c.t.InjectedResent++
			c.fail("turn %s (model turn %d) resends %q of model turn %d", d.Turn, k, p.Text, owner)
		}
	}
	for j, a := range c.s.acts {
		if a.turn == k && a.source == turn.SourceUser && j <= c.i && c.d.standalone(j) && !listed[a.prompt] {
			c.t.PromptLost++
			c.fail("turn %s: the person's prompt %q is durable but not in the resume plan\n%s", d.Turn, a.prompt, d.Describe())
		}
	}
}

func (c *checker) promptSource(text string) (src turn.Source, owner int, ok bool) {
	for _, a := range c.s.acts {
		if a.prompt == text {
			return a.source, a.turn, true
		}
	}
	return 0, -1, false
}

// keyTurn maps a sidecar key back to its model turn.
func (c *checker) keyTurn(key string) int {
	switch {
	case strings.HasPrefix(key, "line:"):
		n, err := strconv.Atoi(key[5:])
		if err != nil {
			return -1
		}
		off, line := 0, 1
		for ; line < n && off < len(c.d.b); off++ {
			if c.d.b[off] == '\n' {
				line++
			}
		}
		a := c.d.owner(int64(off))
		if a < 0 {
			return -1
		}
		return c.s.acts[a].turn
	case len(key) > 1 && (key[0] == 't' || key[0] == 'p'):
		n, err := strconv.Atoi(key[1:])
		if err != nil || n >= len(c.s.turns) {
			return -1
		}
		return n
	}
	return -1
}

// sidecar reconciles the crashed file through the real store on the strict
// memory filesystem — sometimes crashing the reconcile itself — and checks
// every stamp the sidecar holds, then that one more run appends nothing.
func (c *checker) sidecar(m *memory.FS, ds []turnverdict.Decision, r *rand.Rand) {
	path := sessionPath(c.s.harness)
	side := harnessfs.NewSidecar(m, path)
	o := tailproof.TurnReconcileOptions{Harness: c.h, Now: now}
	if r.IntN(4) == 0 {
		ops := []memory.Op{memory.OpWrite, memory.OpSync, memory.OpSyncDir, memory.OpOpen, memory.OpLock, memory.OpStat}
		m.Inject(memory.Fault{Op: ops[r.IntN(len(ops))], Nth: 1 + r.IntN(4), Crash: true})
	}
	_, err := tailproof.ReconcileTurns(context.Background(), opener(m, path), side, o)
	if m.Halted() {
		c.t.ReconcileCrashed++
		m.CrashKeeping(func(_ string, u []byte) int { return r.IntN(len(u) + 1) })
		m.ClearFaults()
		_, err = tailproof.ReconcileTurns(context.Background(), opener(m, path), side, o)
	}
	m.ClearFaults()
	if err != nil {
		c.fail("reconcile: %v", err)
		return
	}
	again, err := tailproof.ReconcileTurns(context.Background(), opener(m, path), side, o)
	if err != nil || len(again.Appended) > 0 {
		c.t.Restamped += len(again.Appended)
		c.fail("a reconcile after the last appended %d (%v)", len(again.Appended), err)
	}
	b, _ := m.ReadFile(side.Path())
	recs, _, _ := ledger.Read(bytes.NewReader(b), false)
	want := map[string]ledger.Record{}
	for _, d := range ds {
		if rec, ok := tailproof.TurnTerminal(d, now); ok {
			if _, dup := want[d.Turn]; !dup {
				want[d.Turn] = rec
			}
		}
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		if !rec.IsTerminal() {
			continue
		}
		c.t.Stamps++
		if seen[rec.PromptID] {
			c.t.StampWrong++
			c.fail("turn %s stamped twice", rec.PromptID)
		}
		seen[rec.PromptID] = true
		k := c.keyTurn(rec.PromptID)
		if k < 0 {
			c.t.StampWrong++
			c.fail("stamp %s names no model turn", rec.Describe())
			continue
		}
		v := turnverdict.Interrupted
		if rec.Terminal == ledger.Completed {
			v = turnverdict.Completed
		}
		var probe checker = *c
		probe.t = Tally{}
		if !probe.judge(k, v) {
			c.t.StampWrong++
			c.fail("wrong stamp %s on model turn %d (finished %v)", rec.Describe(), k, c.finished(k))
		}
		if w, ok := want[rec.PromptID]; ok && rec.At == now && w.Describe() != rec.Describe() {
			c.t.StampWrong++
			c.fail("stamp %s, but the decision says %s", rec.Describe(), w.Describe())
		}
	}
}

// repair runs the one command that writes the harness's file, and checks
// that every verdict is what it was.
func (c *checker) repair(m *memory.FS, ds []turnverdict.Decision) {
	path := sessionPath(c.s.harness)
	res, err := harnessfs.Repair(context.Background(), m, path, c.h, harnessfs.RepairOptions{})
	switch {
	case err != nil:
		c.t.RepairRefused++
		return
	case res.Action == harnessfs.RepairCut:
		c.t.RepairCut++
	case res.Action == harnessfs.RepairTerminated:
		c.t.RepairTerminated++
	default:
		return
	}
	b, _ := m.ReadFile(path)
	after := decideAll(c.h, b)
	if verdictList(after) != verdictList(ds) {
		c.t.RepairChanged++
		c.fail("repair (%s) changed the verdicts:\n%s\n%s", res.Action, verdictList(ds), verdictList(after))
	}
}

func verdictList(ds []turnverdict.Decision) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Turn + "=" + string(d.Verdict) + " ")
	}
	return b.String()
}
