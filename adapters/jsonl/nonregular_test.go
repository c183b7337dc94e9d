//go:build unix

package jsonl_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// A FIFO blocks an open for reading until a writer comes and /dev/zero never
// ends; a directory is no ledger. Every store entry point refuses them
// before reading or writing a byte, and promptly.
func TestStoresRefuseWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.ledger.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", dir} {
		s := jsonl.NewFilesStore(vfs.OS, p, p)
		for name, call := range map[string]func() error{
			"OpenLedger": func() error { rc, err := s.OpenLedger(bg, ""); closeIf(rc); return err },
			"OpenLedgerTail": func() error {
				rc, _, err := s.OpenLedgerTail(bg, "", 1<<10)
				closeIf(rc)
				return err
			},
			"OpenTranscript": func() error { rc, err := s.OpenTranscript(bg, ""); closeIf(rc); return err },
			"AppendLedger":   func() error { return s.AppendLedger(bg, "", terminalLine) },
		} {
			done := make(chan error, 1)
			go func() { done <- call() }()
			select {
			case err := <-done:
				if !errors.Is(err, vfs.ErrNotRegular) {
					t.Errorf("%s on %s: %v, want vfs.ErrNotRegular", name, p, err)
				}
				if name == "AppendLedger" && !errors.Is(err, jsonl.ErrNotAppended) {
					t.Errorf("AppendLedger on %s: %v, want ErrNotAppended too", p, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s on %s blocked", name, p)
			}
		}
		if id, ok := s.TranscriptTailUUID(bg, ""); ok {
			t.Errorf("TranscriptTailUUID on %s = %q", p, id)
		}
	}
	if st, _ := os.Stat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatal("the FIFO was replaced")
	}
}

func closeIf(c io.Closer) {
	if c != nil {
		c.Close()
	}
}
