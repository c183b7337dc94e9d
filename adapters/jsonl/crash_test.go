package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
)

const crashSID = "5f0c7d8e-1111-4222-8333-944455556666"

var bg = context.Background()

func rec(i int) ledger.Record { return ledger.InFlight(fmt.Sprintf("p%03d", i), int64(1000+i), "") }

// verifyLedger reads the durable ledger after a reboot and checks the crash
// contract: every acknowledged record is there, at most one line (a torn
// fragment) is unreadable, and a fresh append lands as its own record.
func verifyLedger(t *testing.T, s *jsonl.QwenStore, acked []string, note string) {
	t.Helper()
	read := func() []ledger.Record {
		rc, err := s.OpenLedger(bg, crashSID)
		if err != nil {
			t.Fatalf("%s: open after crash: %v", note, err)
		}
		defer rc.Close()
		recs, dropped, err := ledger.Read(rc, false)
		if err != nil {
			t.Fatalf("%s: read after crash: %v", note, err)
		}
		if dropped > 1 {
			t.Fatalf("%s: %d unreadable lines after one crash", note, dropped)
		}
		return recs
	}
	present := map[string]bool{}
	for _, r := range read() {
		present[r.PromptID] = true
	}
	for _, id := range acked {
		if !present[id] {
			t.Fatalf("%s: acknowledged record %s lost", note, id)
		}
	}
	next := ledger.Terminal("after-crash", ledger.Completed, "", "", 9)
	if err := s.AppendLedger(bg, crashSID, ledger.Encode(next)); err != nil {
		t.Fatalf("%s: append after crash: %v", note, err)
	}
	recs := read()
	if last := recs[len(recs)-1]; last.PromptID != "after-crash" {
		t.Fatalf("%s: the append after the crash fused with the fragment (last record %s)", note, last.PromptID)
	}
}

// TestCrashAtEveryTornOffsetOfLastRecord tears the last record at every byte
// (the write reached the disk only up to k bytes when power failed) and
// checks that loading, durability and the next append all hold.
func TestCrashAtEveryTornOffsetOfLastRecord(t *testing.T) {
	line := append(ledger.Encode(rec(3)), '\n')
	for k := 0; k <= len(line); k++ {
		m := memory.NewFS()
		s := memory.NewQwenStoreOn(m, memory.DefaultQwenLayout)
		var acked []string
		for i := range 3 {
			if err := s.AppendLedger(bg, crashSID, ledger.Encode(rec(i))); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, rec(i).PromptID)
		}
		// The last append's write lands in the page cache; power fails at its fsync.
		m.Inject(memory.Fault{Op: memory.OpSync, Crash: true})
		if err := s.AppendLedger(bg, crashSID, ledger.Encode(rec(3))); err == nil {
			t.Fatal("append acknowledged although its fsync crashed")
		}
		m.CrashKeeping(func(_ string, unsynced []byte) int {
			if !bytes.Equal(unsynced, line) {
				t.Fatalf("unsynced bytes %q, want exactly the last record", unsynced)
			}
			return k
		})
		got, _ := m.ReadFile(ledgerPath(t, memory.DefaultQwenLayout))
		if !bytes.HasSuffix(got, line[:k]) {
			t.Fatalf("k=%d: file does not end in the torn prefix", k)
		}
		verifyLedger(t, memory.NewQwenStoreOn(m, memory.DefaultQwenLayout).QwenStore, acked, fmt.Sprintf("torn at %d/%d", k, len(line)))
	}
}

// TestCrashAtEveryTornOffsetOnOSFiles does the same on real files: the
// fragment is put there by hand, as a kill -9 mid-write leaves it.
func TestCrashAtEveryTornOffsetOnOSFiles(t *testing.T) {
	layout := jsonl.NewQwenLayout(t.TempDir(), "/work/project")
	path := ledgerPath(t, layout)
	var base []byte
	var acked []string
	for i := range 3 {
		base = append(append(base, ledger.Encode(rec(i))...), '\n')
		acked = append(acked, rec(i).PromptID)
	}
	line := append(ledger.Encode(rec(3)), '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	for k := 0; k <= len(line); k++ {
		if err := os.WriteFile(path, append(bytes.Clone(base), line[:k]...), 0o600); err != nil {
			t.Fatal(err)
		}
		verifyLedger(t, jsonl.NewQwenStore(vfs.OS, layout), acked, fmt.Sprintf("torn at %d/%d", k, len(line)))
	}
}

