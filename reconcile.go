package tailproof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines/reconcile"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// Verdict is the outcome of one prompt's reconciliation.
type Verdict = reconcile.Verdict

// Verdicts.
const (
	VerdictCompleted   = reconcile.VerdictCompleted
	VerdictInterrupted = reconcile.VerdictInterrupted
	VerdictCancelled   = reconcile.VerdictCancelled // the prompt's own turn_result settled it cancelled (ADR 0026)
	VerdictError       = reconcile.VerdictError     // the prompt's own turn_result settled it in error, code -32603 (ADR 0026)
	VerdictUnknown     = reconcile.VerdictUnknown   // evidence could not prove a verdict; nothing appended
	VerdictNone        = reconcile.VerdictNone      // no prompt was dangling; nothing to do
)

// Decision is what Reconcile decided for one dangling prompt and why (see
// reconcile.Decision).
type Decision = reconcile.Decision

// Rules is a complete rule set (see reconcile.Rules).
type Rules = reconcile.Rules

// Options configure Reconcile.
type Options struct {
	// Now returns the current time in Unix milliseconds; it stamps the
	// appended records' `at`. Required: the core reads no clock.
	Now func() int64
	// DryRun decides without appending; each Decision.Appended is the record
	// that would have been written.
	DryRun bool
	// Rules is the rule set; its zero value means reconcile.Tailproof(), or
	// reconcile.Qwen0244() with Reference.
	Rules Rules
	// Reference is shorthand for Rules: reconcile.Qwen0244(), exactly the
	// rules of Qwen Code 0.24.4. Used to score the reference and to check
	// conformance against it.
	Reference bool
	// Guards are extra evidence guards a harness adds; they run after the
	// built-in ones at the evidence check.
	Guards []guards.Guard[*guards.Evidence]
	// MaxLineBytes bounds a transcript line (<= 0: events.DefaultMaxLineBytes).
	MaxLineBytes int
	// NoTrace leaves Result.Trace and every Decision.Trace empty and skips
	// formatting them (reconcile.Input.NoTrace); the decisions and what is
	// appended are the same. The simulator sets it: it reads only verdicts
	// and vetoes, and the trace lines were a tenth of its cost.
	NoTrace bool
	// Memo, when set, remembers recent transcripts' decoded walks by their
	// bytes and feeds a byte-identical transcript's from memory (see
	// TranscriptMemo), and the last ledger's records, feeding a ledger that
	// is or extends it by whole lines from them (see ledgerMemo); the
	// decisions are the same. The simulator sets one
	// per model run.
	Memo *TranscriptMemo
	// LedgerReport, when set, hears the first read of the ledger: Dropped
	// for each line it drops, as it is read, then Read with the number of
	// records read — what the CLI's input report says, without reading the
	// ledger a second time for it (4% of a 600 MB reconcile with 109,000
	// ledger records, issue #16). Read is not called when the ledger could
	// not be read; neither is called with Memo (which may feed the ledger
	// from memory).
	LedgerReport LedgerReporter
}

// LedgerReporter hears a read of the ledger (Options.LedgerReport).
type LedgerReporter interface {
	Dropped(LedgerLine)
	Read(records int)
}

// LedgerLine is a ledger line Reconcile dropped: its position, whether it
// ended with a newline, its size, and why (ledger.Decode's error, or
// ledger.ErrLineTooLong).
type LedgerLine struct {
	Pos        events.Position
	Terminated bool
	Size       int64
	Err        error
}

// rules resolves the rule set the options name.
func (o Options) rules() Rules {
	r := o.Rules
	switch {
	case r.Name != "":
		if len(o.Guards) > 0 {
			r.Guards.Check = guards.All(append([]guards.Guard[*guards.Evidence]{r.Guards.Check}, o.Guards...)...)
		}
		return r
	case o.Reference:
		return reconcile.Qwen0244(o.Guards...)
	}
	return reconcile.Tailproof(o.Guards...)
}

