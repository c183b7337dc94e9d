package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/dsh"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/events/turn"
)

// dsh under the harness contract (ADR 0028): status and replay read a v1
// log through events/dsh's mapper onto the vocabulary; repair is dsh's own
// load repair (`tailproof dsh recover`); reconcile and simulate have nothing
// to do for dsh (its log carries its own terminals; no writer model).

func dshHarness() turn.Harness { return dsh.Harness() }

// loadDSHV0 checks a dsh v0 log (zstd or raw, by its content) the way dsh's
// load reads it (dshlog.ScanV0: frames, rows, the torn tail; pipelined on two processors or more) and keeps only its
// header and counts: Open then streams the log's logical form — the header
// line, then one line per preserved event — which v0.Harness decides over,
// from a second scan of the file. Nothing the size of the log is held
// (issue #16: status as lean as reconcile; the whole logical log took 447 MiB
// for a 200 MB log before).
func (s *harnessSession) loadDSHV0(enc v0.Encoding) error {
	f, err := vfs.OpenRegular(s.fsys, s.Path, os.O_RDONLY, 0)
	if err != nil {
		return cli.WithCode(cli.Input, fmt.Errorf("--file %s: %w", s.Path, err))
	}
	defer f.Close()
	res, err := dshlog.ScanV0(f, enc, v0.Options{}, func(*v0.Record) error { return nil })
	if err != nil {
		return cli.WithCode(cli.Input, fmt.Errorf("--file %s is an unloadable dsh v0 log: %w", s.Path, err))
	}
	s.v0 = &dshV0Source{enc: enc, first: res}
	s.Harness = v0.Harness()
	return nil
}

// dshV0Source is what loadDSHV0 found: the encoding and the first scan's
// result, which every later scan must reproduce.
type dshV0Source struct {
	enc   v0.Encoding
	first v0.Result
}

// errDSHV0Changed is a later scan of a v0 log finding other than the first.
var errDSHV0Changed = errors.New("the dsh v0 log changed while it was read (its header or preserved events differ from the first read)")

// openDSHV0 streams the logical form of the log loadDSHV0 checked: a
// goroutine scans the file again and writes the header line, then each
// preserved event's line, into a pipe. The reader's Close stops the scan
// (its writes fail); a scan that fails, or that finds another header or
// another count of events than the first, ends the stream with that error.
func (s *harnessSession) openDSHV0() (io.ReadCloser, error) {
	f, err := vfs.OpenRegular(s.fsys, s.Path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	src := s.v0
	go func() {
		defer f.Close()
		w := bufio.NewWriterSize(pw, 64<<10)
		buf := append(v0.AppendHeader(nil, src.first.Header), '\n')
		_, err := w.Write(buf)
		var res v0.Result
		if err == nil {
			res, err = dshlog.ScanV0(f, src.enc, v0.Options{}, func(r *v0.Record) error {
				buf = append(r.AppendJSON(buf[:0]), '\n')
				_, err := w.Write(buf)
				return err
			})
		}
		if err == nil && (res.Events != src.first.Events || !bytes.Equal(v0.AppendHeader(nil, res.Header), v0.AppendHeader(nil, src.first.Header))) {
			err = errDSHV0Changed
		}
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err) // nil: the reader sees io.EOF
	}()
	return pr, nil
}

// pickDSHFormat reads a dsh log as its content says (dshlog.DetectFormat,
// the rule dsh recover and replay follow, whatever the file is named): a
// v0 log is checked now (loadDSHV0); a v1 log keeps the v1 harness.
func (s *harnessSession) pickDSHFormat() error {
	f, err := dshlog.DetectFormat(s.fsys, s.Path)
	switch {
	case err != nil:
		return cli.WithCode(cli.Input, fmt.Errorf("--file %s: %w", s.Path, err))
	case f == dshlog.FormatV0Zstd:
		return s.loadDSHV0(v0.Zstd)
	case f == dshlog.FormatV0Raw:
		return s.loadDSHV0(v0.Raw)
	}
	return nil
}

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
		// The file policy's message under this command's name; dsh recover
		// checks it again (its root is wider for a v0 log).
		fsys, err := cli.Within(hf.file)
		if err != nil {
			return err
		}
		defer fsys.Close()
		if err := cli.CheckNamed(fsys, "--file", hf.file); err != nil {
			return err
		}
		file, asJSON = hf.file, *j
		return nil
	})
	if code != cli.OK || file == "" {
		return code
	}
	if !asJSON {
		return runDSHRecover(ctx, []string{"--file", file}, stdout, stderr)
	}
	// The JSON form is dsh recover's report under the harness envelope
	// (docs/schemas/harness-repair-dsh.schema.json).
	var buf bytes.Buffer
	code = runDSHRecover(ctx, []string{"--file", file, "--json"}, &buf, stderr)
	out := harnessDSHRepairJSON{SchemaVersion: schemaVersion, Harness: harnessDSH, File: file}
	if buf.Len() == 0 {
		return code
	}
	if err := json.Unmarshal(buf.Bytes(), &out.dshRecoverReport); err != nil {
		fmt.Fprintf(stderr, "tailproof repair: internal error: dsh recover's report does not read back: %v\n", err)
		return cli.Internal
	}
	w := &cli.Printer{W: stdout}
	w.JSON(out)
	if err := w.Err(); err != nil && code == cli.OK {
		fmt.Fprintf(stderr, "tailproof repair: %v\n", err)
		return cli.Write
	}
	return code
}

// harnessDSHRepairJSON is `repair --harness dsh --json`: dsh recover's
// report (its keys after the envelope's).
type harnessDSHRepairJSON struct {
	SchemaVersion int    `json:"schemaVersion"`
	Harness       string `json:"harness"`
	File          string `json:"file"`
	dshRecoverReport
}
