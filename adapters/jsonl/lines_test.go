package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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

// TestAppendLedgerSeqInChunks: a round larger than one write's chunk is
// written in several writes of whole lines under one lock and one fsync;
// an I/O error at the second write, after the first landed, cuts the whole
// round back, and the next round appends as if nothing happened.
func TestAppendLedgerSeqInChunks(t *testing.T) {
	var lines [][]byte
	for i := range 5000 {
		lines = append(lines, fmt.Appendf(nil, `{"v":1,"promptId":"t%d","terminal":"completed","at":1}`, i))
	}
	want := append(bytes.Join(lines, []byte("\n")), '\n')
	const path = "/d/s.tailproof-ledger"
	m := memory.NewFS()
	s := jsonl.NewFilesStore(m, path, "")
	writes := m.Count(memory.OpWrite)
	if err := s.AppendLedgerSeq(bg, slices.Values(lines)); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("ledger holds %d bytes, want %d", len(got), len(want))
	}
	if n := m.Count(memory.OpWrite) - writes; n < 2 {
		t.Fatalf("%d bytes in %d write(s): not chunked", len(want), n)
	}

	m = memory.NewFS()
	s = jsonl.NewFilesStore(m, path, "")
	m.Inject(memory.Fault{Op: memory.OpWrite, Path: path, Nth: 2, Torn: 7})
	if err := s.AppendLedgerSeq(bg, slices.Values(lines)); !errors.Is(err, jsonl.ErrNotAppended) || !errors.Is(err, memory.ErrInjected) {
		t.Fatalf("second write failed: %v", err)
	}
	if got, _ := m.ReadFile(path); len(got) != 0 {
		t.Fatalf("the failed round left %d bytes", len(got))
	}
	if err := s.AppendLedgerSeq(bg, slices.Values(lines[:2])); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.ReadFile(path); !bytes.Equal(got, want[:len(lines[0])+len(lines[1])+2]) {
		t.Fatalf("after the failure: %q", got)
	}
}
