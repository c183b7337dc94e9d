package simulations

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Config is a simulation run: scenarios First .. First+Runs-1 of Seed.
type Config struct {
	Seed    uint64
	Runs    int
	First   int
	Workers int // <= 0: 1
	// Progress, when set, is called with the number of scenarios done (from
	// any worker goroutine; calls may be concurrent).
	Progress func(done int)
	// Keep bounds how many baseline wrong-terminal examples are kept
	// (0: 20).
	Keep int
	// Ambiguity also measures, per class, the dangling prompts whose
	// evidence is indistinguishable (see Ambiguity) from a crash with the
	// other truth. It keeps a key per dangling prompt: memory grows with Runs.
	Ambiguity bool
}

// Violation is one invariant failure, with what replays it.
type Violation struct {
	Seed     uint64 `json:"seed"`
	Scenario int    `json:"scenario"`
	Class    string `json:"class"`
	Detail   string `json:"detail"`
}

// ClassReport is one scenario class's figures, tailproof next to the
// baseline, over identical scenarios.
type ClassReport struct {
	Class     string `json:"class"`
	Scenarios int    `json:"scenarios"`
	Tailproof Tally  `json:"tailproof"`
	Reference Tally  `json:"reference"`
}

// Report is a run's figures.
type Report struct {
	Seed      uint64 `json:"seed"`
	Scenarios int    `json:"scenarios"`
	// Wrong is tailproof's wrong terminals (the target is 0);
	// ReferenceWrongCount the baseline's.
	Wrong               int           `json:"wrong"`
	ReferenceWrongCount int           `json:"referenceWrong"`
	Tailproof           Tally         `json:"tailproof"`
	Reference           Tally         `json:"reference"`
	Classes             []ClassReport `json:"classes"`
	Violations          []Violation   `json:"violations"`
	ReferenceWrong      []Violation   `json:"referenceWrongExamples"`
	RestartDecided      int           `json:"restartDecided"`
	Continues           int           `json:"continuationsAdmitted"`
	WedgedWindow        int           `json:"continuationsBesideWedgedAgent"`
	DSHLogs             int           `json:"dshLogs"`
	DSHRepaired         int           `json:"dshRepaired"`
	Ambiguity           []Ambiguity   `json:"ambiguity,omitempty"`
	// Digest fingerprints every verdict of the run (see Digest).
	Digest Digest `json:"digest"`
}

// Run runs cfg's scenarios and adds up their scores. The figures depend only
// on Seed, First and Runs, never on Workers.
func Run(ctx context.Context, cfg Config) Report {
	workers := max(cfg.Workers, 1)
	keep := cfg.Keep
	if keep <= 0 {
		keep = 20
	}
	classes := Classes()
	rep := Report{Seed: cfg.Seed}
	byClass := make([]ClassReport, len(classes))
	for i, c := range classes {
		byClass[i].Class = c
	}
	verdicts := make([]ClassVerdicts, len(classes))
	for i, c := range classes {
		verdicts[i].Class = c
	}
	var amb ambiguityTally
	var (
		mu   sync.Mutex
		next atomic.Int64
		done atomic.Int64
		wg   sync.WaitGroup
	)
	// Workers take whole model runs; a run emits its crash points that fall
	// in [First, First+Runs). Runs have different lengths, so their first
	// scenario indices are laid out before the workers start.
	first, end := cfg.First, cfg.First+cfg.Runs
	type span struct{ run, base int }
	var spans []span
	if cfg.Runs > 0 {
		run, base := locate(cfg.Seed, first)
		for ; base < end; run++ {
			spans = append(spans, span{run, base})
			base += runLen(cfg.Seed, run)
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(spans) {
					return
				}
				sp := spans[i]
				runModelCollect(ctx, cfg.Seed, sp.run, sp.base, max(first-sp.base, 0), end-sp.base, false, cfg.Ambiguity, func(r Result) {
					mu.Lock()
					if cfg.Ambiguity {
						amb.add(r.ClassIndex, r.AmbiguityKeys)
					}
					rep.add(r, byClass, keep)
					rep.digestAdd(r, verdicts)
					mu.Unlock()
					if cfg.Progress != nil {
						cfg.Progress(int(done.Add(1)))
					}
				})
			}
		}()
	}
	wg.Wait()
	if cfg.Ambiguity {
		rep.Ambiguity = amb.report(classes)
	}
	for i, c := range byClass {
		if c.Scenarios > 0 {
			rep.Classes = append(rep.Classes, c)
			rep.Digest.Classes = append(rep.Digest.Classes, verdicts[i])
		}
	}
	sortViolations(rep.Violations)
	sortViolations(rep.ReferenceWrong)
	if len(rep.ReferenceWrong) > keep {
		rep.ReferenceWrong = rep.ReferenceWrong[:keep]
	}
	return rep
}

func sortViolations(v []Violation) {
	slices.SortStableFunc(v, func(a, b Violation) int { return a.Scenario - b.Scenario })
}

func (rep *Report) add(r Result, byClass []ClassReport, keep int) {
	rep.Scenarios++
	c := &byClass[r.ClassIndex]
	c.Scenarios++
	c.Tailproof.add(r.Tailproof)
	c.Reference.add(r.Reference)
	rep.Tailproof.add(r.Tailproof)
	rep.Reference.add(r.Reference)
	rep.Wrong += len(r.WrongTerminals) // the final crash's and the restarts'
	rep.ReferenceWrongCount += r.Reference.Wrong
	rep.RestartDecided += r.RestartDecided
	rep.Continues += r.Continues
	rep.WedgedWindow += r.WedgedWindow
	if r.DSH.Ran {
		rep.DSHLogs++
	}
	if r.DSH.Repaired {
		rep.DSHRepaired++
	}
	for _, v := range append(append(r.WrongTerminals, r.Violations...), r.DSH.Violations...) {
		rep.Violations = append(rep.Violations, Violation{Seed: r.Seed, Scenario: r.Index, Class: r.Class, Detail: v})
	}
	for _, v := range r.ReferenceWrong {
		// Keep the lowest-indexed examples whatever the worker order.
		rep.ReferenceWrong = append(rep.ReferenceWrong, Violation{Seed: r.Seed, Scenario: r.Index, Class: r.Class, Detail: v})
	}
	if len(rep.ReferenceWrong) > 4*keep {
		sortViolations(rep.ReferenceWrong)
		rep.ReferenceWrong = rep.ReferenceWrong[:keep]
	}
}
