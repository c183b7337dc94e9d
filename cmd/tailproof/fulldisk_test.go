package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/vfs/vfstest"
)

// TestReconcileOnAFullDisk: the terminal fits only partly on a real full
// filesystem (a filled tmpfs). reconcile exits 4, says the append was rolled
// back, and the ledger is byte for byte what it was; once space is back the
// same command appends.
func TestReconcileOnAFullDisk(t *testing.T) {
	disk := vfstest.SmallDisk(t, 64<<10)
	lp, tp := filepath.Join(disk, "s.ledger.jsonl"), filepath.Join(disk, "s.jsonl")
	// JSON whitespace inside the one record pads the ledger so that its
	// last page has 40 bytes left: fewer than the 89-byte terminal needs.
	pad := strings.Repeat(" ", 4096-40-len(hostileLedger))
	record := strings.Replace(hostileLedger, "}", pad+"}", 1)
	before := []byte(record)
	if room := vfstest.PageRoom(int64(len(before))); room != 40 {
		t.Fatalf("ledger of %d bytes leaves %d bytes in its page", len(before), room)
	}
	for p, data := range map[string][]byte{lp: before, tp: []byte(cliTranscript), strings.TrimSuffix(lp, ".jsonl") + ".lock": nil} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	release := vfstest.Fill(t, disk)
	code, out, errs := runCLI(t, "reconcile", "--ledger", lp, "--transcript", tp, "--now", "1767225700000")
	if code != 4 || out != "" || !strings.Contains(errs, "no space left on device") || !strings.Contains(errs, "not appended: the ledger is as it was: cut back to") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if got, _ := os.ReadFile(lp); !bytes.Equal(got, before) {
		t.Fatalf("the ledger changed on a full disk: %d bytes, was %d", len(got), len(before))
	}
	t.Logf("on a full disk: %s", errs)
	release()
	code, out, errs = runCLI(t, "reconcile", "--ledger", lp, "--transcript", tp, "--now", "1767225700000")
	if code != 0 || !strings.Contains(out, "appended: ") {
		t.Fatalf("once space is back: exit %d %s %s", code, out, errs)
	}
}
