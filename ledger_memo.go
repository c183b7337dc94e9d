package tailproof

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// ledgerMemo remembers the records the last ledger read gave, by the
// ledger's exact bytes: a TranscriptMemo carries one, so a Reconcile given
// Options.Memo reads its ledger through it. A ledger byte-identical to the
// remembered one is fed from the remembered records; a ledger whose bytes
// are the remembered ones followed by more — and the remembered bytes end
// on a line boundary ('\n', or are empty) — is fed the remembered records
// and then decodes only the new lines. ledger.ReadEach (windowed false) reads
// every line on its own, so the lines after a boundary decode exactly as
// they would in a read from the start: the core sees the same records, in
// the same order, with the same counts and size, as a plain read. The
// simulator's crash points each read a ledger that is the previous one or
// extends it by whole records.
type ledgerMemo struct {
	data    []byte // the remembered ledger's bytes
	recs    []ledger.Record
	n       int // ReadEach's counts for data
	dropped int
	valid   bool
	buf     []byte // scratch: the bytes read for a lookup
	reads   int    // reads through the memo (tests)
	hits    int    // of them, reads fed wholly from memory (tests)
	extends int    // of them, reads that decoded only new lines (tests)
}

// feed is feedLedger through the memo; it falls back to feedLedger when the
// ledger cannot be read whole or is longer than MemoMaxBytes.
func (m *ledgerMemo) feed(ctx context.Context, store adapters.LedgerStore, sid string, core *reconcile.Core, also func(ledger.Record)) error {
	rc, err := store.OpenLedger(ctx, sid)
	if err != nil {
		return feedLedger(ctx, store, sid, core, also) // the same error, as ever
	}
	m.buf, err = readAll(m.buf[:0], rc)
	rc.Close()
	if err != nil || len(m.buf) > MemoMaxBytes {
		return feedLedger(ctx, store, sid, core, also)
	}
	m.reads++
	from, kept := 0, false // the bytes taken from memory; whether any were
	if m.valid && len(m.buf) >= len(m.data) && bytes.Equal(m.buf[:len(m.data)], m.data) &&
		(len(m.buf) == len(m.data) || len(m.data) == 0 || m.data[len(m.data)-1] == '\n') {
		from, kept = len(m.data), true
	} else {
		m.valid, m.recs, m.n, m.dropped = false, m.recs[:0], 0, 0
	}
	if from < len(m.buf) {
		n, dropped, err := ledger.ReadEach(bytes.NewReader(m.buf[from:]), false, func(r ledger.Record) { m.recs = append(m.recs, r) })
		if err != nil { // a bytes.Reader does not fail; kept for the contract
			m.valid = false
			return fmt.Errorf("%w: %w", ErrUnreadableLedger, err)
		}
		m.n, m.dropped = m.n+n, m.dropped+dropped
		if kept {
			m.extends++
		}
	} else if kept {
		m.hits++
	}
	// The bytes read become the remembered ones; the old array is the next
	// read's scratch.
	m.data, m.buf, m.valid = m.buf, m.data, true
	for _, r := range m.recs {
		core.AddLedger(r)
		if also != nil {
			also(r)
		}
	}
	core.EndLedger(m.n, m.dropped, int64(len(m.data)))
	return nil
}
