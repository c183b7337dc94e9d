package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
)

// rollbackLedgers are the ledgers an append meets: one that ends cleanly,
// and one whose last record a crash tore (the append then starts with a
// sealing newline, which a rollback must cut too).
var rollbackLedgers = map[string][]byte{
	"clean": []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1}` + "\n"),
	"torn":  []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1}` + "\n" + `{"v":1,"promptId":"p2","sta`),
}

var terminalLine = ledger.Encode(ledger.Terminal("p1", ledger.Interrupted, ledger.CodeDaemonLost, "", 1767225700000))

// checkUnchanged asserts that the ledger, in the page cache and on the
// "disk" (what a power loss now would leave), is exactly before.
func checkUnchanged(t *testing.T, m *memory.FS, path string, before []byte, note string) {
	t.Helper()
	now, err := m.ReadFile(path)
	if err != nil || !bytes.Equal(now, before) {
		t.Fatalf("%s: ledger is %q (%v), want it unchanged %q", note, now, err, before)
	}
	durable, err := m.DurableFile(path)
	if err != nil || !bytes.Equal(durable, before) {
		t.Fatalf("%s: durable ledger is %q (%v), want %q", note, durable, err, before)
	}
}

// TestAppendOnAFullDiskAtEveryByte fills the disk so that exactly k bytes of
// the append fit, for every k: the append fails with ENOSPC, is rolled back
// to the byte, and once space is freed the same append lands as if the
// failed one never happened.
func TestAppendOnAFullDiskAtEveryByte(t *testing.T) {
	for name, before := range rollbackLedgers {
		want := len(terminalLine) + 1
		if before[len(before)-1] != '\n' {
			want++ // the seal
		}
		for k := range want {
			m := memory.NewFS()
			path := ledgerPath(t, memory.DefaultQwenLayout)
			if err := m.WriteFile(path, before, 0o600); err != nil {
				t.Fatal(err)
			}
			q := memory.NewQuota(m, int64(k))
			store := jsonl.NewQwenStore(q, memory.DefaultQwenLayout)
			note := fmt.Sprintf("%s ledger, %d of %d bytes fit", name, k, want)
			err := store.AppendLedger(bg, crashSID, terminalLine)
			if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, jsonl.ErrNotAppended) {
				t.Fatalf("%s: append = %v, want ENOSPC and ErrNotAppended", note, err)
			}
			checkUnchanged(t, m, path, before, note)
			if q.Free() != int64(k) {
				t.Fatalf("%s: %d bytes free after the rollback, want the %d before it", note, q.Free(), k)
			}
			q.SetFree(int64(want))
			if err := store.AppendLedger(bg, crashSID, terminalLine); err != nil {
				t.Fatalf("%s: append once space is back: %v", note, err)
			}
			got, _ := m.DurableFile(path)
			wantFile := bytes.Clone(before)
			if before[len(before)-1] != '\n' {
				wantFile = append(wantFile, '\n')
			}
			wantFile = append(append(wantFile, terminalLine...), '\n')
			if !bytes.Equal(got, wantFile) {
				t.Fatalf("%s: after the retry the ledger is %q, want %q", note, got, wantFile)
			}
		}
	}
}

// TestAppendRollsBackEveryFailedWriteOrSync injects the disk errors a short
// write or a failed fsync gives (EIO, ENOSPC, EDQUOT) at every byte of the
// append: each is rolled back, synced and reported as not appended.
func TestAppendRollsBackEveryFailedWriteOrSync(t *testing.T) {
	for name, before := range rollbackLedgers {
		for _, errno := range []error{syscall.EIO, syscall.ENOSPC, syscall.EDQUOT} {
			faults := []memory.Fault{{Op: memory.OpSync, Err: errno}} // the append's own fsync
			for k := 0; k <= len(terminalLine)+2; k++ {
				faults = append(faults, memory.Fault{Op: memory.OpWrite, Torn: k, Err: errno})
			}
			for _, f := range faults {
				m := memory.NewFS()
				path := ledgerPath(t, memory.DefaultQwenLayout)
				if err := m.WriteFile(path, before, 0o600); err != nil {
					t.Fatal(err)
				}
				store := memory.NewQwenStoreOn(m, memory.DefaultQwenLayout)
				note := fmt.Sprintf("%s ledger, %v on %s after %d bytes", name, errno, f.Op, f.Torn)
				m.Inject(f)
				err := store.AppendLedger(bg, crashSID, terminalLine)
				if !errors.Is(err, errno) || !errors.Is(err, jsonl.ErrNotAppended) {
					t.Fatalf("%s: append = %v", note, err)
				}
				checkUnchanged(t, m, path, before, note)
				m.Crash()
				checkUnchanged(t, m, path, before, note+", after a power loss")
			}
		}
	}
}

