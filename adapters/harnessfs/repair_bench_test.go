package harnessfs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/codex"
)

// BenchmarkRepairCut cuts a torn last line off rollouts of 1 MiB and
// 64 MiB on the real filesystem: only the fragment is copied aside, so the
// cost should not grow with the file.
func BenchmarkRepairCut(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		var file []byte
		for len(file) < size {
			file = append(file, whole(codexLines)...)
		}
		file = file[:len(file)-40]
		b.Run(map[int]string{1 << 20: "1MiB", 64 << 20: "64MiB"}[size], func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				p := filepath.Join(b.TempDir(), "rollout.jsonl")
				// The rollout's bytes are on disk already, as after a crash
				// and a reboot: the repair's fsync flushes only its own.
				f, _ := os.Create(p)
				f.Write(file)
				f.Sync()
				f.Close()
				b.StartTimer()
				res, err := harnessfs.Repair(context.Background(), vfs.OS, p, codex.Harness(), harnessfs.RepairOptions{})
				if err != nil || res.Action != harnessfs.RepairCut {
					b.Fatal(res.Action, err)
				}
			}
		})
	}
}
