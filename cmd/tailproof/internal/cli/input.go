package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
)

// FirstPositions is how many undecodable lines a report names.
const FirstPositions = 3

// Position is one undecodable line.
type Position struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason,omitempty"`
}

func (p Position) String() string { return fmt.Sprintf("line %d, offset %d", p.Line, p.Offset) }

// FileReport is what one input file held, as the command's readers saw it.
// Programs read the counts in --json; people read Warnings.
type FileReport struct {
	Path string `json:"path"`
	// Present is false for a file the Qwen layout allows to be absent (a
	// session that never had a ledger).
	Present bool `json:"present"`
	// Checked is false when nothing read the file's lines for this answer
	// (a transcript no decision needed); the counts are then zero.
	Checked bool `json:"checked"`
	// Records counts the records that decoded (absent when the file was
	// read but not counted: a transcript the decision found clean);
	// Undecodable the lines no reader uses (a torn final line included).
	Records     *int       `json:"records,omitempty"`
	Undecodable int        `json:"undecodable"`
	TornTail    bool       `json:"tornTail"`
	First       []Position `json:"firstUndecodable"`
	// Note says why a file was not checked or was absent.
	Note string `json:"note,omitempty"`
}

// InputReport is the "input" object of a command's --json output.
type InputReport struct {
	Ledger     *FileReport `json:"ledger,omitempty"`
	Transcript *FileReport `json:"transcript,omitempty"`
}

// Warnings are the report's lines for people: every undecodable line
// counted, a mostly undecodable file called out, an absent file named (it
// is why there is nothing to do). A file no decision needed to read is
// not a warning; its note is in the JSON.
func (r InputReport) Warnings() []string {
	out := []string{}
	for _, f := range []struct {
		role string
		r    *FileReport
	}{{"ledger", r.Ledger}, {"transcript", r.Transcript}} {
		if f.r != nil {
			out = append(out, f.r.Warnings(f.role)...)
		}
	}
	return out
}

// Warnings is the report's line for people, for a file in the given role
// ("ledger", "transcript", "dsh log").
func (f *FileReport) Warnings(role string) []string {
	switch {
	case !f.Present && f.Path == "":
		return []string{fmt.Sprintf("%s: none: %s", role, f.Note)}
	case !f.Present:
		return []string{fmt.Sprintf("%s %s: absent: %s", role, f.Path, f.Note)}
	case !f.Checked, f.Undecodable == 0:
		return nil
	}
	records := 0
	if f.Records != nil {
		records = *f.Records
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d of %d lines undecodable and ignored", role, f.Path, f.Undecodable, records+f.Undecodable)
	if records == 0 || f.Undecodable > records {
		fmt.Fprintf(&b, " (mostly undecodable: is it a %s?)", role)
	} else if f.Undecodable == 1 && f.TornTail {
		b.WriteString(" (a torn final line, as a crash mid-write leaves)")
	}
	parts := make([]string, len(f.First))
	for i, p := range f.First {
		parts[i] = p.String()
	}
	fmt.Fprintf(&b, "; first at %s", strings.Join(parts, "; "))
	return []string{b.String()}
}

// ScanLedger counts a ledger's records and undecodable lines the way the
// ledger reader (ledger.ReadEach, Qwen's readPromptLedgerRecords) sees
// them — blank lines skipped, a line ledger.Decode refuses dropped — and
// keeps the first positions. It keeps nothing per prompt: the clock check
// against each prompt's admission is the façade's (tailproof.Reconcile).
func ScanLedger(r io.Reader) (FileReport, error) {
	var c LedgerCollector
	n, _, err := ledger.ReadEachLine(r, false, nil, func(l events.Line, err error) {
		c.Dropped(tailproof.LedgerLine{Pos: l.Pos, Terminated: l.Terminated, Size: l.Size, Err: err})
	})
	if err != nil {
		return c.report(), err
	}
	c.Read(n)
	return c.Report()
}

// LedgerCollector builds a ledger's FileReport from a read of it: the
// reconcile command hands it to tailproof.Reconcile (Options.LedgerReport)
// so that the ledger is read once for the decision and the report.
type LedgerCollector struct {
	rep  FileReport
	read bool
}

// Dropped notes an undecodable line (the first FirstPositions positions
// are kept).
func (c *LedgerCollector) Dropped(l tailproof.LedgerLine) {
	bad := ""
	if errors.Is(l.Err, ledger.ErrLineTooLong) {
		bad = fmt.Sprintf("a %d-byte line, longer than any record", l.Size)
	} else if l.Err != nil {
		bad = l.Err.Error()
	}
	c.rep.Undecodable++
	c.rep.TornTail = !l.Terminated
	if len(c.rep.First) < FirstPositions {
		c.rep.First = append(c.rep.First, Position{Line: l.Pos.Line, Offset: l.Pos.Offset, Reason: bad})
	}
}

// Read notes the end of the read and its number of records.
func (c *LedgerCollector) Read(records int) {
	c.rep.Records, c.read = &records, true
}

func (c *LedgerCollector) report() FileReport {
	rep := c.rep
	rep.Present, rep.Checked = true, true
	if rep.Records == nil {
		rep.Records = new(int)
	}
	if rep.First == nil {
		rep.First = []Position{}
	}
	return rep
}

// Report is the ledger's report; ok false when no read of it ended.
func (c *LedgerCollector) Report() (FileReport, error) {
	if !c.read {
		return c.report(), errors.New("the ledger was not read")
	}
	return c.report(), nil
}

// ScanTranscript indexes a transcript as Qwen's loader reads it
// (qwen.LoadChain's first pass) and reports its valid records and the lines
// no reader uses: lines it could not read completely (torn, corrupt, too
// long) and objects it skips (invalid records, unknown record types).
func ScanTranscript(open func() (io.ReadCloser, error), maxLineBytes int) (FileReport, error) {
	rep := FileReport{Present: true, Checked: true, First: []Position{}}
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{MaxLineBytes: maxLineBytes})
	if err != nil {
		return rep, err
	}
	rep.Records = &chain.Records
	var bad []Position
	for _, e := range chain.BadLines {
		bad = append(bad, Position{Line: e.Pos.Line, Offset: e.Pos.Offset, Reason: e.Detail})
		rep.TornTail = rep.TornTail || errors.Is(e, events.ErrTornTail)
	}
	for _, d := range chain.Diagnostics {
		if d.Code == qwen.DiagInvalidRecord || (d.Code == qwen.DiagUnknownRecordOrPart && d.Path == "") {
			bad = append(bad, Position{Line: d.Pos.Line, Offset: d.Pos.Offset, Reason: d.Code + ": " + d.Message})
		}
	}
	slices.SortStableFunc(bad, func(a, b Position) int { return cmp.Compare(a.Offset, b.Offset) })
	// A line can be both cut short and hold a skipped object: count it once.
	bad = slices.CompactFunc(bad, func(a, b Position) bool { return a.Line == b.Line })
	rep.Undecodable = len(bad)
	rep.First = append(rep.First, bad[:min(len(bad), FirstPositions)]...)
	return rep, nil
}
