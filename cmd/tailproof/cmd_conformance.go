package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tailproof/tailproof/simulations/conformance"
)

func init() {
	register(command{
		name:    "conformance",
		summary: "run generated crash scenarios through Qwen Code 0.24.4's own reconciler and tailproof, and report agreement",
		run:     runConformance,
	})
}

// runConformance exits 0 when reference mode agrees with the reference on
// every scenario (known bugs aside) and every default-mode difference is a
// deliberate one; 1 when not; 3 when node or the package is missing, so CI
// can tell "cannot run" from "disagrees".
func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		runs     = fs.Int("runs", 2000, "scenarios to generate (`N`)")
		seed     = fs.Uint64("seed", 1, "the run's seed (`S`); scenario i of seed S is always the same")
		asJSON   = fs.Bool("json", false, "print one JSON object")
		save     = fs.String("save", "", "write each failure and one scenario per known bug, minimized, under `DIR`")
		maxFails = fs.Int("max-failures", 20, "stop after `N` failures")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tailproof conformance [--runs N] [--seed S] [--json] [--save DIR]")
		fmt.Fprintln(stderr, "needs node and @qwen-code/qwen-code@0.24.4 (simulations/conformance/install.sh, or TAILPROOF_QWEN_PKG=<package dir>)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *runs <= 0 {
		fmt.Fprintln(stderr, "tailproof conformance: --runs must be positive")
		return 2
	}
	rep, err := conformance.Run(ctx, conformance.Config{Runs: *runs, Seed: *seed, SaveDir: *save, MaxFailures: *maxFails})
	if errors.Is(err, conformance.ErrUnavailable) {
		fmt.Fprintf(stderr, "tailproof conformance: %v\n", err)
		return 3
	}
	if err != nil {
		fmt.Fprintf(stderr, "tailproof conformance: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := rep.JSON(stdout); err != nil {
			fmt.Fprintf(stderr, "tailproof conformance: %v\n", err)
			return 1
		}
	} else {
		rep.Print(stdout)
		for _, d := range rep.Saved {
			fmt.Fprintf(stdout, "saved %s\n", d)
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}
