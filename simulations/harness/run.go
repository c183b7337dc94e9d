package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
)

// Config is a simulation: model runs First .. First+Runs-1 of Seed for one
// harness, each crashed after every one of its actions.
type Config struct {
	Harness string // Codex or Claude
	Seed    uint64
	Runs    int
	First   int
	Workers int // <= 0: 1
	// Keep bounds the violations kept (0: 20).
	Keep int
}

// ClassReport is one class's figures.
type ClassReport struct {
	Class string `json:"class"`
	Tally
}

// Report is a simulation's figures.
type Report struct {
	Harness    string        `json:"harness"`
	Seed       uint64        `json:"seed"`
	Runs       int           `json:"runs"`
	Total      Tally         `json:"total"`
	Classes    []ClassReport `json:"classes"`
	Kinds      []ClassReport `json:"kinds"`
	Violations []Violation   `json:"violations"`
}

// runResult is one model run's figures.
type runResult struct {
	class      int
	byKind     [3]Tally
	violations []Violation
}

// Run runs the simulation and adds up its report; ctx stops it early.
func Run(ctx context.Context, cfg Config) Report {
	profiles := profilesOf(cfg.Harness)
	rep := Report{Harness: cfg.Harness, Seed: cfg.Seed, Runs: cfg.Runs}
	classes := make([]Tally, len(profiles))
	var kinds [3]Tally
	keep := cfg.Keep
	if keep <= 0 {
		keep = 20
	}
	workers := max(cfg.Workers, 1)
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := int(next.Add(1)) - 1
				if n >= cfg.Runs {
					return
				}
				res := runOne(cfg.Harness, cfg.Seed, cfg.First+n, -1)
				mu.Lock()
				for k, t := range res.byKind {
					classes[res.class].add(t)
					kinds[k].add(t)
				}
				for _, v := range res.violations {
					if len(rep.Violations) < keep {
						rep.Violations = append(rep.Violations, v)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, p := range profiles {
		rep.Classes = append(rep.Classes, ClassReport{Class: p.name, Tally: classes[i]})
		rep.Total.add(classes[i])
	}
	for i, k := range kindNames {
		rep.Kinds = append(rep.Kinds, ClassReport{Class: k, Tally: kinds[i]})
	}
	return rep
}

// runOne builds model run n of seed and crashes it after every action (or
// only after action only, when only >= 0: a replay).
func runOne(h string, seed uint64, n, only int) runResult {
	profiles := profilesOf(h)
	res := runResult{class: n % len(profiles)}
	p := profiles[res.class]
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	hs := harnessOf(h)
	path := sessionPath(h)
	var baseFS *memory.FS
	var base disk
	s := build(h, p, r, func(s *session) {
		// The first writer dies: what it left, and what the restart did.
		kind := kindNames[r.IntN(len(kindNames))]
		base, _ = s.crashDisk(disk{}, 0, s.resumeAt-1, kind, r)
		baseFS = memory.NewFS()
		baseFS.WriteFile(path, base.b, 0o600)
		if s.reconciled {
			tailproof.ReconcileTurns(context.Background(), opener(baseFS, path), harnessfs.NewSidecar(baseFS, path),
				tailproof.TurnReconcileOptions{Harness: hs, Now: now - 1})
		}
		if s.repaired {
			harnessfs.Repair(context.Background(), baseFS, path, hs, harnessfs.RepairOptions{})
			b, _ := baseFS.ReadFile(path)
			base.b = b
			for len(base.placed) > 0 && base.placed[len(base.placed)-1].off >= len(b) {
				base.placed = base.placed[:len(base.placed)-1]
			}
		}
		s.base = base.b
	})
	for i := 0; i < len(s.acts); i++ {
		if only >= 0 && i != only {
			continue
		}
		cr := rand.New(rand.NewPCG(seed^uint64(n)<<20, uint64(i)+1))
		kind := kindNames[cr.IntN(len(kindNames))]
		var d disk
		eff := i
		m := memory.NewFS()
		if i >= s.resumeAt {
			d, eff = s.crashDisk(base, s.resumeAt, i, kind, cr)
			m = baseFS.Clone()
		} else {
			d, eff = s.crashDisk(disk{}, 0, i, kind, cr)
		}
		m.WriteFile(path, d.b, 0o600)
		c := &checker{s: s, h: hs, i: eff, kind: kind, d: d}
		c.t.Crashes = 1
		ds := decideAll(hs, d.b)
		c.verdicts(ds)
		c.sidecar(m, ds, cr)
		c.repair(m, ds)
		ki := 0
		for j, k := range kindNames {
			if k == kind {
				ki = j
			}
		}
		res.byKind[ki].add(c.t)
		for _, f := range c.fails {
			res.violations = append(res.violations, Violation{Harness: h, Seed: seed, Run: n, Crash: i, Kind: kind, Class: p.name, Detail: f})
		}
	}
	return res
}

// Describe prints the report as the per-class table the README carries.
func (rep Report) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: seed %d, %d model runs, %d crashes, %d turns decided\n", rep.Harness, rep.Seed, rep.Runs, rep.Total.Crashes, rep.Total.Turns)
	row := func(name string, t Tally) {
		fmt.Fprintf(&b, "%-22s %9d %9d %9d %9d %8d %9d %6d | %6d %6d | %8d %5d %5d | %6d %6d %5d\n", name, t.Crashes, t.Turns,
			t.Completed, t.Interrupted, t.LostCompletion, t.Unknown, t.Wrong, t.PromptLost, t.InjectedResent,
			t.Stamps, t.StampWrong, t.Restamped, t.RepairCut, t.RepairTerminated, t.RepairChanged)
	}
	fmt.Fprintf(&b, "%-22s %9s %9s %9s %9s %8s %9s %6s | %6s %6s | %8s %5s %5s | %6s %6s %5s\n", "class", "crashes", "turns",
		"completed", "interrupt", "lostcomp", "unknown", "WRONG", "lost", "inject", "stamps", "wrong", "again", "cut", "newline", "chg")
	for _, c := range rep.Classes {
		row(c.Class, c.Tally)
	}
	for _, c := range rep.Kinds {
		row("crash: "+c.Class, c.Tally)
	}
	row("total", rep.Total)
	for _, v := range rep.Violations {
		b.WriteString(v.String() + "\n")
	}
	return b.String()
}
