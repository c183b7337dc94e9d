package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
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
// deliberate one; 1 when not; 5 when node or the package is missing, so CI
// can tell "cannot run" from "disagrees".
func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "conformance", func() error {
		fs := cli.NewFlagSet("conformance",
			"usage: tailproof conformance [--runs N] [--seed S] [--json] [--save DIR] [--max-failures N]",
			"needs node and @qwen-code/qwen-code@0.24.4 (simulations/conformance/install.sh, or TAILPROOF_QWEN_PKG=<package dir>)")
		var (
			runs     = fs.Int("runs", 2000, "scenarios to generate (`N`)")
			seed     = fs.Uint64("seed", 1, "the run's seed (`S`); scenario i of seed S is always the same")
			asJSON   = fs.Bool("json", false, "print one JSON object")
			save     = fs.String("save", "", "write each failure and one scenario per known bug, minimized, under `DIR`")
			maxFails = fs.Int("max-failures", 20, "stop after `N` failures")
		)
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		if err := cli.AtLeast("--runs", *runs, 1); err != nil {
			return err
		}
		if err := cli.AtLeast("--max-failures", *maxFails, 1); err != nil {
			return err
		}
		bar := cli.NewProgress(stderr, "scenarios", *runs)
		rep, err := conformance.Run(ctx, conformance.Config{Runs: *runs, Seed: *seed, SaveDir: *save, MaxFailures: *maxFails,
			Progress: func(done, _ int) { bar.Set(done, "") }})
		bar.Done()
		switch {
		case errors.Is(err, conformance.ErrUnavailable):
			return cli.WithCode(cli.Unavailable, err)
		case err != nil:
			return cli.WithCode(cli.Code(err, cli.Unavailable), err)
		}
		w := &cli.Printer{W: stdout}
		if *asJSON {
			var doc bytes.Buffer
			if err := rep.JSON(&doc); err != nil {
				return cli.WithCode(cli.Internal, err)
			}
			if err := cli.WriteDoc(stdout, json.RawMessage(doc.Bytes()), true); err != nil {
				return err
			}
		} else {
			rep.Print(stdout)
			for _, d := range rep.Saved {
				w.Printf("saved %s\n", d)
			}
		}
		if err := w.Err(); err != nil {
			return err
		}
		if !rep.OK() {
			return cli.WithCode(cli.CheckFailed, errors.New("tailproof and the reference disagree (see the report)"))
		}
		return nil
	})
}
