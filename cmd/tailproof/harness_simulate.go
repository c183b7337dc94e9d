package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/simulations/harness"
)

// harnessSimulateJSON is `simulate --harness codex|claude --json`
// (docs/schemas/harness-simulate.schema.json): the writer models' report
// (simulations/harness, ADR 0025) and what the run cost.
type harnessSimulateJSON struct {
	SchemaVersion int `json:"schemaVersion"`
	harness.Report
	Violated   int     `json:"violated"`
	Workers    int     `json:"workers"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

// runHarnessSimulate runs a harness's writer model, crashed after every one
// of its actions, and prints the per-class table. Any invariant broken is
// exit 1.
func runHarnessSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "simulate", func() error {
		fs := cli.NewFlagSet("simulate", "usage: tailproof simulate --harness codex|claude [--seed S] [--runs N] [--first K] [--workers W] [--json]")
		name := fs.String("harness", "", "the writer model: codex or claude")
		seed := fs.Uint64("seed", 1, "the run's `SEED`")
		runs := fs.Int("runs", 1000, "how many model runs (each crashed after every action)")
		first := fs.Int("first", 0, "the first run's `INDEX`")
		workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs in parallel (figures do not depend on it)")
		asJSON := fs.Bool("json", false, "print one JSON object (schemaVersion 1)")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		switch *name {
		case harness.Codex, harness.Claude:
		case harnessDSH:
			return cli.Usagef("--harness dsh: there is no dsh writer model here; dsh's crashes are simulated inside the Qwen simulation (`tailproof simulate` reports its dsh logs)")
		default:
			return cli.Usagef("--harness %q: want codex or claude (qwen is `tailproof simulate` without --harness)", *name)
		}
		for _, c := range []error{cli.AtLeast("--runs", *runs, 1), cli.AtLeast("--first", *first, 0), cli.AtLeast("--workers", *workers, 1)} {
			if c != nil {
				return c
			}
		}
		start, cpu0 := time.Now(), cpuTime()
		rep := harness.Run(ctx, harness.Config{Harness: *name, Seed: *seed, Runs: *runs, First: *first, Workers: *workers})
		out := harnessSimulateJSON{SchemaVersion: schemaVersion, Report: rep, Violated: rep.Total.Violations(), Workers: *workers,
			Seconds: time.Since(start).Seconds(), CPUSeconds: (cpuTime() - cpu0).Seconds()}
		if out.Violations == nil {
			out.Violations = []harness.Violation{}
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				return cli.WithCode(cli.Write, err)
			}
		} else {
			printHarnessSimulation(stdout, out)
		}
		if ctx.Err() != nil {
			return cli.WithCode(cli.Interrupted, ctx.Err())
		}
		if out.Violated > 0 {
			fmt.Fprintf(stderr, "tailproof simulate: %d invariant violation(s)\n", out.Violated)
			for i, v := range rep.Violations {
				if i == 10 {
					break
				}
				fmt.Fprintf(stderr, "  %s\n", v)
			}
			return cli.Exit(cli.CheckFailed)
		}
		return nil
	})
}

func printHarnessSimulation(w io.Writer, out harnessSimulateJSON) {
	fmt.Fprintf(w, "%s writer model, seed %d: %d runs, %d crashes in %.1fs (%.1f CPU-s, %d workers)\n",
		out.Harness, out.Seed, out.Runs, out.Total.Crashes, out.Seconds, out.CPUSeconds, out.Workers)
	fmt.Fprintf(w, "%-22s %8s %8s %9s %11s %8s %8s %6s %7s %7s %6s %9s\n", "class", "crashes", "turns", "completed",
		"interrupted", "lostComp", "unknown", "wrong", "lost", "resent", "stamps", "stampWrong")
	row := func(name string, t harness.Tally) {
		fmt.Fprintf(w, "%-22s %8d %8d %9d %11d %8d %8d %6d %7d %7d %6d %9d\n", name, t.Crashes, t.Turns, t.Completed,
			t.Interrupted, t.LostCompletion, t.Unknown, t.Wrong, t.PromptLost, t.InjectedResent, t.Stamps, t.StampWrong)
	}
	for _, c := range out.Classes {
		row(c.Class, c.Tally)
	}
	row("total", out.Total)
	fmt.Fprintf(w, "by crash kind:\n")
	for _, k := range out.Kinds {
		row("  "+k.Class, k.Tally)
	}
	t := out.Total
	fmt.Fprintf(w, "restamped %d, repair: cut %d, terminated %d, refused %d, verdicts changed %d\n",
		t.Restamped, t.RepairCut, t.RepairTerminated, t.RepairRefused, t.RepairChanged)
}
