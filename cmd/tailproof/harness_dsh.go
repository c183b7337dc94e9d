package main

import (
	"context"
	"io"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/events/turn"
)

// dsh under the harness contract (ADR 0028): status and replay read a v1
// log through events/dsh's mapper onto the vocabulary; repair is dsh's own
// load repair (`tailproof dsh recover`); reconcile and simulate have nothing
// to do for dsh (its log carries its own terminals; no writer model).

func dshHarness() turn.Harness { return dsh.Harness() }

// isDSHV0Name tells the published v0 layout's fixed file names.
func isDSHV0Name(base string) bool { return base == dshlog.V0ZstdName || base == dshlog.V0RawName }

// runDSHRepair is `repair --harness dsh --file PATH [--json]`: the flags
// checked here, the work done by `dsh recover`.
func runDSHRepair(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var file string
	var asJSON bool
	code := cli.Main(stderr, "repair", func() error {
		fs := cli.NewFlagSet("repair", "usage: tailproof repair --harness dsh --file PATH [--json]")
		var hf harnessFlags
		hf.register(fs)
		j := fs.Bool("json", false, "print one JSON object (dsh recover's report)")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		if hf.session != "" || hf.cwd != "" || hf.home != "" {
			return cli.Usagef("repair --harness dsh takes --file PATH (the dsh log), not --session/--cwd/--home")
		}
		if hf.file == "" {
			return cli.Usagef("--file PATH is required (the dsh log)")
		}
		file, asJSON = hf.file, *j
		return nil
	})
	if code != cli.OK || file == "" {
		return code
	}
	rest := []string{"--file", file}
	if asJSON {
		rest = append(rest, "--json")
	}
	return runDSHRecover(ctx, rest, stdout, stderr)
}
