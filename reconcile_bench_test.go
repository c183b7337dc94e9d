package tailproof_test

import (
	"context"
	"os"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
)

// BenchmarkReconcileSmall decides the bundled example session (7 KB of
// transcript, a 4-record ledger) through the in-memory store: the per-call
// cost that dominates the simulator, where sessions are this small.
func BenchmarkReconcileSmall(b *testing.B) {
	const sid = "b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d"
	dir := "examples/qwen/projects/-work-demo/chats/" + sid
	st := memory.NewQwenStoreOn(memory.NewFS(), jsonl.NewQwenLayout("/home/user/.qwen", "/work/demo"))
	for src, kind := range map[string]bool{dir + ".jsonl": false, dir + ".ledger.jsonl": true} {
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		p, _ := st.Layout().TranscriptPath(sid, jsonl.Active)
		if kind {
			p, _ = st.Layout().LedgerPath(sid, jsonl.Active)
		}
		if err := st.Mem().WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, ref := range []bool{false, true} {
		name := "tailproof"
		if ref {
			name = "reference"
		}
		b.Run(name, func(b *testing.B) {
			opts := tailproof.Options{DryRun: true, Reference: ref, Now: func() int64 { return 1900000000000 }} // after the example's admissions
			b.ReportAllocs()
			for b.Loop() {
				d, err := tailproof.Reconcile(ctx, st, sid, opts)
				if err != nil || len(d.Appended()) != 1 {
					b.Fatal(err, d.Decisions)
				}
			}
		})
	}
}
