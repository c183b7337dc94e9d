package tailproof

import (
	"bytes"
	"context"
	"io"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// TranscriptMemo remembers what reading a transcript gave — the events
// qwen.Scan handed the core, in order, with its restarts, and the Chain and
// errors it returned — for the last few transcripts, by their exact bytes.
// A Reconcile given one (Options.Memo) reads the transcript's bytes, and when
// they are those of a remembered transcript it feeds the core the
// remembered events instead of decoding them again: the core sees exactly
// what a fresh Scan of the same bytes would hand it, so every decision is
// the same. It is for callers that reconcile the same small transcript many
// times over — the simulator decides every crash point of a run under both
// rule sets, and most of those transcripts are byte-identical to one it has
// just read.
//
// The memo reads the whole transcript into memory (only up to
// MemoMaxBytes; a longer one is read as without a memo, streaming), and a
// Scan that falls back to a second pass reads those bytes again rather than
// reopening the file: it suits a transcript nothing writes while it is
// reconciled (a crashed session's). The remembered records are shared by
// every core fed from them; nothing in the core writes a record. Not safe
// for concurrent use: one memo per goroutine.
type TranscriptMemo struct {
	entries []memoEntry // most recently used first
	max     int
	buf     []byte // scratch: the bytes read for a lookup
	reads   int    // walks that read the bytes (tests)
	hits    int    // of them, walks fed from memory (tests)
	// ledger remembers the last ledger's records for Reconcile's ledger
	// read (see ledgerMemo).
	ledger ledgerMemo
}

// MemoMaxBytes bounds the transcripts a TranscriptMemo remembers.
const MemoMaxBytes = 1 << 20

type memoEntry struct {
	data    []byte
	maxLine int
	ops     []memoOp
	chain   *qwen.Chain
	loadErr error
	walkErr error
}

// memoOp is one call Scan made into the core: an event, or a restart.
type memoOp struct {
	restart bool
	e       events.Event
}

// NewTranscriptMemo returns a memo that keeps the last n transcripts (n < 1: 1).
func NewTranscriptMemo(n int) *TranscriptMemo { return &TranscriptMemo{max: max(n, 1)} }

// walk is walkTranscript through the memo.
func (m *TranscriptMemo) walk(ctx context.Context, store adapters.TranscriptStore, sid string, opts qwen.LoadOptions, core chainFeed) (*qwen.Chain, error, error) {
	rc, err := store.OpenTranscript(ctx, sid)
	if err != nil {
		return walkTranscript(ctx, store, sid, opts, core) // the same error, as ever
	}
	m.buf, err = readAll(m.buf[:0], rc)
	rc.Close()
	if err != nil || len(m.buf) > MemoMaxBytes {
		return walkTranscript(ctx, store, sid, opts, core)
	}
	m.reads++
	for i := range m.entries {
		e := &m.entries[i]
		if e.maxLine != opts.MaxLineBytes || !bytes.Equal(e.data, m.buf) {
			continue
		}
		if m.replay(e, core) {
			m.hits++
			hit := *e
			copy(m.entries[1:i+1], m.entries[:i])
			m.entries[0] = hit
			return hit.chain, hit.loadErr, hit.walkErr
		}
		// The core refused a remembered event (it never has: the events
		// are what it accepted before). Read the bytes afresh.
		break
	}
	// The new entry takes the bytes read; when the memo is full, the entry
	// it evicts gives its arrays back for the next read and the new walk.
	data := m.buf
	e := memoEntry{data: data, maxLine: opts.MaxLineBytes}
	m.buf = nil
	if len(m.entries) == m.max {
		old := &m.entries[len(m.entries)-1]
		m.buf, e.ops = old.data[:0], old.ops[:0]
		*old = memoEntry{}
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	visitFailed := false
	core.StartChain()
	chain, err := qwen.Scan(open, opts, func(_ int, ev events.Event) error {
		e.ops = append(e.ops, memoOp{e: ev})
		err := core.AddChainEvent(ev)
		if err != nil {
			visitFailed = true
		}
		return err
	}, func() {
		e.ops = append(e.ops, memoOp{restart: true})
		core.StartChain()
	})
	if chain == nil {
		e.loadErr = err
	} else {
		e.chain, e.walkErr = chain, err
	}
	if visitFailed {
		// Not remembered: its walk stopped at the core's refusal. The last
		// entry, if it gave its arrays up, goes with it.
		if len(m.entries) == m.max {
			m.entries = m.entries[:len(m.entries)-1]
		}
		return e.chain, e.loadErr, e.walkErr
	}
	if len(m.entries) < m.max {
		m.entries = append(m.entries, memoEntry{})
	}
	copy(m.entries[1:], m.entries[:len(m.entries)-1])
	m.entries[0] = e
	return e.chain, e.loadErr, e.walkErr
}

// replay feeds the core a remembered walk, as walkTranscript would have;
// false when the core refused an event (it is then restarted).
func (m *TranscriptMemo) replay(e *memoEntry, core chainFeed) bool {
	core.StartChain()
	for i := range e.ops {
		op := &e.ops[i]
		if op.restart {
			core.StartChain()
			continue
		}
		if err := core.AddChainEvent(op.e); err != nil {
			core.StartChain()
			return false
		}
	}
	return true
}

// readAll appends everything r yields to buf, stopping once past
// MemoMaxBytes (the caller then reads without a memo).
func readAll(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil || len(buf) > MemoMaxBytes {
			return buf, err
		}
	}
}