// Result is one reconciliation of a session: a Decision per dangling prompt
// it considered, in admission order, and the session-level facts.
type Result struct {
	SessionID string
	// Rules names the rule set that decided ("tailproof", "qwen-0.24.4").
	Rules  string
	DryRun bool
	// Dangling are the ledger's prompts left in_flight, in admission order.
	Dangling  []string
	Decisions []Decision
	// Trace lists, in order, the folds and transitions that led here, the
	// session's and then each decision's.
	Trace []string
}

// Appended returns the decisions that appended a terminal (with DryRun:
// that would have), in admission order.
func (r Result) Appended() []Decision {
	var out []Decision
	for _, d := range r.Decisions {
		if d.Appended != nil {
			out = append(out, d)
		}
	}
	return out
}

// ErrUnreadableLedger classifies a ledger that could not be read; nothing is
// appended.
var ErrUnreadableLedger = errors.New("ledger unreadable")

// Reconcile decides, for the prompts left in_flight in sessionID's ledger,
// whether each completed, was interrupted or cannot be known, and appends a
// terminal only where the evidence proves it. Running it twice appends
// nothing the second time: the first terminal settles the prompt.
//
// The decision is the pure core's (machines/reconcile); Reconcile only reads
// the ledger once and the transcript's active chain once (index and walk),
// checks the ledger's size as the fence, stamps the clock and appends.
//
// An unknown verdict is not an error. Errors are returned only for a ledger
// that cannot be read or an append that failed; nothing more is appended then.
func Reconcile(ctx context.Context, store adapters.Store, sessionID string, opts Options) (Result, error) {
	res := Result{SessionID: sessionID, DryRun: opts.DryRun}
	if opts.Now == nil {
		return res, errors.New("tailproof: Options.Now is required (the core reads no clock)")
	}
	rules := opts.rules()
	res.Rules = rules.Name
	in := reconcile.Input{Rules: rules, NoTrace: opts.NoTrace}
	if ws, ok := store.(adapters.WorkspaceStore); ok {
		in.Workspace = ws.Workspace()
	}
	// The first fold keeps old prompts as fingerprints (ADR 0039); when it
	// cannot prove its answers — an old prompt named again, or a shared
	// fingerprint — the ledger is folded again exactly: a fingerprint can
	// cost a second read, never a verdict.
	core := reconcile.NewCompact(in)
	feed := feedLedger
	if opts.Memo != nil {
		feed = opts.Memo.ledger.feed
	} else if opts.LedgerReport != nil {
		feed = reportingFeed(opts.LedgerReport)
	}
	if err := feed(ctx, store, sessionID, core, nil); err != nil {
		return res, fmt.Errorf("tailproof: %w", err)
	}
	if !core.LedgerExact() {
		core = reconcile.New(in)
		if opts.Memo == nil {
			feed = feedLedger // reported once already
		}
		if err := feed(ctx, store, sessionID, core, nil); err != nil {
			return res, fmt.Errorf("tailproof: %w", err)
		}
	}
	res.Dangling = core.Dangling()
	if core.NeedsTranscript() {
		feedTranscript(ctx, store, sessionID, opts.MaxLineBytes, opts.Memo, core)
	}
	rd := core.Ready()
	if rd.NeedFence {
		rd = core.Commit(ledgerSize(ctx, store, sessionID))
	}
	res.Decisions = rd.Decisions
	res.Trace = append(res.Trace, rd.Trace...)
	err := appendTerminals(ctx, store, sessionID, opts, core, res.Decisions)
	for _, d := range res.Decisions {
		res.Trace = append(res.Trace, d.Trace...)
	}
	return res, err
}

// feedLedger reads the ledger once into the core, counting its bytes for
// the fence, and hands each record to also (when set). Its error is
// classified ErrUnreadableLedger and keeps its cause.
func feedLedger(ctx context.Context, store adapters.LedgerStore, sid string, core *reconcile.Core, also func(ledger.Record)) error {
	_, err := feedLedgerLines(ctx, store, sid, core, also, nil)
	return err
}

