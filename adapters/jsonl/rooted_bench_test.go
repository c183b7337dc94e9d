package jsonl_test

import (
	"testing"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// BenchmarkLedgerAppendRooted is BenchmarkLedgerAppendFsync on the real FS
// and on the confined one the CLI uses (vfs.Within: os.Root resolves each
// path component with openat), to show what confinement costs an append.
// On a disk the fsync hides it; measure on tmpfs to see it:
//
//	TMPDIR=/dev/shm go test -run '^$' -bench LedgerAppendRooted -benchtime 2s ./adapters/jsonl
func BenchmarkLedgerAppendRooted(b *testing.B) {
	for _, c := range []struct {
		name string
		fs   func(dir string) vfs.FS
	}{
		{"os", func(string) vfs.FS { return vfs.OS }},
		{"rooted", func(dir string) vfs.FS {
			r, err := vfs.Within(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			return r
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			s := jsonl.NewQwenStore(c.fs(dir), jsonl.NewQwenLayout(dir, "/work/project"))
			if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}
