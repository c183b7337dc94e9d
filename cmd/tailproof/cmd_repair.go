package main

import (
	"context"
	"errors"
	"io"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

func init() {
	register(command{
		name:    "repair",
		summary: "seal a torn last line of a Codex or Claude Code session (the original bytes kept aside), or run dsh's load repair",
		run:     runRepair,
	})
}

// harnessRepairJSON is `repair --harness codex|claude --json`
// (docs/schemas/harness-repair.schema.json).
type harnessRepairJSON struct {
	SchemaVersion int    `json:"schemaVersion"`
	Harness       string `json:"harness"`
	File          string `json:"file"`
	// Action is none, terminated or cut (harnessfs.RepairAction).
	Action string `json:"action"`
	// Offset and Bytes locate the final segment that had no newline.
	Offset int64 `json:"offset"`
	Bytes  int64 `json:"bytes"`
	// Evidence is the copy of a cut fragment ("" unless cut).
	Evidence string `json:"evidence"`
	Size     int64  `json:"size"`
}

// runRepair is the one command that writes a harness's own session file
// (ADR 0024): a torn final fragment is copied aside and cut, a final record
// missing only its newline gets it; nothing else is touched. A live writer
// (Claude Code's pid files) refuses it with exit 5.
func runRepair(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name, _ := harnessArg(args)
	if name == harnessDSH {
		return runDSHRepair(ctx, args, stdout, stderr)
	}
	return cli.Main(stderr, "repair", func() error {
		fs := cli.NewFlagSet("repair", "usage: tailproof repair --harness codex|claude|dsh "+harnessSynopsis+" [--json]")
		var hf harnessFlags
		hf.register(fs)
		asJSON := fs.Bool("json", false, "print one JSON object (schemaVersion 1)")
		if err := fs.Parse(args, stdout); err != nil {
			return err
		}
		switch hf.name {
		case harnessCodex, harnessClaude:
		case harnessQwen:
			if !fs.Given("harness") {
				return cli.Usagef("name the harness: --harness codex, claude or dsh (Qwen's ledger is repaired by reconcile's own appends)")
			}
			return cli.Usagef("Qwen's files need no repair command: reconcile seals a torn ledger tail as it appends; name --harness codex, claude or dsh")
		default:
			if _, err := turnHarness(hf.name); err != nil {
				return err
			}
		}
		s, err := hf.open()
		if err != nil {
			return err
		}
		defer s.Close()
		// Asked first so that a live writer leaves not even Repair's lock
		// file behind; Repair asks again, under the lock, before it writes.
		if err := s.WriterLive(ctx); err != nil {
			return err
		}
		res, err := harnessfs.Repair(ctx, s.fsys, s.Path, s.Harness, harnessfs.RepairOptions{WriterLive: s.WriterLive})
		switch {
		case errors.Is(err, harnessfs.ErrRepairRefused):
			return cli.WithCode(cli.Input, err)
		case errors.Is(err, harnessfs.ErrFileChanged):
			return cli.WithCode(cli.Unavailable, err)
		case err != nil:
			return cli.WithCode(cli.Code(err, cli.Write), err)
		}
		out := harnessRepairJSON{SchemaVersion: schemaVersion, Harness: s.Name, File: s.Path, Action: string(res.Action),
			Offset: res.Offset, Bytes: res.Bytes, Evidence: res.Evidence, Size: res.Size}
		w := &cli.Printer{W: stdout}
		if *asJSON {
			w.JSON(out)
			return w.Err()
		}
		switch res.Action {
		case harnessfs.RepairNone:
			w.Printf("%s: ends on a whole line; nothing to repair\n", s.Path)
		case harnessfs.RepairTerminated:
			w.Printf("%s: the last record (offset %d, %d bytes) was whole but for its newline; appended the newline\n", s.Path, res.Offset, res.Bytes)
		case harnessfs.RepairCut:
			w.Printf("%s: cut a torn final fragment of %d bytes at offset %d; the original bytes are kept at %s\n", s.Path, res.Bytes, res.Offset, res.Evidence)
		}
		return w.Err()
	})
}
