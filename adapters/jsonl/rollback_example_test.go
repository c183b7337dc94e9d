package jsonl_test

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// On a full disk only part of a record fits. The append fails and is cut
// back to the byte, so "not appended" is true: the ledger is as it was.
func ExampleErrNotAppended() {
	m := memory.NewFS()
	layout := memory.DefaultQwenLayout
	path, _ := layout.LedgerPath("s1", jsonl.Active)
	admission := ledger.Encode(ledger.InFlight("p1", 1767225600000, ""))
	m.WriteFile(path, append(admission, '\n'), 0o600)

	disk := memory.NewQuota(m, 20) // 20 bytes free: the terminal needs 89
	store := jsonl.NewQwenStore(disk, layout)
	err := store.AppendLedger(bg, "s1", ledger.Encode(ledger.Terminal("p1", ledger.Interrupted, ledger.CodeDaemonLost, "", 1767225700000)))
	fmt.Println(errors.Is(err, syscall.ENOSPC), errors.Is(err, jsonl.ErrNotAppended))
	after, _ := m.DurableFile(path)
	fmt.Printf("%s", after)
	// Output:
	// true true
	// {"v":1,"promptId":"p1","state":"in_flight","at":1767225600000}
}