// When the rollback itself fails, the bytes stay and the error says where;
// the next append seals them off, so no record fuses with the fragment.
func TestAppendWhoseRollbackFails(t *testing.T) {
	before := rollbackLedgers["clean"]
	for second, says := range map[memory.Op]string{
		memory.OpTruncate: "not rolled back, so 20 bytes of this append remain at offset 51",
		memory.OpSync:     "cut back to 51 bytes, but the cut was not synced, so after a power loss up to 20 bytes of this append may be at offset 51",
	} {
		m := memory.NewFS()
		path := ledgerPath(t, memory.DefaultQwenLayout)
		if err := m.WriteFile(path, before, 0o600); err != nil {
			t.Fatal(err)
		}
		store := memory.NewQwenStoreOn(m, memory.DefaultQwenLayout)
		m.Inject(memory.Fault{Op: memory.OpWrite, Torn: 20, Err: syscall.ENOSPC})
		m.Inject(memory.Fault{Op: second})
		err := store.AppendLedger(bg, crashSID, terminalLine)
		if !errors.Is(err, syscall.ENOSPC) || errors.Is(err, jsonl.ErrNotAppended) || !strings.Contains(err.Error(), says) {
			t.Fatalf("%s fails during the rollback: %v", second, err)
		}
		if err := store.AppendLedger(bg, crashSID, terminalLine); err != nil {
			t.Fatal(err)
		}
		got, _ := m.ReadFile(path)
		recs, dropped, _ := ledger.Read(bytes.NewReader(got), false)
		if dropped > 1 || len(recs) != 2 || recs[1].PromptID != "p1" || recs[1].Terminal == "" {
			t.Fatalf("%s: after the next append: %q", second, got)
		}
	}
}

// interferingFS appends a foreign line — Qwen's daemon, which takes no lock —
// right after any failed write, before the rollback looks at the file.
type interferingFS struct{ *memory.FS }

func (f interferingFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return interferingFile{file, f.FS}, nil
}

type interferingFile struct {
	vfs.File
	m *memory.FS
}

func (f interferingFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		other, oerr := f.m.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0)
		if oerr == nil {
			other.Write([]byte(`{"v":1,"promptId":"q","state":"in_flight","at":5}` + "\n"))
			other.Close()
		}
	}
	return n, err
}

// A rollback never cuts bytes another writer appended meanwhile.
func TestRollbackLeavesAForeignAppend(t *testing.T) {
	m := memory.NewFS()
	path := ledgerPath(t, memory.DefaultQwenLayout)
	before := rollbackLedgers["clean"]
	if err := m.WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}
	store := jsonl.NewQwenStore(interferingFS{m}, memory.DefaultQwenLayout)
	m.Inject(memory.Fault{Op: memory.OpWrite, Torn: 30, Err: syscall.ENOSPC})
	err := store.AppendLedger(bg, crashSID, terminalLine)
	if errors.Is(err, jsonl.ErrNotAppended) || !strings.Contains(err.Error(), "another writer appended meanwhile") {
		t.Fatalf("append = %v", err)
	}
	got, _ := m.ReadFile(path)
	if !bytes.HasSuffix(got, []byte(`"promptId":"q","state":"in_flight","at":5}`+"\n")) {
		t.Fatalf("the foreign record was cut: %q", got)
	}
}
