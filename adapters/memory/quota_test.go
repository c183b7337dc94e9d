package memory_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof/adapters/memory"
)

func TestQuotaShortWritesAndGivesBackOnTruncate(t *testing.T) {
	q := memory.NewQuota(memory.NewFS(), 10)
	if _, err := q.OpenFile("/d/f", os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
		t.Fatal("opened a file in a missing directory")
	}
	if err := q.MkdirAll("/d", 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := q.OpenFile("/d/f", os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("0123456")); n != 7 || err != nil {
		t.Fatalf("write within the quota: %d %v", n, err)
	}
	if n, err := f.Write([]byte("789abc")); n != 3 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past the quota: %d %v, want 3 and ENOSPC", n, err)
	}
	if n, err := f.Write([]byte("x")); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %d %v", n, err)
	}
	if err := f.Truncate(4); err != nil || q.Free() != 6 {
		t.Fatalf("truncate: %v, free %d", err, q.Free())
	}
	if err := f.Truncate(20); !errors.Is(err, syscall.ENOSPC) || q.Free() != 6 {
		t.Fatalf("growing past the quota: %v, free %d", err, q.Free())
	}
	// Overwriting in place needs no space.
	g, _ := q.OpenFile("/d/f", os.O_RDWR, 0)
	q.SetFree(0)
	if n, err := g.Write([]byte("ABCD")); n != 4 || err != nil {
		t.Fatalf("overwrite on a full disk: %d %v", n, err)
	}
	if n, err := g.Write([]byte("E")); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("growing by overwrite on a full disk: %d %v", n, err)
	}
	// A fault in the FS below gives the unused space back.
	q.SetFree(5)
	q.Inject(memory.Fault{Op: memory.OpWrite, Torn: 2})
	if n, err := f.Write([]byte("wxyz")); n != 2 || !errors.Is(err, memory.ErrInjected) || q.Free() != 3 {
		t.Fatalf("faulted write: %d %v, free %d", n, err, q.Free())
	}
	if b, _ := q.ReadFile("/d/f"); string(b) != "ABCDwx" {
		t.Fatalf("file holds %q", b)
	}
}
