package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/qwen"
)

// A large transcript opens as a reader ahead, reads the same bytes through
// StartRead and WaitRead as through Read, decodes to the same events as
// the same bytes in memory, and Close ends its goroutine even with a read
// in flight; a small one opens as the plain file.
func TestTranscriptReadAhead(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("read ahead needs GOMAXPROCS >= 2")
	}
	dir := t.TempDir()
	var data bytes.Buffer
	parent := "null"
	for i := 0; data.Len() < readAheadMin+1<<20; i++ {
		// A linear chain of user records, their texts escape-dense and
		// of every length up to 60 KB, some past the framer's room.
		n := (i * 7919) % 10000
		if i%50 == 0 {
			n = 100_000
		}
		fmt.Fprintf(&data, `{"uuid":"u-%06d","parentUuid":%s,"sessionId":"s","timestamp":"2026-01-01T00:00:00.001Z",`+
			`"type":"user","message":{"role":"user","parts":[{"text":"%s"}]}}`+"\n",
			i, parent, bytes.Repeat([]byte(`ab\n\"c`), n))
		parent = fmt.Sprintf(`"u-%06d"`, i)
	}
	big, small := dir+"/big.jsonl", dir+"/small.jsonl"
	if err := os.WriteFile(big, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := openTranscriptFile(vfs.OS, small)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.(events.ReadAheader); ok {
		t.Fatal("a small transcript is read ahead")
	}
	rc.Close()

	rc, err = openTranscriptFile(vfs.OS, big)
	if err != nil {
		t.Fatal(err)
	}
	ra, ok := rc.(events.ReadAheader)
	if !ok {
		t.Fatal("a large transcript is not read ahead")
	}
	var got []byte
	buf := make([]byte, 100_003)
	for {
		ra.StartRead(buf)
		n, err := ra.WaitRead()
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rc.Close()
	if !bytes.Equal(got, data.Bytes()) {
		t.Fatalf("read ahead %d bytes, want the file's %d", len(got), data.Len())
	}

	// The decoder over the file read ahead and over the same bytes in memory.
	decode := func(open qwen.Opener) []string {
		var out []string
		_, err := qwen.Scan(open, qwen.LoadOptions{}, func(i int, e events.Event) error {
			out = append(out, fmt.Sprintf("%s @%d", e.Describe(), e.Pos.Offset))
			return nil
		}, func() { out = out[:0] })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	fromFile := decode(func() (io.ReadCloser, error) { return openTranscriptFile(vfs.OS, big) })
	inMemory := decode(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data.Bytes())), nil })
	if d := cmp.Diff(inMemory, fromFile); d != "" || len(fromFile) == 0 {
		t.Fatalf("decoded differently read ahead (-memory +file):\n%s", d)
	}

	before := runtime.NumGoroutine()
	for range 20 {
		rc, err := openTranscriptFile(vfs.OS, big)
		if err != nil {
			t.Fatal(err)
		}
		rc.(events.ReadAheader).StartRead(buf) // left in flight
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for try := 0; runtime.NumGoroutine() > before; try++ {
		if try == 100 {
			t.Fatalf("%d goroutines after closing 20 readers mid-read, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
