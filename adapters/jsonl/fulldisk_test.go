package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/adapters/vfs/vfstest"
)

// TestAppendOnARealFullDisk is TestAppendOnAFullDiskAtEveryByte on a real
// kernel: a tmpfs filled so that exactly k bytes of the append fit in the
// ledger's last page, for every k. The kernel's short write (k bytes, then
// ENOSPC) is rolled back, and the append lands once space is freed.
func TestAppendOnARealFullDisk(t *testing.T) {
	disk := vfstest.SmallDisk(t, 64<<10)
	path := filepath.Join(disk, crashSID+".ledger.jsonl")
	line := terminalLine
	for k := range len(line) + 1 {
		// A ledger of valid records whose last page has exactly k bytes left.
		size := 4096 - k
		rec := func(id string) string { return `{"v":1,"promptId":"` + id + `","state":"in_flight","at":1}` + "\n" }
		var b strings.Builder
		for b.Len()+2*len(rec("p000")) < size {
			b.WriteString(rec(fmt.Sprintf("p%03d", b.Len()/len(rec("p000")))))
		}
		b.WriteString(rec(strings.Repeat("x", size-b.Len()-len(rec("")))))
		before := []byte(b.String())
		if err := os.WriteFile(path, before, 0o600); err != nil {
			t.Fatal(err)
		}
		if vfstest.PageRoom(int64(len(before))) != int64(k)%4096 {
			t.Fatalf("ledger of %d bytes leaves %d in its page, want %d", len(before), vfstest.PageRoom(int64(len(before))), k)
		}
		store := jsonl.NewFilesStore(vfs.OS, path, filepath.Join(disk, "t.jsonl"))
		// The lock file needs no page; take it before the disk fills.
		if err := os.WriteFile(strings.TrimSuffix(path, ".jsonl")+".lock", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		release := vfstest.Fill(t, disk)
		err := store.AppendLedger(bg, "", line)
		if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, jsonl.ErrNotAppended) {
			t.Fatalf("k=%d: append on a full disk = %v", k, err)
		}
		// The kernel wrote exactly the k bytes that fit, then failed.
		says := fmt.Sprintf("cut back to %d bytes", len(before))
		if k == 0 {
			says = "nothing was written"
		}
		if !strings.Contains(err.Error(), says) {
			t.Fatalf("k=%d: %v, want it to say %q", k, err, says)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
			t.Fatalf("k=%d: the ledger changed: %d bytes, was %d", k, len(got), len(before))
		}
		release()
		if err := store.AppendLedger(bg, "", line); err != nil {
			t.Fatalf("k=%d: append once space is back: %v", k, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, append(append(before, line...), '\n')) {
			t.Fatalf("k=%d: after the retry the ledger ends %q", k, got[len(before):])
		}
	}
}
