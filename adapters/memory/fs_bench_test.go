package memory_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/tailproof/tailproof/adapters/memory"
)

// BenchmarkOpenWriteSync is one durable append the way the jsonl adapters
// make it (open O_APPEND, write a 300-byte line, fsync, close, stat) on a
// file three directories deep: the path handling of every call is what the
// simulator spends its time on. Every 64th round truncates the file so that
// it stays the size of a real session log instead of growing with b.N.
func BenchmarkOpenWriteSync(b *testing.B) {
	m := memory.NewFS()
	const name = "/a/b/c/log.jsonl"
	if err := m.WriteFile(name, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	line := append(bytes.Repeat([]byte("x"), 299), '\n')
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		flag := os.O_WRONLY | os.O_APPEND
		if i%64 == 0 {
			flag |= os.O_TRUNC
		}
		f, err := m.OpenFile(name, flag, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Stat(name); err != nil {
			b.Fatal(err)
		}
	}
}

// cloneTree is the filesystem the simulator clones: six directories below
// the root (a Qwen runtime layout), two session transcripts and a ledger of a
// few KB with an unsynced tail, a hard link and a lock file.
func cloneTree(b *testing.B) *memory.FS {
	m := memory.NewFS()
	const dir = "/home/user/.qwen/projects/work-project/chats"
	line := append(bytes.Repeat([]byte("y"), 255), '\n')
	for _, f := range []struct {
		name          string
		synced, extra int
	}{{dir + "/s1.jsonl", 12, 3}, {dir + "/s2.jsonl", 8, 0}, {"/home/user/.qwen/projects/work-project/ledger.jsonl", 10, 2}} {
		if err := m.WriteFile(f.name, nil, 0o600); err != nil {
			b.Fatal(err)
		}
		h, err := m.OpenFile(f.name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		for i := range f.synced + f.extra {
			if i == f.synced {
				if err := h.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := h.Write(line); err != nil {
				b.Fatal(err)
			}
		}
		_ = h.Close()
	}
	if err := m.Link(dir+"/s1.jsonl", dir+"/s1.evidence"); err != nil {
		b.Fatal(err)
	}
	l, err := m.Lock("/home/user/.qwen/projects/work-project/ledger.lock")
	if err != nil {
		b.Fatal(err)
	}
	_ = l.Unlock()
	return m
}

// BenchmarkClone is the copy the simulator takes before each crash it
// explores (about 30 a scenario).
func BenchmarkClone(b *testing.B) {
	m := cloneTree(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Clone()
	}
}

// BenchmarkCloneThenAppend adds what a clone defers: the first durable
// append on the clone copies that file's bytes (the original keeps its own).
func BenchmarkCloneThenAppend(b *testing.B) {
	m := cloneTree(b)
	const name = "/home/user/.qwen/projects/work-project/chats/s1.jsonl"
	line := append(bytes.Repeat([]byte("z"), 255), '\n')
	b.ReportAllocs()
	for b.Loop() {
		c := m.Clone()
		h, err := c.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := h.Sync(); err != nil {
			b.Fatal(err)
		}
		_ = h.Close()
	}
}

// BenchmarkCloneCrash is a clone crashed as a kill would (every unsynced
// append kept): a crash point explored without disturbing the original.
func BenchmarkCloneCrash(b *testing.B) {
	m := cloneTree(b)
	keepAll := func(_ string, unsynced []byte) int { return len(unsynced) }
	b.ReportAllocs()
	for b.Loop() {
		m.Clone().CrashKeeping(keepAll)
	}
}
