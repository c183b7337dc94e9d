package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal: progress is drawn only there,
// because a bar in a log file or a pipe is noise a program has to strip.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress is a one-line bar on stderr for work of a known size. It draws
// only when its writer is a terminal, redraws only when the bar or the
// percentage changes, and may be updated from several goroutines. A nil
// *Progress is silent, so a caller never tests for one.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
	done  int
	pct   int // the percentage drawn last; -1 before the first draw
}

// NewProgress returns a bar for total units of work, or nil (silent) when w
// is not a terminal or there is nothing to count.
func NewProgress(w io.Writer, label string, total int) *Progress {
	if total <= 0 || !IsTerminal(w) {
		return nil
	}
	return newProgressOn(w, label, total)
}

// newProgressOn is NewProgress without the terminal check, for tests.
func newProgressOn(w io.Writer, label string, total int) *Progress {
	return &Progress{w: w, label: label, total: total, pct: -1}
}

// Set records that done units are finished, with an optional note (the item
// at hand).
func (p *Progress) Set(done int, note string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = min(max(done, p.done), p.total)
	p.draw(note)
}

// Add records n more finished units.
func (p *Progress) Add(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = min(p.done+n, p.total)
	p.draw("")
}

// draw redraws when the percentage moves (at most 101 times a run, however
// many units), showing the note of the unit that moved it.
func (p *Progress) draw(note string) {
	pct := p.done * 100 / p.total
	if pct == p.pct {
		return
	}
	p.pct = pct
	const width = 30
	fill := p.done * width / p.total
	if len(note) > 32 {
		note = note[:32]
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %d/%d %-32s", p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, p.done, p.total, note)
}

// Done clears the bar, leaving the terminal as it was.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pct >= 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
