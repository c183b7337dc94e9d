package jsonl_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
)

// The ledger benchmarks write to b.TempDir(); set TMPDIR to measure another
// disk. Compare BenchmarkLedgerAppendFsync with BenchmarkRawWriteFsync: same
// line, same directory, one fsync per record.
//
//	go test -run '^$' -bench 'Fsync|Concurrent' -benchtime 2s ./adapters/jsonl

var benchLine = ledger.Encode(ledger.Terminal("prompt-0000000000000000", ledger.Completed, "", "end_turn", 1767225600000))

// BenchmarkRawWriteFsync is the floor: one write(2) of line+"\n" to an open
// O_APPEND file and one fsync per record, nothing else.
func BenchmarkRawWriteFsync(b *testing.B) {
	p := filepath.Join(b.TempDir(), "raw.jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := append(append([]byte{}, benchLine...), '\n')
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkLedgerAppendFsync is AppendLedger from one goroutine: lock,
// open, seal check, write, fsync per record.
func BenchmarkLedgerAppendFsync(b *testing.B) {
	s := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(b.TempDir(), "/work/project"))
	// The first append creates the file and syncs its directory chain.
	if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkLedgerAppendConcurrent16 runs 16 appenders on one ledger; group
// commit should need far fewer fsyncs than appends.
func BenchmarkLedgerAppendConcurrent16(b *testing.B) {
	s := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(b.TempDir(), "/work/project"))
	if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
		b.Fatal(err)
	}
	before := s.Stats()
	var next atomic.Int64
	n := int64(b.N)
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= n {
				if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	st := s.Stats()
	appends, fsyncs := st.Appends-before.Appends, st.FileSyncs-before.FileSyncs
	b.ReportMetric(float64(appends)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(fsyncs)/b.Elapsed().Seconds(), "fsyncs/s")
	if fsyncs > 0 {
		b.ReportMetric(float64(appends)/float64(fsyncs), "appends/fsync")
	}
}

// BenchmarkLedgerVsRawPaired alternates one raw write+fsync and one
// AppendLedger on the same disk in every iteration, so disk noise from a
// shared machine hits both equally, and reports their throughput ratio
// (target: ledger/raw >= 0.8).
func BenchmarkLedgerVsRawPaired(b *testing.B) {
	dir := b.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, "raw.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := append(append([]byte{}, benchLine...), '\n')
	s := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(dir, "/work/project"))
	if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
		b.Fatal(err)
	}
	var raw, led time.Duration
	rawOnce := func() {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		raw += time.Since(t0)
	}
	ledOnce := func() {
		t0 := time.Now()
		if err := s.AppendLedger(bg, crashSID, benchLine); err != nil {
			b.Fatal(err)
		}
		led += time.Since(t0)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		// Alternate who goes first: an fsync right after another one can
		// cost more or less, and that must not favour either side.
		if i++; i%2 == 0 {
			rawOnce()
			ledOnce()
		} else {
			ledOnce()
			rawOnce()
		}
	}
	b.ReportMetric(float64(b.N)/raw.Seconds(), "raw-appends/s")
	b.ReportMetric(float64(b.N)/led.Seconds(), "ledger-appends/s")
	b.ReportMetric(raw.Seconds()/led.Seconds(), "ledger/raw")
}
