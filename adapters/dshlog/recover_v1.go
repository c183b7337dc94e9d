package dshlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

// Recovery is what loading one log file found and did.
type Recovery struct {
	Header dsh.Header
	// Events is the balanced log: the preserved events and the closers.
	Events []dsh.Record
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
	return recoverV1(fsys, path, 0)
}

func recoverV1(fsys vfs.FS, path string, maxLine int) (Recovery, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Recovery{}, fmt.Errorf("dshlog: %s: %w", path, adapters.ErrNotFound)
		}
		return Recovery{}, fmt.Errorf("dshlog: open %s: %w", path, err)
	}
	scan, err := scanV1(f, maxLine)
	f.Close()
	if err != nil {
		return Recovery{}, fmt.Errorf("dshlog: %s: %w", path, err)
	}
	if scan.header.Version != dsh.Version {
		return Recovery{}, fmt.Errorf("dshlog: %s: %w %s for %q (only v1 is supported)", path,
			adapters.ErrUnsupportedVersion, strconv.FormatFloat(scan.header.Version, 'f', -1, 64), scan.header.ID)
	}
	closers, err := turns.Closers(scan.events)
	if err != nil {
		return Recovery{}, fmt.Errorf("dshlog: %s: cannot close the open turn: %w: %w", path, adapters.ErrCorruptLog, err)
	}
	out := Recovery{Header: scan.header, Events: scan.events}
	if scan.committed < scan.size {
		evidence, err := keepEvidence(fsys, path, scan.size)
		if err != nil {
			return Recovery{}, err
		}
		if err := truncateDurable(fsys, path, scan.committed); err != nil {
			return Recovery{}, err
		}
		out.Repair.TruncatedBytes = scan.size - scan.committed
		out.Repair.Evidence = evidence
	}
	if len(closers) > 0 {
		if err := appendLines(fsys, path, encodeLines(closers)); err != nil {
			return Recovery{}, err
		}
		out.Events = append(out.Events, closers...)
		out.Repair.Closers = closers
	}
	return out, nil
}

type scanV1Result struct {
	header    dsh.Header
	events    []dsh.Record
	committed int64 // end of the last preserved line (or of the header)
	size      int64
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

// scanHole is the first line the scan could not preserve.
type scanHole struct {
	pos    events.Position
	index  int
	detail string
}

func scanV1(r io.Reader, maxLine int) (scanV1Result, error) {
	cr := &countingReader{r: r}
	var (
		res       scanV1Result
		sawHeader bool
		hole      *scanHole
		endAfter  bool   // a turn/end at or after the hole
		arena     []byte // holds the events' data: an allocation per few KiB, not per line
	)
	for line, err := range events.Lines(cr, maxLine) {
		if err != nil {
			return res, fmt.Errorf("read: %w", err)
		}
		if !line.Terminated {
			break // the torn fragment: never a line
		}
		end := line.Pos.Offset + line.Size + 1
		if !sawHeader {
			sawHeader = true
			if line.TooLong {
				return res, fmt.Errorf("%s: %w: header line exceeds %d bytes", line.Pos, adapters.ErrCorruptLog, maxLineOrDefault(maxLine))
			}
			h, err := dsh.ParseHeader(line.Bytes)
			if errors.Is(err, dsh.ErrNotJSON) {
				return res, fmt.Errorf("%s: %w: header line is not valid JSON", line.Pos, adapters.ErrCorruptLog)
			} else if err != nil {
				return res, fmt.Errorf("%s: %w: first line is not a session header", line.Pos, adapters.ErrCorruptLog)
			}
			res.header, res.committed = h, end
			continue
		}
		if hole != nil {
			if !endAfter && !line.TooLong && isTurnEnd(line.Bytes) {
				endAfter = true
			}
			continue
		}
		i := len(res.events)
		var rec dsh.Record
		var perr error
		if line.TooLong {
			perr = fmt.Errorf("line of %d bytes exceeds %d", line.Size, maxLineOrDefault(maxLine))
		} else {
			rec, arena, perr = dsh.ParseRecordAppend(arena, line.Bytes)
		}
		switch {
		case perr != nil:
			hole = &scanHole{pos: line.Pos, index: i, detail: fmt.Sprintf("unparsable committed event (event %d): %v", i, perr)}
			endAfter = !line.TooLong && isTurnEnd(line.Bytes)
		case rec.Seq != int64(i):
			hole = &scanHole{pos: line.Pos, index: i, detail: fmt.Sprintf("seq gap in committed region (expected %d, got %d)", i, rec.Seq)}
			endAfter = rec.Type == dsh.TypeTurnEnd
		default:
			res.events = append(res.events, rec)
			res.committed = end
		}
	}
	res.size = cr.n
	if !sawHeader {
		return res, fmt.Errorf("%w: empty or header-less session log", adapters.ErrCorruptLog)
	}
	if hole != nil && endAfter {
		return res, fmt.Errorf("%s: %w: %s", hole.pos, adapters.ErrCorruptLog, hole.detail)
	}
	return res, nil
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
