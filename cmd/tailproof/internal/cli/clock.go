package cli

import (
	"context"
	"fmt"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/ledger"
)

// ClockChecked is a store that refuses to append a terminal stamped before
// its prompt's own admission: a terminal earlier than its in_flight record
// would make the ledger's clock run backwards, and the temporal guards of
// every later decision read that clock. Admitted maps each open prompt to
// its latest admission time (ScanLedger's second result). Source names the
// clock for the message ("--now", "the system clock").
type ClockChecked struct {
	adapters.Store
	Admitted map[string]float64
	Source   string
	// Flag is true when the clock came from a flag, so a refusal is a usage
	// error (exit 2); a refused system clock is a failed write (exit 4).
	Flag bool
}

// Check refuses a terminal line stamped before its prompt's admission. A
// dry run calls it on the line it would append, so that it reports what a
// real run would do.
func (s ClockChecked) Check(line []byte) error {
	rec, err := ledger.Decode(line)
	if err != nil || !rec.IsTerminal() {
		return nil
	}
	if at, ok := s.Admitted[rec.PromptID]; ok && rec.AtFloat() < at {
		code := Write
		if s.Flag {
			code = Usage
		}
		return &Error{Code: code, Err: fmt.Errorf("%s %d is before prompt %s's own admission at %.0f, and a terminal cannot precede its prompt: nothing appended",
			s.Source, rec.At, rec.PromptID, at)}
	}
	return nil
}

// AppendLedger appends what Check allows.
func (s ClockChecked) AppendLedger(ctx context.Context, sessionID string, line []byte) error {
	if err := s.Check(line); err != nil {
		return err
	}
	return s.Store.AppendLedger(ctx, sessionID, line)
}

// Workspace forwards the wrapped store's workspace (adapters.WorkspaceStore),
// so that wrapping never switches off the reconciler's workspace check.
func (s ClockChecked) Workspace() string {
	if ws, ok := s.Store.(adapters.WorkspaceStore); ok {
		return ws.Workspace()
	}
	return ""
}

var _ adapters.WorkspaceStore = ClockChecked{}
