package memory_test

import (
	"fmt"
	"os"

	"github.com/tailproof/tailproof/adapters/memory"
)

// A write that was not synced is gone after a crash; a torn prefix of it can
// be kept to model a partially written sector.
func ExampleFS_CrashKeeping() {
	m := memory.NewFS()
	_ = m.WriteFile("/ledger.jsonl", []byte("synced\n"), 0o600)
	f, _ := m.OpenFile("/ledger.jsonl", os.O_WRONLY|os.O_APPEND, 0)
	_, _ = f.Write([]byte("not synced\n"))
	m.CrashKeeping(func(name string, unsynced []byte) int { return 3 })
	b, _ := m.ReadFile("/ledger.jsonl")
	fmt.Printf("%q\n", b)
	// Output: "synced\nnot"
}

// A fault tears the second write after two bytes and reports an I/O error.
func ExampleFS_Inject() {
	m := memory.NewFS()
	m.Inject(memory.Fault{Op: memory.OpWrite, Nth: 2, Torn: 2})
	f, _ := m.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o600)
	_, _ = f.Write([]byte("abc"))
	n, err := f.Write([]byte("defg"))
	b, _ := m.ReadFile("/f")
	fmt.Println(n, err)
	fmt.Printf("%q\n", b)
	// Output:
	// 2 write /f: memory: injected I/O error: input/output error
	// "abcde"
}
