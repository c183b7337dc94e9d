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
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
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
	Events         int64    `json:"events"`
	TruncatedBytes int64    `json:"truncatedBytes"`
	Closers        []string `json:"closers"`
	Error          *string  `json:"error"`
	// Format is the file's format as detected (v1, v0-zstd, v0-raw), last so
	// that the v1 report's prefix is unchanged.
	Format string `json:"format"`
}

// runDSHRecover loads one dsh log — v1 (<id>.jsonl) or the published v0
// (session.jsonl.zstd or session.jsonl), the format taken from the file —
// exactly as that format's session backend does,
// repairing it in place: the torn final fragment is cut (after the original
// is copied to PATH.broken-SIZE) and an open turn is closed durably. It exits
// non-zero only when the log is unloadable.
func runDSHRecover(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh recover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the dsh session log (`PATH`: v0 <root>/<project>/<id>/session.jsonl[.zstd], or v1 <id>.jsonl)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: tailproof dsh recover --file PATH [--json]")
		return 2
	}
	report := dshRecoverReport{Closers: []string{}}
	var evidence string
	format, err := dshlog.DetectFormat(vfs.OS, *file)
	report.Format = format.String()
	if err == nil && format == dshlog.FormatV1 {
		var rec dshlog.Recovery
		if rec, err = dshlog.RecoverV1(vfs.OS, *file); err == nil {
			report.Events = int64(len(rec.Events))
			report.TruncatedBytes, evidence = rec.Repair.TruncatedBytes, rec.Repair.Evidence
			for _, c := range rec.Repair.Closers {
				report.Closers = append(report.Closers, c.Type)
			}
		}
	} else if err == nil {
		var rec dshlog.RecoveryV0
		if rec, err = dshlog.RecoverV0(vfs.OS, *file, v0.Options{}); err == nil {
			report.Events = rec.Plan.Events
			report.TruncatedBytes, evidence = rec.TruncatedBytes, rec.Evidence
			for _, c := range rec.Plan.Closers {
				report.Closers = append(report.Closers, c.Type)
			}
		}
	}
	if err != nil {
		msg := err.Error()
		report.Error = &msg
	}
	if *asJSON {
		b, _ := json.Marshal(report)
		fmt.Fprintf(stdout, "%s\n", b)
	} else if err != nil {
		fmt.Fprintf(stderr, "tailproof dsh recover: %s is unloadable (left unchanged): %v\n", *file, err)
	} else {
		fmt.Fprintf(stdout, "%s: %d events, every turn closed\n", *file, report.Events)
		if report.TruncatedBytes > 0 {
			fmt.Fprintf(stdout, "  cut a torn final fragment of %d bytes; the original is kept at %s\n", report.TruncatedBytes, evidence)
		}
		if len(report.Closers) > 0 {
			fmt.Fprintf(stdout, "  closed the interrupted turn: appended %s\n", strings.Join(report.Closers, ", "))
		}
		if report.TruncatedBytes == 0 && len(report.Closers) == 0 {
			fmt.Fprintln(stdout, "  nothing to repair")
		}
	}
	if err != nil {
		return 1
	}
	return 0
}
