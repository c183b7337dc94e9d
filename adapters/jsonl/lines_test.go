package jsonl_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
)

// TestAppendLedgerLines: several lines land in one durable write, all of
// them or — on a full disk at any byte of the batch — none, and a batch
// holding one invalid line writes nothing.
func TestAppendLedgerLines(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"v":1,"promptId":"t1","terminal":"completed","at":1}`),
		[]byte(`{"v":1,"promptId":"t2","terminal":"interrupted","code":"daemon_lost","at":1}`),
		[]byte(`{"v":1,"promptId":"t3","terminal":"interrupted","code":"daemon_lost","at":1}`),
	}
	want := append(bytes.Join(lines, []byte("\n")), '\n')
	for free := int64(0); free <= int64(len(want)); free++ {
		m := memory.NewFS()
		q := memory.NewQuota(m, free)
		s := jsonl.NewFilesStore(q, "/d/s.tailproof-ledger", "")
		err := s.AppendLedgerLines(bg, lines)
		got, _ := m.ReadFile("/d/s.tailproof-ledger")
		switch {
		case free == int64(len(want)):
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("room for the batch: %v, ledger %q", err, got)
			}
		case err == nil || !errors.Is(err, jsonl.ErrNotAppended):
			t.Fatalf("%d bytes free: %v", free, err)
		case len(got) != 0:
			t.Fatalf("%d bytes free: a failed batch left %q", free, got)
		}
	}
	m := memory.NewFS()
	s := jsonl.NewFilesStore(m, "/d/s.tailproof-ledger", "")
	bad := [][]byte{lines[0], []byte("a\nb")}
	if err := s.AppendLedgerLines(bg, bad); !errors.Is(err, jsonl.ErrInvalidLine) {
		t.Fatalf("a line holding a newline: %v", err)
	}
	if err := s.AppendLedgerLines(bg, nil); err != nil {
		t.Fatalf("no lines: %v", err)
	}
	if _, err := m.ReadFile("/d/s.tailproof-ledger"); err == nil {
		t.Fatal("a refused batch created the ledger")
	}
}
