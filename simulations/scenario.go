package simulations

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/tailproof/tailproof"
)

// Result is one scenario's score.
type Result struct {
	Seed  uint64
	Index int
	Class string
	// ClassIndex indexes Classes().
	ClassIndex int
	Tailproof  Tally
	Reference  Tally
	// Violations are invariant failures other than wrong terminals
	// (durability, idempotence, store and model errors, dsh balance): each
	// one fails the run.
	Violations []string
	// WrongTerminals are tailproof's wrong terminals, at the final crash or
	// at a restart that reconciled: each one fails the run.
	WrongTerminals []string
	// ReferenceWrong describes the baseline's wrong terminals (statistics).
	ReferenceWrong []string
	// RestartDecided / RestartWrong count tailproof's reconciliations at
	// restarts before the final crash (wrong ones are also violations).
	RestartDecided int
	// Continues counts continuations the admission machine admitted (each
	// checked against the truth: nothing live); WedgedWindow those admitted
	// while a deadline-released agent was still writing — the runtime had
	// released ownership, so admission could not know (a hazard, not a
	// violation).
	Continues, WedgedWindow int
	DSH                     DSHResult
	// What the final crash left, so tests can show the model reaches the
	// cases it claims: a torn last line in either file.
	TornLedger, TornTranscript bool
	// LostDangling counts dangling prompts whose completed turn lost its
	// final record in a crash.
	LostDangling int
	Trace        []string
	// AmbiguityKeys holds each dangling prompt's evidence key, when the run
	// measures ambiguity (Config.Ambiguity).
	AmbiguityKeys []DanglingKey
	// Digest is this scenario's share of the run's Digest.
	Digest ScenarioDigest
	// RestartDigest is the timeline's restart hash at the fork.
	RestartDigest uint64
}

// Profiles are the scenario classes' action mixes.
func Profiles() []Profile {
	base := func(name string) Profile {
		p := Profile{Name: name, MaxRestarts: 0, NoIDPct: 15, ErrPct: 8}
		p.W[ActAdmit] = 1
		p.W[ActDispatch] = 2
		p.W[ActStep] = 12
		p.W[ActWriteback] = 2
		return p
	}
	var ps []Profile
	plain := base("plain")
	ps = append(ps, plain)

	q := base("queue")
	q.W[ActAdmit], q.W[ActCancel] = 3, 2
	ps = append(ps, q)

	dl := base("deadline")
	dl.W[ActDeadline], dl.W[ActWedged], dl.W[ActAdmit] = 2, 6, 2
	ps = append(ps, dl)

	bg := base("background")
	bg.W[ActBackground], bg.W[ActTitle] = 6, 1
	ps = append(ps, bg)

	cp := base("compression")
	cp.W[ActCompress] = 2
	ps = append(ps, cp)

	sl := base("slash")
	sl.SlashPct = 50
	ps = append(ps, sl)

	ck := base("clock")
	ck.EqualPct, ck.BackPct = 25, 10
	ps = append(ps, ck)

	rs := base("restore")
	rs.W[ActRestart], rs.MaxRestarts, rs.ReconcileOnRestartPct = 2, 3, 40
	ps = append(ps, rs)

	ar := base("archive")
	ar.W[ActArchive] = 2
	ps = append(ps, ar)

	pw := base("power")
	pw.PowerPct, pw.TornLedgerPct = 70, 30
	pw.W[ActWriteback] = 4
	ps = append(ps, pw)

	mx := base("mixed")
	mx.W[ActCancel], mx.W[ActDeadline], mx.W[ActWedged], mx.W[ActBackground] = 2, 1, 3, 3
	mx.W[ActCompress], mx.W[ActTitle], mx.W[ActArchive], mx.W[ActRestart] = 1, 1, 1, 1
	mx.EqualPct, mx.BackPct, mx.PowerPct, mx.TornLedgerPct = 15, 5, 30, 20
	mx.MaxRestarts, mx.ReconcileOnRestartPct, mx.SlashPct = 3, 40, 15
	ps = append(ps, mx)
	return ps
}

var profiles = Profiles()

// Classes lists every scenario class in run order.
func Classes() []string {
	var cs []string
	for _, v := range Versions {
		for _, p := range profiles {
			cs = append(cs, p.Name+"/"+v.Name)
		}
	}
	return cs
}

// NumClasses is how many scenario classes there are; scenario k has class
// Classes()[k % NumClasses()].
func NumClasses() int { return len(profiles) * len(Versions) }

// scenarioRand is scenario index's own generator: a run is replayable one
// scenario at a time.
func scenarioRand(seed uint64, index int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(index)^0x9e3779b97f4a7c15))
}

