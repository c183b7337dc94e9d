package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
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
// exactly as that format's session backend does, repairing it in place: the
// torn final fragment is cut (after the original is copied aside) and an open
// turn is closed durably. It exits 3 when the log is missing, not a regular
// file, behind a link out of its root, or unloadable; the log is then left
// unchanged.
func runDSHRecover(_ context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(stderr, "dsh recover", func() error {
		fs := cli.NewFlagSet("dsh recover", dshUsage)
		file := fs.String("file", "", "the dsh session log (`PATH`: v0 <root>/<project>/<id>/session.jsonl[.zstd], or v1 <id>.jsonl)")
		asJSON := fs.Bool("json", false, "print one JSON object instead of text")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		if *file == "" {
			return cli.Usagef("--file PATH is required (see tailproof dsh recover --help)")
		}
		// The root the repair may write in: a v1 log's own directory; a v0
		// log's sessions root (<root>/<project>/<id>/session.jsonl*), which the
		// backend checks for one encoding. Never through a link out of it.
		root := filepath.Dir(*file)
		if base := filepath.Base(*file); base == dshlog.V0ZstdName || base == dshlog.V0RawName {
			root = filepath.Dir(filepath.Dir(root))
		}
		fsys, err := vfs.Within(root)
		if err != nil {
			return cli.WithCode(cli.Input, err)
		}
		defer fsys.Close()
		if err := cli.CheckNamed(fsys, "--file", *file); err != nil {
			return err
		}
		report := dshRecoverReport{Closers: []string{}}
		var evidence string
		format, err := dshlog.DetectFormat(fsys, *file)
		report.Format = format.String()
		if err == nil && format != dshlog.FormatV1 {
			err = checkV0Name(*file, format)
		}
		if err == nil && format == dshlog.FormatV1 {
			var rec dshlog.Recovery
			if rec, err = dshlog.RecoverV1Count(fsys, *file); err == nil {
				report.Events = rec.Count
				report.TruncatedBytes, evidence = rec.Repair.TruncatedBytes, rec.Repair.Evidence
				for _, c := range rec.Repair.Closers {
					report.Closers = append(report.Closers, c.Type)
				}
			}
		} else if err == nil {
			var rec dshlog.RecoveryV0
			if rec, err = dshlog.RecoverV0(fsys, *file, v0.Options{}); err == nil {
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
		w := &cli.Printer{W: stdout}
		switch {
		case *asJSON:
			w.JSON(report)
		case err != nil:
		default:
			w.Printf("%s: %d events, every turn closed\n", *file, report.Events)
			if report.TruncatedBytes > 0 {
				w.Printf("  cut a torn final fragment of %d bytes; the original is kept at %s\n", report.TruncatedBytes, evidence)
			}
			if len(report.Closers) > 0 {
				w.Printf("  closed the interrupted turn: appended %s\n", strings.Join(report.Closers, ", "))
			}
			if report.TruncatedBytes == 0 && len(report.Closers) == 0 {
				w.Printf("  nothing to repair\n")
			}
		}
		if err != nil {
			return cli.WithCode(cli.Input, fmt.Errorf("%s is unloadable (left unchanged): %w", *file, err))
		}
		return w.Err()
	})
}

// checkV0Name refuses to repair a v0 log (by its content) that is not named
// as the published backend names that encoding: dsh loads a v0 log only
// from <root>/--<cwd>--/<id>/session.jsonl.zstd or session.jsonl, and reads
// each name in its own encoding, so a renamed log is one dsh never loads
// and a repair of it could not be checked against dsh's load. Status and
// replay read it all the same.
func checkV0Name(path string, f dshlog.Format) error {
	want := dshlog.V0RawName
	if f == dshlog.FormatV0Zstd {
		want = dshlog.V0ZstdName
	}
	if base := filepath.Base(path); base != want {
		return fmt.Errorf("a dsh %s log by its content, named %s: dsh loads it only as <root>/--<cwd>--/<id>/%s, so recover repairs it only there (status and replay read it as it is)", f, base, want)
	}
	return nil
}
