package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func init() {
	register(command{
		name:    "dsh",
		summary: "dsh session logs: `dsh recover --file PATH [--json]` closes a log a crash left open",
		run:     runDSH,
	})
}

func runDSH(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "recover" {
		fmt.Fprintln(stderr, "usage: tailproof dsh recover --file PATH [--json]")
		return 2
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
// non-zero only when the log is unloadable.
func runDSHRecover(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh recover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the dsh v1 session log (`PATH`, a <id>.jsonl)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: tailproof dsh recover --file PATH [--json]")
		return 2
	}
	rec, err := dshlog.RecoverV1(vfs.OS, *file)
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
	if *asJSON {
		b, _ := json.Marshal(report)
		fmt.Fprintf(stdout, "%s\n", b)
	} else if err != nil {
		fmt.Fprintf(stderr, "tailproof dsh recover: %s is unloadable (left unchanged): %v\n", *file, err)
	} else {
		fmt.Fprintf(stdout, "%s: %d events, every turn closed\n", *file, report.Events)
		if rec.Repair.TruncatedBytes > 0 {
			fmt.Fprintf(stdout, "  cut a torn final fragment of %d bytes; the original is kept at %s\n", rec.Repair.TruncatedBytes, rec.Repair.Evidence)
		}
		if len(report.Closers) > 0 {
			fmt.Fprintf(stdout, "  closed the interrupted turn: appended %s\n", strings.Join(report.Closers, ", "))
		}
		if rec.Repair.TruncatedBytes == 0 && len(report.Closers) == 0 {
			fmt.Fprintln(stdout, "  nothing to repair")
		}
	}
	if err != nil {
		return 1
	}
	return 0
}
