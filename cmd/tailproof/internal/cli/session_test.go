package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNamedTellsAStreamFromAMissingFile: a named input that is no file
// at all — standard input ("-"), or a link to a pipe as `<(cmd)` passes it
// (/dev/fd/N → "pipe:[N]") — is refused with what it is and what to do,
// not as a file that does not exist; a file that is truly missing still reads
// "does not exist".
func TestCheckNamedTellsAStreamFromAMissingFile(t *testing.T) {
	dir := t.TempDir()
	pipeLink := filepath.Join(dir, "fd")
	if err := os.Symlink("pipe:[4242]", pipeLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"-", "--transcript -: standard input cannot be read"},
		{pipeLink, `is a symbolic link to "pipe:[4242]", which is not a regular file`},
		{filepath.Join(dir, "missing.jsonl"), "missing.jsonl does not exist"},
	} {
		fsys, err := Within(c.path)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckNamed(fsys, "--transcript", c.path)
		fsys.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckNamed(%q) = %v, want an error containing %q", c.path, err, c.want)
		}
		if err != nil && Code(err, -1) != Input {
			t.Errorf("CheckNamed(%q): exit %d, want %d (input)", c.path, Code(err, -1), Input)
		}
	}
}

// A session opened with a transcript and no ledger reads an empty ledger
// and refuses every append: no ledger file is invented beside the
// transcript (or anywhere else), whatever a caller asks.
func TestOpenFilesWithoutLedger(t *testing.T) {
	dir := t.TempDir()
	tp := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(tp, []byte(`{"uuid":"u1"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFiles("", tp)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	rc, err := s.OpenLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); len(b) != 0 {
		t.Fatalf("ledger reads %q", b)
	}
	rc.Close()
	if err := s.Store.AppendLedger(ctx, "", []byte(`{"v":1}`)); !errors.Is(err, ErrNoLedger) || Code(err, 0) != Write {
		t.Fatalf("append: %v (code %d), want ErrNoLedger, exit %d", err, Code(err, 0), Write)
	}
	if s.Ledger.Present || s.Ledger.Note != NoLedgerNote {
		t.Fatalf("ledger report %+v", s.Ledger)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Fatalf("the directory holds %d entries, want the transcript alone", len(ents))
	}
}