// reportingFeed is feedLedger that tells rep what it read
// (Options.LedgerReport).
func reportingFeed(rep LedgerReporter) func(context.Context, adapters.LedgerStore, string, *reconcile.Core, func(ledger.Record)) error {
	return func(ctx context.Context, store adapters.LedgerStore, sid string, core *reconcile.Core, also func(ledger.Record)) error {
		bad := func(l events.Line, err error) {
			rep.Dropped(LedgerLine{Pos: l.Pos, Terminated: l.Terminated, Size: l.Size, Err: err})
		}
		n, err := feedLedgerLines(ctx, store, sid, core, also, bad)
		if err != nil {
			return err
		}
		rep.Read(n)
		return nil
	}
}

func feedLedgerLines(ctx context.Context, store adapters.LedgerStore, sid string, core *reconcile.Core, also func(ledger.Record), bad func(events.Line, error)) (int, error) {
	rc, err := store.OpenLedger(ctx, sid)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnreadableLedger, err)
	}
	defer rc.Close()
	var size byteCount
	add := core.AddLedger
	if also != nil {
		add = func(r ledger.Record) { core.AddLedger(r); also(r) }
	}
	n, dropped, err := ledger.ReadEachLine(io.TeeReader(rc, &size), false, add, bad)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnreadableLedger, err)
	}
	core.EndLedger(n, dropped, int64(size))
	return n, nil
}

// walkTranscript is the one way the façade reads a transcript (Reconcile
// and Status both call it): qwen.Scan folds a linear chain into the core
// while indexing it, in one pass; for a branched, gapped or conflicting chain
// it restarts the core's feed (StartChain) and walks the active chain after
// the index. loadErr: the chain could not be indexed; walkErr: the walk
// failed.
func walkTranscript(ctx context.Context, store adapters.TranscriptStore, sid string, opts qwen.LoadOptions, core chainFeed) (chain *qwen.Chain, loadErr, walkErr error) {
	open := func() (io.ReadCloser, error) { return store.OpenTranscript(ctx, sid) }
	core.StartChain()
	chain, err := qwen.Scan(open, opts, func(_ int, e events.Event) error { return core.AddChainEvent(e) }, core.StartChain)
	if chain == nil {
		return nil, err, nil
	}
	return chain, nil, err
}

// chainFeed is what walkTranscript feeds: a reconcile.Core, or Status's
// core with its last-prompt watch beside it.
type chainFeed interface {
	StartChain()
	AddChainEvent(events.Event) error
}

// feedTranscript walks the transcript into the core for a reconciliation:
// a transcript that cannot be indexed is evidence (missing or unreadable),
// not an error.
//
// The first walk counts the api history's old ids by fingerprints (a few
// bytes an id: what keeps 1 GiB of short turns near the memory bound, ADR
// 0030); when the fold cannot prove an answer from them — an id that
// occurred long before, or a shared fingerprint — the chain is walked again
// with the exact fold, so a fingerprint can cost time, never a verdict.
func feedTranscript(ctx context.Context, store adapters.TranscriptStore, sid string, maxLine int, memo *TranscriptMemo, core *reconcile.Core) {
	opts := qwen.LoadOptions{MaxLineBytes: maxLine}
	walk := walkTranscript
	if memo != nil {
		walk = memo.walk
	}
	core.Fingerprints(true)
	chain, lerr, werr := walk(ctx, store, sid, opts, core)
	if lerr == nil && !core.WalkExact() {
		core.Fingerprints(false)
		chain, lerr, werr = walk(ctx, store, sid, opts, core)
	}
	if lerr != nil {
		if errors.Is(lerr, adapters.ErrNotFound) && noArchive(ctx, store, sid) {
			core.TranscriptNeverCreated()
			core.EndChain(&qwen.Chain{}, nil)
			return
		}
		core.ChainUnavailable(lerr, errors.Is(lerr, adapters.ErrNotFound))
		return
	}
	if werr == nil {
		noteEmpty(ctx, store, sid, chain, core)
	}
	core.EndChain(chain, werr)
}

// noteEmpty tells the core when the transcript exists and holds no byte of
// a record. Evidence only where the store can also say no archived copy
// exists (ADR 0023, 2026-12-01 "An empty transcript"). Reconcile and Status
// both call it, so they decide alike.
func noteEmpty(ctx context.Context, store adapters.TranscriptStore, sid string, chain *qwen.Chain, core *reconcile.Core) {
	if chain.Objects != 0 || len(chain.BadLines) != 0 {
		return
	}
	if noArchive(ctx, store, sid) {
		core.TranscriptEmpty()
	}
}

