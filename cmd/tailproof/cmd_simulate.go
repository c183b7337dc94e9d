package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/simulations"
)

func init() {
	register(command{
		name:    "simulate",
		summary: "run seeded crash scenarios of a Qwen-style daemon and score tailproof's verdicts (and the reference's) against ground truth",
		run:     runSimulate,
	})
}

type simulateOutput struct {
	simulations.Report
	Workers    int     `json:"workers"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// PerCPUSecond is scenarios per second of CPU this process used: the
	// per-core figure that stays honest on a machine shared with others.
	PerCPUSecond     float64 `json:"perCpuSecond"`
	PerSecond        float64 `json:"perSecond"`
	PerSecondPerCore float64 `json:"perSecondPerCore"`
	// Trace is --trace's scenario trace (with --json).
	Trace []string `json:"trace,omitempty"`
}

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, rest, done := routeHarness(ctx, args, stdout, stderr, runHarnessSimulate); done {
		return code
	} else {
		args = rest
	}
	return cli.Main(stderr, "simulate", func() error { return simulate(ctx, args, stdout, stderr) })
}

func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("simulate", "usage: tailproof simulate [--seed S] [--runs N] [--scenario K] [--json] [--reference] [--trace] [--workers W] [--ambiguity] [--digest]")
	seed := fs.Uint64("seed", 1, "the run's `SEED`; every scenario is derived from it and its index")
	runs := fs.Int("runs", 10000, "how many scenarios to run")
	first := fs.Int("scenario", 0, "the first scenario's `INDEX` (with --runs 1: replay that one scenario)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	digest := fs.Bool("digest", false, "print only the digest of every verdict (a hash per rule set and per-class verdict counts), to show a change moved none")
	reference := fs.Bool("reference", false, "also list the reference rules' wrong terminals (the baseline's holes)")
	trace := fs.Bool("trace", false, "with --runs 1: print the scenario's trace (actions, writes, crash, verdicts)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "scenarios run in parallel (figures do not depend on it)")
	ambiguity := fs.Bool("ambiguity", false, "also count, per class, dangling prompts whose evidence (identifiers renamed, timestamps ranked) was seen with the other truth: no rule reading ids by equality and clocks by order can decide them")
	if err := fs.Parse(args, stdout); err != nil {
		return err
	}
	for _, c := range []error{cli.AtLeast("--runs", *runs, 1), cli.AtLeast("--scenario", *first, 0), cli.AtLeast("--workers", *workers, 1)} {
		if c != nil {
			return c
		}
	}
	var traced []string
	if *trace {
		if *runs != 1 {
			return cli.Usagef("--trace needs --runs 1")
		}
		r := simulations.RunScenario(ctx, *seed, *first, true)
		traced = append(traced, fmt.Sprintf("scenario %d of seed %d, class %s", *first, *seed, r.Class))
		traced = append(traced, r.Trace...)
		for _, v := range append(append(r.WrongTerminals, r.Violations...), r.DSH.Violations...) {
			traced = append(traced, fmt.Sprint("VIOLATION: ", v))
		}
		for _, v := range r.ReferenceWrong {
			traced = append(traced, fmt.Sprint("baseline: ", v))
		}
		if !*asJSON { // under --json the trace is the document's "trace"
			for _, l := range traced {
				fmt.Fprintln(stdout, l)
			}
		}
	}

	var bar *cli.Progress
	if !*asJSON {
		bar = cli.NewProgress(stderr, "scenarios", *runs)
	}
	cfg := simulations.Config{Seed: *seed, Runs: *runs, First: *first, Workers: *workers, Ambiguity: *ambiguity}
	if bar != nil {
		cfg.Progress = func(done int) { bar.Set(done, "") }
	}
	// A batch of CPU-bound scenarios: collect less often (ADR 0043).
	setGCBound(&batchBound)
	defer setGCBound(&interactiveBound)
	start, cpu0 := time.Now(), cpuTime()
	rep := simulations.Run(ctx, cfg)
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	bar.Done()
	out := simulateOutput{Report: rep, Workers: *workers, Seconds: elapsed.Seconds(), CPUSeconds: cpu.Seconds(), Trace: traced}
	if cpu > 0 {
		out.PerCPUSecond = float64(rep.Scenarios) / cpu.Seconds()
	}
	if s := elapsed.Seconds(); s > 0 {
		out.PerSecond = float64(rep.Scenarios) / s
		out.PerSecondPerCore = out.PerSecond / float64(min(*workers, runtime.GOMAXPROCS(0)))
	}
	if *digest {
		rep.Digest.Write(stdout, *seed, rep.Scenarios)
	} else if *asJSON {
		if err := cli.WriteDoc(stdout, out, true); err != nil {
			return err
		}
	} else {
		printSimulation(stdout, out, *reference)
		if len(rep.Ambiguity) > 0 {
			fmt.Fprintln(stdout, "\nindistinguishable evidence (ids renamed, clocks ranked; seen with both truths):")
			fmt.Fprintf(stdout, "  %-24s %10s %18s %18s\n", "class", "dangling", "reference correct", "tailproof correct")
			for _, a := range rep.Ambiguity {
				if a.Ambiguous > 0 {
					fmt.Fprintf(stdout, "  %-24s %10d %18d %18d\n", a.Class, a.Ambiguous, a.ReferenceCorrect, a.TailproofCorrect)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return cli.WithCode(cli.Interrupted, errors.New("interrupted"))
	}
	if len(rep.Violations) > 0 {
		fmt.Fprintf(stderr, "tailproof simulate: %d invariant violation(s); replay the first with:\n", len(rep.Violations))
		v := rep.Violations[0]
		fmt.Fprintf(stderr, "  tailproof simulate --seed %d --runs 1 --scenario %d --trace\n", v.Seed, v.Scenario)
		for i, v := range rep.Violations {
			if i == 10 {
				fmt.Fprintf(stderr, "  ... and %d more\n", len(rep.Violations)-10)
				break
			}
			fmt.Fprintf(stderr, "  seed %d scenario %d (%s): %s\n", v.Seed, v.Scenario, v.Class, v.Detail)
		}
		return cli.Exit(cli.CheckFailed)
	}
	return nil
}

func printSimulation(w io.Writer, out simulateOutput, reference bool) {
	rep := out.Report
	fmt.Fprintf(w, "seed %d: %d scenarios in %.1fs — %.0f scenarios/s, %.0f per core (%d workers), %.0f per CPU-second\n",
		rep.Seed, rep.Scenarios, out.Seconds, out.PerSecond, out.PerSecondPerCore, out.Workers, out.PerCPUSecond)
	fmt.Fprintf(w, "wrong terminals: tailproof %d, reference %d\n", rep.Wrong, rep.ReferenceWrongCount)
	fmt.Fprintf(w, "dsh logs: %d crashed and loaded balanced (%d needed repair)\n", rep.DSHLogs, rep.DSHRepaired)
	fmt.Fprintf(w, "continuations: %d admitted, each checked against the truth (nothing live); %d beside a deadline-released agent still writing\n\n",
		rep.Continues, rep.WedgedWindow)
	fmt.Fprintf(w, "%-24s %6s %8s | %-26s | %-26s\n", "class", "scen", "dangling", "tailproof corr/unkn/wrong", "reference corr/unkn/wrong")
	row := func(name string, n int, tp, rf simulations.Tally) {
		mark := ""
		if tp.Correct < rf.Correct {
			mark = "  < reference"
		}
		fmt.Fprintf(w, "%-24s %6d %8d | %7d %8d %8d  | %7d %8d %8d %s\n",
			name, n, tp.Dangling, tp.Correct, tp.Unknown, tp.Wrong, rf.Correct, rf.Unknown, rf.Wrong, mark)
	}
	for _, c := range rep.Classes {
		row(c.Class, c.Scenarios, c.Tailproof, c.Reference)
	}
	row("total", rep.Scenarios, rep.Tailproof, rep.Reference)
	fmt.Fprintf(w, "\ninterrupted stamped on a completed turn whose final record the crash lost (scored correct): tailproof %d, reference %d\n",
		rep.Tailproof.LostCompletion, rep.Reference.LostCompletion)
	fmt.Fprintf(w, "unknown, by the guard that stopped recovery:\n  tailproof: %s\n  reference: %s\n",
		byGuard(rep.Tailproof.UnknownBy), byGuard(rep.Reference.UnknownBy))
	if reference && len(rep.ReferenceWrong) > 0 {
		fmt.Fprintf(w, "\nreference wrong terminals (first %d):\n", len(rep.ReferenceWrong))
		for _, v := range rep.ReferenceWrong {
			fmt.Fprintf(w, "  seed %d scenario %d (%s): %s\n", v.Seed, v.Scenario, v.Class, v.Detail)
		}
	}
}

func byGuard(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var xs []kv
	for k, v := range m {
		xs = append(xs, kv{k, v})
	}
	// Largest first; ties by name so the line is stable.
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if xs[j].v > xs[i].v || (xs[j].v == xs[i].v && xs[j].k < xs[i].k) {
				xs[i], xs[j] = xs[j], xs[i]
			}
		}
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%s %d", x.k, x.v)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// cpuTime is the process's user+system CPU time so far (0 where the
// platform does not report it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
