package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// TestAcknowledgedAppendsSurviveAnyHistory draws histories of appends, I/O
// faults (plain, torn, at a crash point) and power losses that keep a random
// prefix of unsynced bytes, and checks after every reboot that each
// acknowledged record is present, in order, and that the file never holds
// more unreadable lines than there were failures.
func TestAcknowledgedAppendsSurviveAnyHistory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := memory.NewFS()
		s := memory.NewQwenStoreOn(m, memory.DefaultQwenLayout)
		var acked []string
		failures := 0
		next := 0
		path, _ := memory.DefaultQwenLayout.LedgerPath(crashSID, jsonl.Active)
		check := func() {
			// Read around the fault injector: checking must not consume faults.
			data, err := m.ReadFile(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			recs, dropped, err := ledger.Read(bytes.NewReader(data), false)
			if err != nil {
				t.Fatal(err)
			}
			if dropped > failures {
				t.Fatalf("%d unreadable lines after %d failures", dropped, failures)
			}
			i := 0
			for _, r := range recs {
				if i < len(acked) && r.PromptID == acked[i] {
					i++
				}
			}
			if i != len(acked) {
				t.Fatalf("acknowledged %v, ledger has %v", acked, recs)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"append": func(t *rapid.T) {
				id := fmt.Sprintf("p%04d", next)
				next++
				if err := s.AppendLedger(bg, crashSID, ledger.Encode(ledger.InFlight(id, int64(next), ""))); err == nil {
					acked = append(acked, id)
				} else {
					failures++
				}
			},
			"fault": func(t *rapid.T) {
				op := rapid.SampledFrom([]memory.Op{memory.OpWrite, memory.OpSync, memory.OpSyncDir, memory.OpOpen, memory.OpStat}).Draw(t, "op")
				m.Inject(memory.Fault{
					Op:    op,
					Nth:   rapid.IntRange(1, 3).Draw(t, "nth"),
					Torn:  rapid.IntRange(0, 80).Draw(t, "torn"),
					Crash: rapid.Bool().Draw(t, "crash"),
				})
			},
			"powerloss": func(t *rapid.T) {
				keep := rapid.IntRange(0, 200).Draw(t, "keep")
				m.ClearFaults()
				m.CrashKeeping(func(_ string, u []byte) int { return keep })
				failures++ // a kept prefix can be one torn line
				s = memory.NewQwenStoreOn(m, memory.DefaultQwenLayout)
				check()
			},
			"": func(t *rapid.T) {
				if !m.Halted() {
					check()
				}
			},
		})
	})
}