// modelRand drives model run run of seed (its actions and crash points);
// dshRand its dsh log. Distinct streams from every scenario's own.
func modelRand(seed uint64, run int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, uint64(run)^0xc2b2ae3d27d4eb4f))
}

func dshRand(seed uint64, run int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x94d049bb133111eb, uint64(run)^0xbf58476d1ce4e5b9))
}

// A model run is one daemon's timeline of actions (restarts included), and
// it is crashed after every one of them: after action i the daemon is
// forked — filesystem with durable and page-cache bytes, store, prompts and
// their truth, running turns — and only the fork crashes (possibly inside
// one more ledger append), is recovered under both rule sets and is scored,
// while the timeline goes on as if nothing happened. A run of n actions is n
// crash scenarios, numbered consecutively across a seed's runs. Forking
// instead of re-running the model per crash is what lets a run cover a
// million crashes quickly; each scenario's crash, recovery and invariants
// are whole.

// runLen is how many actions (so crash scenarios) model run run of seed
// has: the first draw of the run's own stream, so it is known without
// running the model.
func runLen(seed uint64, run int) int { return modelRand(seed, run).IntN(40) + 8 }

// locate returns the model run holding scenario index of seed and the run's
// first scenario index.
func locate(seed uint64, index int) (run, base int) {
	for {
		n := runLen(seed, run)
		if index < base+n {
			return run, base
		}
		base += n
		run++
	}
}

func classOfRun(run int) int { return run % NumClasses() }

func runClass(run int) (*Profile, Version) {
	return &profiles[run%len(profiles)], Versions[(run/len(profiles))%len(Versions)]
}

// RunScenario runs scenario index of seed and scores it: its model run up to
// its crash point, then the crash and both recoveries. With trace, the
// Result carries the timeline's trace up to the fork and the fork's own.
func RunScenario(ctx context.Context, seed uint64, index int, trace bool) Result {
	var out Result
	run, base := locate(seed, index)
	j := index - base
	runModel(ctx, seed, run, base, j, j+1, trace, func(r Result) { out = r })
	return out
}

// timelineMark is how much of the timeline's own findings (restart
// reconciliations, admission probes, violations) earlier crash points
// already reported: each is reported once, by the next crash point.
type timelineMark struct{ violations, wrong, decided, continues, wedged int }

func (m *timelineMark) take(d *Daemon, res *Result) {
	res.Violations = append(res.Violations, d.violations[m.violations:]...)
	res.WrongTerminals = append(res.WrongTerminals, d.wrong[m.wrong:]...)
	res.RestartDecided += d.restartRec.decided - m.decided
	res.Continues += d.continues - m.continues
	res.WedgedWindow += d.wedgedWindow - m.wedged
	m.skip(d)
}

func (m *timelineMark) skip(d *Daemon) {
	*m = timelineMark{len(d.violations), len(d.wrong), d.restartRec.decided, d.continues, d.wedgedWindow}
}

// runModel drives model run run of seed, whose first scenario is base, and
// emits the scored scenarios of its crash points from..to-1 (crash point j
// follows action j+1; earlier ones are passed over, not crashed). The run's
// dsh log goes with crash point 0.
func runModel(ctx context.Context, seed uint64, run, base, from, to int, trace bool, emit func(Result)) {
	runModelCollect(ctx, seed, run, base, from, to, trace, false, emit)
}

// runModelCollect is runModel; collect adds each dangling prompt's evidence
// key to its Result (Config.Ambiguity).
func runModelCollect(ctx context.Context, seed uint64, run, base, from, to int, trace, collect bool, emit func(Result)) {
	src := modelRand(seed, run)
	n := src.IntN(40) + 8 // runLen's draw
	to = min(to, n)
	prof, ver := runClass(run)
	class := prof.Name + "/" + ver.Name
	d := NewDaemon(ctx, src, prof, ver)
	if trace {
		d.trace = []string{}
	}
	memo := memos.Get().(*tailproof.TranscriptMemo)
	defer memos.Put(memo)
	d.memo = memo // the forks share it
	var mark timelineMark
	for j := 0; j < to; j++ {
		if len(d.violations) == 0 {
			d.act(d.choose())
		}
		if j < from {
			mark.skip(d)
			continue
		}
		k := base + j
		res := Result{Seed: seed, Index: k, Class: class, ClassIndex: classOfRun(run)}
		f, err := d.fork(scenarioRand(seed, k))
		if f != nil {
			f.collect = collect
		}
		if err != nil {
			res.Violations = append(res.Violations, err.Error())
		} else {
			f.tracef("-- crash after action %d of %d (scenario %d)", j+1, n, k)
			res.RestartDigest = d.restartRec.digest
			f.finish(&res)
			if trace {
				res.Trace = f.trace
			}
		}
		mark.take(d, &res)
		if j == 0 {
			res.DSH = RunDSH(ctx, dshRand(seed, run), prof)
		}
		emit(res)
	}
}

