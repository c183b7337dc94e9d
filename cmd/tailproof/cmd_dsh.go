package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

func init() {
	register(command{
		name:    "dsh",
		summary: "dsh session logs: `dsh recover --file PATH [--json]` closes a log a crash left open",
		run:     runDSH,
	})
}

const dshUsage = "usage: tailproof dsh recover --file PATH [--json]"

func runDSH(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, dshUsage)
		return cli.OK
	}
	if len(args) == 0 || args[0] != "recover" {
		fmt.Fprintf(stderr, "tailproof dsh: want the recover subcommand\n%s\n", dshUsage)
		return cli.Usage
	}
	return runDSHRecover(ctx, args[1:], stdout, stderr)
}

// dshRecoverReport is the --json output; the key order is part of the
// interface, so it is a struct, not a map.
type dshRecoverReport struct {
	Events         int      `json:"events"`
	TruncatedBytes int64    `json:"truncatedBytes"`
	Closers        []string `json:"closers"`
	Error          *string  `json:"error"`
}

// runDSHRecover loads one dsh v1 log exactly as the session backend does —
// repairing it in place: the torn final fragment is cut (after the original
// is copied to PATH.broken-SIZE) and an open turn is closed durably. It exits
// 3 when the log is missing, not a regular file, behind a link out of its
// directory, or unloadable; the log is then left unchanged.
func runDSHRecover(_ context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "dsh recover", func() error {
		fs := cli.NewFlagSet("dsh recover", dshUsage)
		file := fs.String("file", "", "the dsh v1 session log (`PATH`, a <id>.jsonl)")
		asJSON := fs.Bool("json", false, "print one JSON object instead of text")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		if *file == "" {
			return cli.Usagef("--file PATH is required (see tailproof dsh recover --help)")
		}
		// The log's own directory is the root: the repair writes its
		// evidence copy and closers beside it, never through a link out.
		fsys, err := cli.Within(*file)
		if err != nil {
			return err
		}
		defer fsys.Close()
		if err := cli.CheckNamed(fsys, "--file", *file); err != nil {
			return err
		}
		rec, err := jsonl.RecoverDSHLog(fsys, *file)
		report := dshRecoverReport{Closers: []string{}}
		if err != nil {
			msg := err.Error()
			report.Error = &msg
		} else {
			report.Events = len(rec.Events)
			report.TruncatedBytes = rec.Repair.TruncatedBytes
			for _, c := range rec.Repair.Closers {
				report.Closers = append(report.Closers, c.Type)
			}
		}
		w := &cli.Printer{W: stdout}
		switch {
		case *asJSON:
			w.JSON(report)
		case err != nil:
		default:
			w.Printf("%s: %d events, every turn closed\n", *file, report.Events)
			if rec.Repair.TruncatedBytes > 0 {
				w.Printf("  cut a torn final fragment of %d bytes; the original is kept at %s\n", rec.Repair.TruncatedBytes, rec.Repair.Evidence)
			}
			if len(report.Closers) > 0 {
				w.Printf("  closed the interrupted turn: appended %s\n", strings.Join(report.Closers, ", "))
			}
			if rec.Repair.TruncatedBytes == 0 && len(report.Closers) == 0 {
				w.Printf("  nothing to repair\n")
			}
		}
		if err != nil {
			return cli.WithCode(cli.Input, fmt.Errorf("%s is unloadable (left unchanged): %w", *file, err))
		}
		return w.Err()
	})
}
