package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Off a terminal — a file, a pipe, a buffer — there is no bar at all.
func TestProgressIsSilentOffATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, out := range []any{f, w, &bytes.Buffer{}} {
		p := NewProgress(out.(interface{ Write([]byte) (int, error) }), "x", 10)
		if p != nil {
			t.Fatalf("%T: a bar off a terminal", out)
		}
		p.Set(5, "n") // a nil bar is silent, not a panic
		p.Add(1)
		p.Done()
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Fatalf("%d bytes written to a regular file", st.Size())
	}
}

// The bar redraws when the percentage moves, whatever the number of units,
// from any goroutine, and Done clears the line.
func TestProgressDrawsOncePerPercent(t *testing.T) {
	var buf syncBuffer
	p := newProgressOn(&buf, "scenarios", 10000)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 10000; i += 4 {
				p.Add(1)
			}
		}()
	}
	wg.Wait()
	p.Done()
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 102 { // 0%..100% plus the clearing
		t.Fatalf("%d redraws, want 101 and a clear:\n%q", n-1, out)
	}
	if !strings.Contains(out, "100% 10000/10000") || !strings.HasSuffix(out, "\r\033[K") {
		t.Fatalf("last frames: %q", out[max(0, len(out)-200):])
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