// legacyScenario is the single-crash scenario of the first simulator: one
// model run per scenario, crashed at its end. The known holes were found
// and recorded in that numbering, so they replay through it.
func legacyScenario(ctx context.Context, seed uint64, index int, trace bool) Result {
	prof := &profiles[index%len(profiles)]
	ver := Versions[(index/len(profiles))%len(Versions)]
	return runWith(ctx, seed, index, prof, ver, trace)
}

func runWith(ctx context.Context, seed uint64, index int, prof *Profile, ver Version, trace bool) Result {
	src := scenarioRand(seed, index)
	res := Result{Seed: seed, Index: index, Class: prof.Name + "/" + ver.Name}
	d := NewDaemon(ctx, src, prof, ver)
	if trace {
		d.trace = []string{}
	}
	d.drive(src.IntN(40) + 8)
	res.RestartDigest = d.restartRec.digest
	d.finish(&res)
	res.DSH = RunDSH(ctx, src, prof)
	if trace {
		res.Trace = d.trace
	}
	return res
}

// chooser draws actions by weight.
func (d *Daemon) choose() Action {
	total := 0
	for _, w := range d.prof.W {
		total += w
	}
	r := d.src.IntN(total)
	for a, w := range d.prof.W {
		if r < w {
			return Action(a)
		}
		r -= w
	}
	return ActStep
}

// Do performs one action. A crash the model armed comes back as an error
// satisfying isCrash; any other error is a failure.
func (d *Daemon) Do(a Action) error {
	switch a {
	case ActAdmit:
		return d.Admit()
	case ActDispatch:
		return d.Dispatch()
	case ActStep:
		if d.running == nil {
			return d.Dispatch()
		}
		return d.Step()
	case ActCancel:
		return d.Cancel()
	case ActDeadline:
		return d.Deadline()
	case ActWedged:
		return d.Wedged()
	case ActBackground:
		return d.Background()
	case ActCompress:
		return d.Compress()
	case ActTitle:
		return d.Title()
	case ActWriteback:
		return d.Writeback()
	case ActArchive:
		if d.armed {
			return nil
		}
		return d.ArchiveCycle()
	case ActRestart:
		if d.crashes >= d.prof.MaxRestarts {
			return nil
		}
		return d.Restart(CrashKill)
	}
	return nil
}

// drive runs n actions, restarting after every crash an action hits.
func (d *Daemon) drive(n int) {
	for i := 0; i < n && len(d.violations) == 0; i++ {
		d.act(d.choose())
	}
}

// act performs a, restarting the process when a crashes it; failures are
// recorded as violations.
func (d *Daemon) act(a Action) {
	if len(d.violations) > 0 {
		return
	}
	d.tracef("> %s", a)
	err := d.Do(a)
	if err == nil {
		d.probeAdmission()
		return
	}
	if !isCrash(err) {
		d.violations = append(d.violations, fmt.Sprintf("action %s: %v", a, err))
		return
	}
	if err := d.Restart(d.drawCrash()); err != nil {
		d.violations = append(d.violations, err.Error())
		return
	}
	d.probeAdmission()
}

func (d *Daemon) drawCrash() CrashKind {
	if d.pct(d.prof.PowerPct) {
		return CrashPower
	}
	return CrashKill
}

// Restart crashes the process and restarts it, reconciling with tailproof's
// rules or skipping reconciliation (a restore that bypassed it).
func (d *Daemon) Restart(kind CrashKind) error {
	d.armed = false
	if err := d.crash(kind); err != nil {
		return err
	}
	if !d.pct(d.prof.ReconcileOnRestartPct) {
		d.tracef("restart without reconciliation")
		return nil
	}
	verdicts, err := d.recover(d.store, false)
	if err != nil {
		return err
	}
	d.restartRec.digest = restartDigest(d.restartRec.digest, verdicts)
	for id, v := range verdicts {
		p := d.byID[id]
		if p == nil {
			return fmt.Errorf("tailproof decided %s, a prompt the model never admitted", id)
		}
		d.restartRec.decided++
		if o, _ := Judge(v, p.truth, p.lost); o == Wrong {
			d.restartRec.wrong++
			d.wrong = append(d.wrong, fmt.Sprintf("wrong terminal at a restart: tailproof stamped %s %s, truth %s", id, v, describeTruth(p)))
		}
	}
	return nil
}
