package simulations

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	evturn "github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// qwenTurnTally scores machines/turnverdict on the Qwen model's transcripts
// alone (ADR 0041): the verdict on each crash's last turn against the
// prompt's truth, and against the ledger-based core on the same files.
type qwenTurnTally struct {
	Crashes int
	// Scored: the last turn names a prompt the model admitted (its
	// daemonPromptId, or the promptId of its turn_result). Unattributed: it
	// names none (a cron or notification turn, an identity-less writer, a
	// retry turn cut before its turn_result): no truth to score against.
	Scored, Unattributed, NoTurn int
	Completed, Interrupted       int // right verdicts
	LostCompletion               int // interrupted on a completed turn whose final record the crash lost (right)
	Unknown                      int
	Wrong                        int
	// Against the core: the core (or the ledger's own terminal) decided the
	// same prompt the other way. Agree counts both decided and equal.
	// LedgerOnly counts the ledger's terminal against a verdict the
	// transcript alone cannot help: on a turn whose finishing records a
	// power loss took (Qwen never fsyncs the transcript, so it shows a cut
	// turn). Not a failure. A turn_result that says otherwise than the
	// ledger's terminal is one: Qwen Code 0.24.4 writes both from the same
	// result of prompt() (the model once cancelled a hook-blocked turn
	// after its completed terminal; fixed 2026-12-02). The core's own
	// decisions on dangling prompts must never be contradicted.
	Contradict, Agree, LedgerOnly int
	Failures                      []string
}

func (t *qwenTurnTally) add(o qwenTurnTally) {
	t.Crashes += o.Crashes
	t.Scored += o.Scored
	t.Unattributed += o.Unattributed
	t.NoTurn += o.NoTurn
	t.Completed += o.Completed
	t.Interrupted += o.Interrupted
	t.LostCompletion += o.LostCompletion
	t.Unknown += o.Unknown
	t.Wrong += o.Wrong
	t.Contradict += o.Contradict
	t.Agree += o.Agree
	t.LedgerOnly += o.LedgerOnly
	if len(t.Failures) < 40 {
		t.Failures = append(t.Failures, o.Failures...)
	}
}

func (t qwenTurnTally) String() string {
	return fmt.Sprintf("crashes %d: last turn scored %d (completed %d, interrupted %d [lost completion %d], unknown %d, wrong %d), unattributed %d, no turn %d; against the ledger core: agree %d, contradict %d, the ledger's terminal over a transcript the crash cut %d",
		t.Crashes, t.Scored, t.Completed, t.Interrupted, t.LostCompletion, t.Unknown, t.Wrong, t.Unattributed, t.NoTurn, t.Agree, t.Contradict, t.LedgerOnly)
}

// scoreQwenTurns runs model runs [from, to) of seed, crashes each after every
// action, and scores turnverdict's verdict on the transcript's last turn.
func scoreQwenTurns(ctx context.Context, seed uint64, from, to int) qwenTurnTally {
	var tot qwenTurnTally
	base := 0
	for run := 0; run < to; run++ {
		n := runLen(seed, run)
		if run < from {
			base += n
			continue
		}
		src := modelRand(seed, run)
		_ = src.IntN(40) // runLen's draw
		prof, ver := runClass(run)
		d := NewDaemon(ctx, src, prof, ver)
		for j := 0; j < n; j++ {
			if len(d.violations) > 0 {
				break
			}
			d.act(d.choose())
			f, err := d.fork(scenarioRand(seed, base+j))
			if err != nil {
				continue
			}
			o := f.scoreLastTurn()
			for i := range o.Failures {
				o.Failures[i] = fmt.Sprintf("seed %d run %d action %d (%s/%s): %s", seed, run, j+1, prof.Name, ver.Name, o.Failures[i])
			}
			tot.add(o)
		}
		base += n
	}
	return tot
}

