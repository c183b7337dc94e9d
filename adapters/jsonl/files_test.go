package jsonl_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// FilesStore serves explicit paths with the same append discipline as
// QwenStore: a torn tail is sealed, the file is created 0600, and the lock
// file is the one a QwenStore on the same ledger takes.
func TestFilesStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lp := filepath.Join(dir, "s.ledger.jsonl")
	tp := filepath.Join(dir, "s.jsonl")
	s := jsonl.NewFilesStore(vfs.OS, lp, tp)

	if _, err := s.OpenTranscript(ctx, ""); !errors.Is(err, adapters.ErrNotFound) {
		t.Fatalf("missing transcript: %v", err)
	}
	if _, ok := s.TranscriptTailUUID(ctx, ""); ok {
		t.Fatal("marker from a missing transcript")
	}
	rc, err := s.OpenLedger(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); len(b) != 0 {
		t.Fatalf("missing ledger read %q", b)
	}
	rc.Close()

	if err := s.AppendLedger(ctx, "", []byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(lp); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "s.ledger.lock")); err != nil {
		t.Fatalf("lock file: %v", err)
	}
	f, _ := os.OpenFile(lp, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"promptId":"p1","termi`)
	f.Close()
	if err := s.AppendLedger(ctx, "", []byte(`{"v":1,"promptId":"p1","terminal":"completed","at":2}`)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(lp)
	want := `{"v":1,"promptId":"p1","state":"in_flight","at":1}` + "\n" + `{"v":1,"promptId":"p1","termi` + "\n" + `{"v":1,"promptId":"p1","terminal":"completed","at":2}` + "\n"
	if string(got) != want {
		t.Fatalf("ledger:\n%s\nwant:\n%s", got, want)
	}
	rc, windowed, err := s.OpenLedgerTail(ctx, "", 10)
	if err != nil || !windowed {
		t.Fatalf("tail: %v %v", windowed, err)
	}
	rc.Close()
	if err := s.AppendLedger(ctx, "", []byte("two\nlines")); !errors.Is(err, jsonl.ErrInvalidLine) {
		t.Fatalf("a line holding a newline: %v", err)
	}
}