// noArchive reports that the store can tell, and tells, that no archived
// copy of the session's transcript exists.
func noArchive(ctx context.Context, store adapters.TranscriptStore, sid string) bool {
	as, ok := store.(adapters.ArchiveStore)
	if !ok {
		return false
	}
	archived, err := as.HasArchivedTranscript(ctx, sid)
	return err == nil && !archived
}

// ledgerSizer is a store that can tell its ledger's size without reading it
// (jsonl.QwenStore and the memory store do).
type ledgerSizer interface {
	StatLedger(ctx context.Context, sessionID string) (fs.FileInfo, error)
}

// ledgerSize measures the fence: the ledger's size now, by stat when the
// store can, otherwise by counting its bytes (no decode).
func ledgerSize(ctx context.Context, store adapters.LedgerStore, sid string) (int64, error) {
	if s, ok := store.(ledgerSizer); ok {
		fi, err := s.StatLedger(ctx, sid)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, nil
		case err != nil:
			return 0, err
		}
		return fi.Size(), nil
	}
	rc, err := store.OpenLedger(ctx, sid)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}

// appendTerminals stamps the clock once and appends each proven terminal in
// admission order (with DryRun: records what would be appended). The clock
// is checked against every terminal first (ErrInvalidClock: nothing is
// appended, every Appended cleared). It stops at the first failed append;
// that decision's Appended, and every later one's, is cleared.
func appendTerminals(ctx context.Context, store adapters.LedgerStore, sid string, opts Options, admitted admissions, ds []Decision) error {
	stamped := false
	var now int64
	for i := range ds {
		if ds[i].Appended == nil {
			continue
		}
		if !stamped {
			now, stamped = opts.Now(), true
		}
		if err := checkClock(admitted, now, ds[i].Target); err != nil {
			for j := range ds {
				ds[j].Appended, ds[j].Line = nil, nil
			}
			return err
		}
	}
	for i := range ds {
		d := &ds[i]
		if d.Appended == nil {
			continue
		}
		rec := *d.Appended
		rec.At = now
		d.Appended, d.Line = &rec, ledger.Encode(rec)
		if opts.DryRun {
			if !opts.NoTrace {
				d.Trace = append(d.Trace, fmt.Sprintf("dry run: would append %s", d.Line))
			}
			continue
		}
		if err := store.AppendLedger(ctx, sid, d.Line); err != nil {
			d.Appended, d.Line = nil, nil
			for j := i + 1; j < len(ds); j++ {
				ds[j].Appended, ds[j].Line = nil, nil
			}
			return fmt.Errorf("tailproof: append terminal for %s: %w", d.Target, err)
		}
		if !opts.NoTrace {
			d.Trace = append(d.Trace, fmt.Sprintf("appended %s", d.Line))
		}
	}
	return nil
}

// byteCount counts the bytes written to it: the ledger's size as read.
type byteCount int64

func (c *byteCount) Write(p []byte) (int, error) {
	*c += byteCount(len(p))
	return len(p), nil
}

// RecentTerminalsTailBytes is the reference's RECENT_TERMINALS_TAIL_BYTES.
const RecentTerminalsTailBytes = 256 << 10

// RecentTerminals returns the last 64 terminal records, read from the
// ledger's last 256 KiB exactly as the reference's load response does (the
// window's first line is always dropped). A missing ledger yields none.
func RecentTerminals(ctx context.Context, store adapters.LedgerStore, sessionID string) ([]ledger.Record, error) {
	rc, windowed, err := store.OpenLedgerTail(ctx, sessionID, RecentTerminalsTailBytes)
	if err != nil {
		return nil, fmt.Errorf("tailproof: %w: %w", ErrUnreadableLedger, err)
	}
	defer rc.Close()
	v := ledgerview.New()
	if _, _, err := ledger.ReadEach(rc, windowed, v.Add); err != nil {
		return nil, fmt.Errorf("tailproof: %w: %w", ErrUnreadableLedger, err)
	}
	return v.RecentTerminals(), nil
}