// scoreLastTurn crashes the fork and scores its transcript's last turn.
func (d *Daemon) scoreLastTurn() (t qwenTurnTally) {
	if err := d.crashAs(d.drawCrash(), true); err != nil {
		return t
	}
	t.Crashes = 1
	tb, _ := d.mem.ReadFile(d.tpath)
	lb, _ := d.mem.ReadFile(d.lpath)
	ds, err := turnverdict.DecideAll(evturn.Read(bytes.NewReader(tb), qwen.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil {
		t.Failures = append(t.Failures, "decide: "+err.Error())
		return t
	}
	if len(ds) == 0 {
		t.NoTurn = 1
		return t
	}
	last := ds[len(ds)-1]
	p := d.byID[last.Turn]
	if p == nil {
		t.Unattributed = 1
		return t
	}
	t.Scored = 1
	switch last.Verdict {
	case turnverdict.Completed:
		if p.truth == TruthCompleted && !p.lost {
			t.Completed = 1
		} else {
			t.Wrong = 1
		}
	case turnverdict.Interrupted:
		switch {
		case p.truth != TruthCompleted:
			t.Interrupted = 1
		case p.lost:
			t.Interrupted, t.LostCompletion = 1, 1
		default:
			t.Wrong = 1
		}
	default:
		t.Unknown = 1
	}
	if t.Wrong == 1 {
		t.Failures = append(t.Failures, fmt.Sprintf("wrong: turnverdict said %s of %s, truth %s\n%s", last.Verdict, p.id, describeTruth(p), last.Describe()))
	}
	// The ledger-based core on the same files: the ledger's own terminal
	// for the prompt, else the core's decision (reconcile, as the model's
	// restart does). Unknown against decided is fine; completed against
	// interrupted, cancelled or error is not.
	core, ok := ledgerTerminal(lb, p.id)
	fromLedger := ok
	if !ok {
		vs, _, err := d.recoverWhy(d.store, false)
		if err != nil {
			t.Failures = append(t.Failures, "reconcile: "+err.Error())
			return t
		}
		v, decided := vs[p.id]
		core, ok = coreVerdict(v), decided
	}
	if ok && last.Verdict != turnverdict.Unknown {
		switch {
		case core == last.Verdict:
			t.Agree = 1
		case fromLedger && p.lost && last.Verdict == turnverdict.Interrupted:
			t.LedgerOnly = 1
		default:
			t.Contradict = 1
			t.Failures = append(t.Failures, fmt.Sprintf("contradiction: turnverdict said %s of %s, the ledger core %s (truth %s)\n%s", last.Verdict, p.id, core, describeTruth(p), last.Describe()))
		}
	}
	return t
}

func coreVerdict(v tailproof.Verdict) turnverdict.Verdict {
	if v == tailproof.VerdictCompleted {
		return turnverdict.Completed
	}
	return turnverdict.Interrupted // interrupted, cancelled, error: the turn did not complete
}

// ledgerTerminal is the prompt's terminal in the ledger after its last
// admission, when it has one.
func ledgerTerminal(lb []byte, id string) (turnverdict.Verdict, bool) {
	var term *ledger.Record
	if _, _, err := ledger.ReadEach(bytes.NewReader(lb), false, func(r ledger.Record) {
		switch {
		case r.PromptID != id:
		case r.InFlight:
			term = nil
		default:
			term = &r
		}
	}); err != nil || term == nil {
		return "", false
	}
	if term.Terminal == ledger.Completed {
		return turnverdict.Completed, true
	}
	return turnverdict.Interrupted, true
}

// TestQwenTurnVerdictsAgainstTruth: on a fixed sample of the Qwen model's
// crashes (every class, every crash point), turnverdict's verdict on the
// last turn of the transcript alone is never wrong and never contradicts
// the ledger-based core. TAILPROOF_QWENTURN_RUNS=N scores N model runs
// (about 27 crashes each: 37000 runs are a million crashes):
//
//	TAILPROOF_QWENTURN_RUNS=37000 go test -v -timeout 3h -run TestQwenTurnVerdictsAgainstTruth ./simulations
func TestQwenTurnVerdictsAgainstTruth(t *testing.T) {
	runs := 3 * NumClasses() * 4
	if s := os.Getenv("TAILPROOF_QWENTURN_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("TAILPROOF_QWENTURN_RUNS=%q: want a positive count", s)
		}
		runs = n
	}
	seed := uint64(1)
	if s := os.Getenv("TAILPROOF_QWENTURN_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TAILPROOF_QWENTURN_SEED=%q: %v", s, err)
		}
		seed = n
	}
	tally := scoreQwenTurns(context.Background(), seed, 0, runs)
	t.Log(tally)
	for _, f := range tally.Failures {
		t.Error(f)
	}
	if tally.Wrong > 0 || tally.Contradict > 0 {
		t.Fatalf("%d wrong, %d contradictions", tally.Wrong, tally.Contradict)
	}
	if tally.Completed == 0 || tally.Interrupted == 0 {
		t.Fatalf("the sample decided nothing one way: %s", tally)
	}
}
