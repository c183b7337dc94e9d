package dshlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
)

// Recovery is what loading one log file found and did.
type Recovery struct {
	Header dsh.Header
	// Events is the balanced log: the preserved events and the closers
	// (nil from RecoverV1Count).
	Events []dsh.Record
	// Count is the number of events in the balanced log (len(Events) when
	// they are kept).
	Count  int64
	Repair adapters.Repair
}

// RecoverV1 loads one dsh v1 log file the way Log.Load does,
// repairing it in place:
//
//  1. Scan (dsh's scanLog, deepseek-dsh.md §2.2). Only newline-terminated
//     lines count; a final segment without a newline is the torn fragment
//     even if it is complete JSON. Line 1 must be a session header. Events
//     are preserved while each parses and has seq equal to its index. At the
//     first hole (unparsable, empty or over-long line) or seq mismatch the
//     scan stops — but if that line or any later one is a turn/end, the hole
//     is inside the committed region and the log is unloadable: an error
//     wrapping adapters.ErrCorruptLog names its line and byte offset, and the
//     file is not touched.
//  2. Version: a header version other than 1 fails with
//     adapters.ErrUnsupportedVersion (after the scan, as in dsh, so
//     corruption is reported first).
//  3. Closers for an open turn (projections/turns).
//  4. If bytes follow the last preserved line: copy the whole original file
//     to <path>.broken-<size> durably, then truncate to the preserved prefix
//     and fsync.
//  5. Append the closers durably.
func RecoverV1(fsys vfs.FS, path string) (Recovery, error) {
	return recoverV1(fsys, path, 0, true)
}

// RecoverV1Count is RecoverV1 that keeps no event: Recovery.Events is nil
// and Count still counts the balanced log — all `tailproof dsh recover`
// reports, in memory that does not grow with the log (a 200 MB log's kept
// events took 265 MiB). The file is read, decided and repaired exactly as
// by RecoverV1.
func RecoverV1Count(fsys vfs.FS, path string) (Recovery, error) {
	return recoverV1(fsys, path, 0, false)
}

func recoverV1(fsys vfs.FS, path string, maxLine int, keep bool) (Recovery, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Recovery{}, fmt.Errorf("dshlog: %s: %w", path, adapters.ErrNotFound)
		}
		return Recovery{}, fmt.Errorf("dshlog: open %s: %w", path, err)
	}
	scan := &V1Scanner{maxLine: maxLine, keep: keep}
	cr := &countingReader{r: f}
	for line, err := range events.Lines(cr, maxLine) {
		if err != nil {
			f.Close()
			return Recovery{}, fmt.Errorf("dshlog: %s: read: %w", path, err)
		}
		if !scan.Line(line) {
			break
		}
	}
	f.Close()
	dec, err := scan.Decide(path, cr.n)
	if err != nil {
		return Recovery{}, err
	}
	out := Recovery{Header: dec.Header, Events: scan.events, Count: int64(dec.Events)}
	if dec.Repair.TruncatedBytes > 0 {
		evidence, err := keepEvidence(fsys, path, cr.n)
		if err != nil {
			return Recovery{}, err
		}
		if err := truncateDurable(fsys, path, dec.Committed); err != nil {
			return Recovery{}, err
		}
		out.Repair.TruncatedBytes = dec.Repair.TruncatedBytes
		out.Repair.Evidence = evidence
	}
	if closers := dec.Repair.Closers; len(closers) > 0 {
		if err := appendLines(fsys, path, encodeLines(closers)); err != nil {
			return Recovery{}, err
		}
		if keep {
			out.Events = append(out.Events, closers...)
		}
		out.Count += int64(len(closers))
		out.Repair.Closers = closers
	}
	return out, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// isTurnEnd is dsh's test for the last turn/end: the line parses as JSON
// and its type is turn/end — looser than a valid record on purpose, so a
// damaged but recognisable turn/end still marks the region before it as
// committed.
func isTurnEnd(line []byte) bool {
	if !bytes.Contains(line, []byte("turn/end")) {
		return false
	}
	var v struct {
		Type string `json:"type"`
	}
	if !json.Valid(line) || json.Unmarshal(line, &v) != nil {
		return false
	}
	return v.Type == dsh.TypeTurnEnd
}

func maxLineOrDefault(n int) int {
	if n <= 0 {
		return events.DefaultMaxLineBytes
	}
	return n
}
