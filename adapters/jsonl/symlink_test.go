//go:build unix

package jsonl_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// On a vfs.Rooted FS a Qwen store reads and writes only inside the runtime
// directory: a chats directory, a transcript or a ledger that is a link out
// of it is refused, and nothing outside is created or changed.
func TestQwenStoreStaysInsideTheRuntimeDirectory(t *testing.T) {
	base := t.TempDir()
	runtime, outside := filepath.Join(base, "qwen"), filepath.Join(base, "elsewhere")
	layout := jsonl.NewQwenLayout(runtime, "/work/project")
	chats := layout.ChatsDir(jsonl.Active)
	for _, d := range []string{filepath.Dir(chats), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "victim.jsonl")
	if err := os.WriteFile(secret, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys, err := vfs.Within(runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	store := jsonl.NewQwenStore(fsys, layout)

	// chats -> outside: every session file would be outside.
	if err := os.Symlink(outside, chats); err != nil {
		t.Fatal(err)
	}
	if err := store.AppendLedger(bg, crashSID, terminalLine); !errors.Is(err, vfs.ErrOutsideRoot) || !errors.Is(err, jsonl.ErrNotAppended) {
		t.Fatalf("append through chats -> outside: %v", err)
	}
	if _, err := store.OpenTranscript(bg, crashSID); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Fatalf("transcript through chats -> outside: %v", err)
	}

	// A real chats directory whose ledger and transcript are links out.
	if err := os.Remove(chats); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	lp, _ := layout.LedgerPath(crashSID, jsonl.Active)
	tp, _ := layout.TranscriptPath(crashSID, jsonl.Active)
	for _, p := range []string{lp, tp} {
		if err := os.Symlink(secret, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.AppendLedger(bg, crashSID, terminalLine); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Fatalf("append to a ledger linked out: %v", err)
	}
	if _, err := store.OpenLedger(bg, crashSID); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Fatalf("read a ledger linked out: %v", err)
	}
	if _, err := store.OpenTranscript(bg, crashSID); !errors.Is(err, vfs.ErrOutsideRoot) {
		t.Fatalf("read a transcript linked out: %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "not yours\n" {
		t.Fatalf("the file outside changed: %q", b)
	}
	if es, _ := os.ReadDir(outside); len(es) != 1 {
		t.Fatalf("files were created outside: %v", es)
	}
}
