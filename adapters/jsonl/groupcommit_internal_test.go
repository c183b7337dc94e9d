package jsonl

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// gatedFS holds the first file fsync until released, so a test can line up
// appenders behind a leader deterministically.
type gatedFS struct {
	vfs.FS
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

type gatedFile struct {
	vfs.File
	g *gatedFS
}

func (g *gatedFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gatedFile{f, g}, nil
}

func (f gatedFile) Sync() error {
	f.g.once.Do(func() {
		close(f.g.entered)
		<-f.g.release
	})
	return f.File.Sync()
}

// TestGroupCommitSharesOneFsync: while a leader's fsync is in flight, 15
// more appenders queue; they are committed together in one more round, and
// none of them returns before that round's fsync.
func TestGroupCommitSharesOneFsync(t *testing.T) {
	g := &gatedFS{FS: vfs.OS, entered: make(chan struct{}), release: make(chan struct{})}
	s := NewQwenStore(g, NewQwenLayout(t.TempDir(), "/work/project"))
	const id = "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10"
	ctx := context.Background()
	line := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"v":1,"promptId":"p%02d","state":"in_flight","at":%d}`, i, i))
	}
	var wg sync.WaitGroup
	returned := make(chan int, 16)
	wg.Go(func() {
		if err := s.AppendLedger(ctx, id, line(0)); err != nil {
			t.Error(err)
		}
		returned <- 0
	})
	<-g.entered
	for i := 1; i < 16; i++ {
		wg.Go(func() {
			if err := s.AppendLedger(ctx, id, line(i)); err != nil {
				t.Error(err)
			}
			returned <- i
		})
	}
	path, _ := s.layout.LedgerPath(id, Active)
	w := s.writer(path, "")
	for {
		w.mu.Lock()
		n := len(w.queue)
		w.mu.Unlock()
		if n == 15 {
			break
		}
		time.Sleep(time.Millisecond) // waiting for goroutines to queue, not timing anything
	}
	select {
	case i := <-returned:
		t.Fatalf("appender %d returned before any fsync completed", i)
	default:
	}
	close(g.release)
	wg.Wait()
	st := s.Stats()
	if st.Appends != 16 || st.Batches != 2 || st.FileSyncs != 2 {
		t.Fatalf("stats = %+v, want 16 appends in 2 batches with 2 file fsyncs", st)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 16 {
		t.Fatalf("%d lines, want 16", n)
	}
}
