package memory_test

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func mustWrite(t *testing.T, f vfs.File, s string) {
	t.Helper()
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func readOr(t *testing.T, m *memory.FS, name string) string {
	t.Helper()
	b, err := m.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func create(t *testing.T, m *memory.FS, name string) vfs.File {
	t.Helper()
	f, err := m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCrashDropsUnsyncedBytesAndEntries(t *testing.T) {
	m := memory.NewFS()
	if err := m.MkdirAll("/d", 0o700); err != nil {
		t.Fatal(err)
	}
	f := create(t, m, "/d/a")
	mustWrite(t, f, "one\n")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// The file's bytes are synced but neither /d nor its entry in / is.
	m.Crash()
	if got := readOr(t, m, "/d/a"); got != "<missing>" {
		t.Fatalf("file with unsynced directory entry survived a crash: %q", got)
	}

	if err := m.MkdirAll("/d", 0o700); err != nil {
		t.Fatal(err)
	}
	f = create(t, m, "/d/a")
	mustWrite(t, f, "one\n")
	for _, step := range []func() error{f.Sync, func() error { return m.SyncDir("/d") }, func() error { return m.SyncDir("/") }} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, f, "two\n")
	m.Crash()
	if got := readOr(t, m, "/d/a"); got != "one\n" {
		t.Fatalf("after crash = %q, want only the synced bytes", got)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, memory.ErrCrashed) {
		t.Fatalf("write through a pre-crash handle = %v, want ErrCrashed", err)
	}
}

func TestCrashKeepingTornPrefix(t *testing.T) {
	m := memory.NewFS()
	if err := m.WriteFile("/l", []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := create(t, m, "/l")
	mustWrite(t, f, "bcdef\n")
	var gotName, gotBytes string
	m.CrashKeeping(func(name string, unsynced []byte) int {
		gotName, gotBytes = name, string(unsynced)
		return 3
	})
	if gotName != "/l" || gotBytes != "bcdef\n" {
		t.Fatalf("keep saw (%q, %q)", gotName, gotBytes)
	}
	if got := readOr(t, m, "/l"); got != "a\nbcd" {
		t.Fatalf("after torn crash = %q", got)
	}
	// The torn prefix is now on disk: a second crash keeps it.
	m.Crash()
	if got := readOr(t, m, "/l"); got != "a\nbcd" {
		t.Fatalf("after second crash = %q", got)
	}
}

func TestKeepRandomIsSeeded(t *testing.T) {
	run := func() string {
		m := memory.NewFS()
		_ = m.WriteFile("/l", nil, 0o600)
		f := create(t, m, "/l")
		mustWrite(t, f, "0123456789abcdef")
		m.CrashKeeping(memory.KeepRandom(rand.New(rand.NewPCG(7, 7))))
		return readOr(t, m, "/l")
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("same seed, different crash: %q vs %q", a, b)
	}
}

func TestUnsyncedRenameAndRemoveRevert(t *testing.T) {
	m := memory.NewFS()
	_ = m.WriteFile("/a/x", []byte("x"), 0o600)
	_ = m.MkdirAll("/b", 0o700)
	_ = m.SyncDir("/")
	if err := m.Rename("/a/x", "/b/x"); err != nil {
		t.Fatal(err)
	}
	if readOr(t, m, "/a/x") != "<missing>" || readOr(t, m, "/b/x") != "x" {
		t.Fatal("rename not visible before crash")
	}
	m.Crash()
	if readOr(t, m, "/a/x") != "x" || readOr(t, m, "/b/x") != "<missing>" {
		t.Fatal("unsynced rename survived the crash")
	}
	if err := m.Remove("/a/x"); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if readOr(t, m, "/a/x") != "x" {
		t.Fatal("unsynced remove survived the crash")
	}
	if err := m.Remove("/a/x"); err != nil {
		t.Fatal(err)
	}
	_ = m.SyncDir("/a")
	m.Crash()
	if readOr(t, m, "/a/x") != "<missing>" {
		t.Fatal("synced remove was undone")
	}
}

func TestFaultNthWriteFailsAndTears(t *testing.T) {
	m := memory.NewFS()
	f := create(t, m, "/f")
	m.Inject(memory.Fault{Op: memory.OpWrite, Path: "/f", Nth: 2, Torn: 2})
	mustWrite(t, f, "abc")
	n, err := f.Write([]byte("defg"))
	if !errors.Is(err, syscall.EIO) || !errors.Is(err, memory.ErrInjected) || n != 2 {
		t.Fatalf("second write = (%d, %v), want 2 bytes and an injected EIO", n, err)
	}
	mustWrite(t, f, "h") // the fault fired once and is gone
	if got := readOr(t, m, "/f"); got != "abcdeh" {
		t.Fatalf("content = %q", got)
	}
}

func TestFaultOtherPathsAndOps(t *testing.T) {
	m := memory.NewFS()
	boom := errors.New("boom")
	m.Inject(memory.Fault{Op: memory.OpSync, Path: "/b", Err: boom})
	m.Inject(memory.Fault{Op: memory.OpRename, Nth: 1})
	a, b := create(t, m, "/a"), create(t, m, "/b")
	if err := a.Sync(); err != nil {
		t.Fatalf("sync of another path failed: %v", err)
	}
	if err := b.Sync(); !errors.Is(err, boom) {
		t.Fatalf("sync /b = %v, want boom", err)
	}
	if err := m.Rename("/a", "/c"); !errors.Is(err, memory.ErrInjected) {
		t.Fatalf("rename = %v, want injected", err)
	}
	if err := m.Rename("/a", "/c"); err != nil {
		t.Fatal(err)
	}
}

func TestCrashPointHaltsUntilCrash(t *testing.T) {
	m := memory.NewFS()
	_ = m.WriteFile("/l", []byte("a\n"), 0o600)
	f := create(t, m, "/l")
	m.Inject(memory.Fault{Op: memory.OpSync, Crash: true})
	mustWrite(t, f, "b\n")
	if err := f.Sync(); !errors.Is(err, memory.ErrCrashed) {
		t.Fatalf("sync at crash point = %v", err)
	}
	if !m.Halted() {
		t.Fatal("not halted")
	}
	if _, err := m.Stat("/l"); !errors.Is(err, memory.ErrCrashed) {
		t.Fatalf("op after crash point = %v, want ErrCrashed", err)
	}
	m.Crash()
	if got := readOr(t, m, "/l"); got != "a\n" {
		t.Fatalf("after reboot = %q", got)
	}
}

func TestOpenFlagsAndModes(t *testing.T) {
	m := memory.NewFS()
	if _, err := m.OpenFile("/nope/x", os.O_RDWR|os.O_CREATE, 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("create in missing dir = %v", err)
	}
	f, err := m.OpenFile("/x", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.OpenFile("/x", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL on existing = %v", err)
	}
	mustWrite(t, f, "hello")
	if _, err := f.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on write-only handle succeeded")
	}
	st, err := m.Stat("/x")
	if err != nil || st.Mode().Perm() != 0o640 || st.Size() != 5 {
		t.Fatalf("stat = %v %v", st, err)
	}
	r, _ := m.OpenFile("/x", os.O_RDONLY, 0)
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "hello" {
		t.Fatalf("read = %q %v", b, err)
	}
	buf := make([]byte, 3)
	if n, err := r.ReadAt(buf, 3); n != 2 || err != io.EOF {
		t.Fatalf("short ReadAt = %d %v", n, err)
	}
	w, _ := m.OpenFile("/x", os.O_RDWR|os.O_TRUNC, 0)
	mustWrite(t, w, "hi")
	if err := w.Truncate(1); err != nil {
		t.Fatal(err)
	}
	if got := readOr(t, m, "/x"); got != "h" {
		t.Fatalf("after trunc = %q", got)
	}
	if err := m.Link("/x", "/y"); err != nil {
		t.Fatal(err)
	}
	if err := m.Link("/x", "/y"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("link over existing = %v", err)
	}
	if err := m.Remove("/"); err == nil {
		t.Fatal("removed the root")
	}
	if err := m.MkdirAll("/x/sub", 0o700); err == nil {
		t.Fatal("mkdir under a file succeeded")
	}
	es, err := m.ReadDir("/")
	if err != nil || len(es) != 2 || es[0].Name() != "x" || es[1].Name() != "y" {
		t.Fatalf("readdir = %v %v", es, err)
	}
}

func TestLockExcludesAndCrashReleases(t *testing.T) {
	m := memory.NewFS()
	l, err := m.Lock("/k.lock")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	order := []string{}
	done := make(chan struct{})
	go func() {
		l2, err := m.Lock("/k.lock")
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		mu.Lock()
		order = append(order, "second")
		mu.Unlock()
		_ = l2.Unlock()
		close(done)
	}()
	time.Sleep(10 * time.Millisecond) // give the second locker a chance to (wrongly) get in
	mu.Lock()
	order = append(order, "first")
	mu.Unlock()
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	<-done
	if len(order) != 2 || order[0] != "first" {
		t.Fatalf("lock order = %v", order)
	}
	if err := l.Unlock(); err == nil {
		t.Fatal("double unlock succeeded")
	}

	held, _ := m.Lock("/k.lock")
	m.Crash()
	again, err := m.Lock("/k.lock") // the crashed holder is gone
	if err != nil {
		t.Fatal(err)
	}
	_ = held.Unlock() // a stale unlock must not release the new holder
	got := make(chan struct{})
	go func() {
		l3, _ := m.Lock("/k.lock")
		_ = l3.Unlock()
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("stale unlock released the new holder")
	case <-time.After(10 * time.Millisecond):
	}
	_ = again.Unlock()
	<-got
}

func TestDurableFile(t *testing.T) {
	m := memory.NewFS()
	_ = m.WriteFile("/d/f", []byte("a"), 0o600)
	f := create(t, m, "/d/f")
	mustWrite(t, f, "b")
	if b, err := m.DurableFile("/d/f"); err != nil || string(b) != "a" {
		t.Fatalf("durable = %q %v", b, err)
	}
	create(t, m, "/d/g")
	if _, err := m.DurableFile("/d/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced entry durable: %v", err)
	}
}

func TestLockCreatesParents(t *testing.T) {
	m := memory.NewFS()
	l, err := m.Lock("/a/b/c.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if st, err := m.Stat("/a/b"); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("parent = %v, %v", st, err)
	}
	if _, err := m.Lock("/a/b/c.lock/x"); err == nil {
		t.Fatal("lock under a file succeeded")
	}
}

// A crash after an unsynced truncation below the synced length keeps the
// synced bytes (found by the dsh repair crash test: it used to panic).
func TestCrashAfterUnsyncedShrink(t *testing.T) {
	m := memory.NewFS()
	if err := m.WriteFile("/d/f", []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := m.OpenFile("/d/f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	m.CrashKeeping(func(string, []byte) int { return 5 })
	got, err := m.ReadFile("/d/f")
	if err != nil || string(got) != "0123456789" {
		t.Fatalf("after crash: %q, %v", got, err)
	}
}
