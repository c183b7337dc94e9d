package cli

import (
	"fmt"
	"io"
)

// Printer writes a command's output and keeps the first write error, so a
// full disk or a closed pipe under stdout is reported (exit 4) instead of
// ignored.
type Printer struct {
	W   io.Writer
	err error
}

// Printf writes unless an earlier write failed.
func (p *Printer) Printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.W, format, args...)
	}
}

// JSON writes v as one line of JSON, a published document (schemaVersion
// first, HTML characters unescaped; see MarshalDoc).
func (p *Printer) JSON(v any) {
	if p.err != nil {
		return
	}
	b, err := MarshalDoc(v, false)
	if err != nil {
		p.err = err
		return
	}
	_, p.err = p.W.Write(append(b, '\n'))
}

// Err is the first write error, as a write failure (exit 4).
func (p *Printer) Err() error {
	if p.err != nil {
		return &Error{Code: Write, Err: fmt.Errorf("write output: %w", p.err)}
	}
	return nil
}

// Tail prints the end every decision's text output shares: one "warning:"
// line per input warning, then, when asked, the trace.
func (p *Printer) Tail(warnings, trace []string, withTrace bool) {
	for _, l := range warnings {
		p.Printf("warning: %s\n", l)
	}
	if withTrace {
		p.Printf("trace:\n")
		for _, l := range trace {
			p.Printf("  %s\n", l)
		}
	}
}