func ledgerPath(t *testing.T, l jsonl.QwenLayout) string {
	t.Helper()
	p, err := l.LedgerPath(crashSID, jsonl.Active)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// appendUntilError appends n records from a fresh process (store) and
// returns the ids acknowledged before the first failure.
func appendUntilError(s *jsonl.QwenStore, n int) []string {
	var acked []string
	for i := range n {
		if err := s.AppendLedger(bg, crashSID, ledger.Encode(rec(i))); err != nil {
			return acked
		}
		acked = append(acked, rec(i).PromptID)
	}
	return acked
}

// TestCrashAtEveryOperation crashes the very first appends of a session —
// directory creation included — at every filesystem operation they perform,
// reboots, and checks that nothing acknowledged was lost. Lost-unsynced and
// kept-unsynced reboots are both tried, so an append that relied on an
// unsynced directory entry or on unsynced bytes is caught.
func TestCrashAtEveryOperation(t *testing.T) {
	const n = 4
	probe := memory.NewFS()
	if got := appendUntilError(memory.NewQwenStoreOn(probe, memory.DefaultQwenLayout).QwenStore, n); len(got) != n {
		t.Fatalf("clean run acknowledged %d of %d", len(got), n)
	}
	ops := []memory.Op{memory.OpOpen, memory.OpWrite, memory.OpSync, memory.OpSyncDir, memory.OpMkdir,
		memory.OpLock, memory.OpStat, memory.OpRead}
	points := 0
	for _, op := range ops {
		for nth := 1; nth <= probe.Count(op); nth++ {
			for _, keepAll := range []bool{false, true} {
				m := memory.NewFS()
				m.Inject(memory.Fault{Op: op, Nth: nth, Crash: true})
				acked := appendUntilError(memory.NewQwenStoreOn(m, memory.DefaultQwenLayout).QwenStore, n)
				if !m.Halted() {
					t.Fatalf("crash point %s#%d never reached", op, nth)
				}
				if keepAll {
					m.CrashKeeping(func(_ string, u []byte) int { return len(u) })
				} else {
					m.Crash()
				}
				verifyLedger(t, memory.NewQwenStoreOn(m, memory.DefaultQwenLayout).QwenStore, acked,
					fmt.Sprintf("crash at %s#%d keepUnsynced=%v", op, nth, keepAll))
				points++
			}
		}
	}
	t.Logf("%d crash points verified", points)
}

// TestInjectedIOErrors: a failed write or fsync is reported, never
// acknowledged; the torn bytes a failed write leaves are sealed off by the
// next append.
func TestInjectedIOErrors(t *testing.T) {
	for _, f := range []memory.Fault{
		{Op: memory.OpWrite, Torn: 10},
		{Op: memory.OpWrite},
		{Op: memory.OpSync},
		{Op: memory.OpSyncDir},
		{Op: memory.OpOpen},
		{Op: memory.OpLock},
		{Op: memory.OpMkdir},
	} {
		t.Run(fmt.Sprintf("%s-torn%d", f.Op, f.Torn), func(t *testing.T) {
			s := memory.NewQwenStore()
			s.Mem().Inject(f)
			err := s.AppendLedger(bg, crashSID, ledger.Encode(rec(0)))
			if !errors.Is(err, memory.ErrInjected) {
				t.Fatalf("append with an injected %s fault = %v", f.Op, err)
			}
			if err := s.AppendLedger(bg, crashSID, ledger.Encode(rec(1))); err != nil {
				t.Fatal(err)
			}
			rc, _ := s.OpenLedger(bg, crashSID)
			recs, _, _ := ledger.Read(rc, false)
			rc.Close()
			if len(recs) == 0 || recs[len(recs)-1].PromptID != rec(1).PromptID {
				t.Fatalf("after recovery: %v", recs)
			}
			// The append that succeeded is durable, whatever the failed one left.
			s.Mem().Crash()
			verifyLedger(t, memory.NewQwenStoreOn(s.Mem(), memory.DefaultQwenLayout).QwenStore, []string{rec(1).PromptID}, "after I/O error")
		})
	}
}
