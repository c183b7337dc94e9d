package memory_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/adapters/memory"
)

// op is one whole operation on an FS: a handle it opens it also closes, so
// the same list of ops can be replayed on a fresh FS and must end in the same
// state there as on a Clone.
type op struct {
	kind string
	name string
	to   string // rename and link target
	data string
	off  int64 // pwrite offset, truncate size, crash: bytes kept per file
	sync bool
}

func (o op) String() string {
	return fmt.Sprintf("%s %s %s %q %d %v", o.kind, o.name, o.to, o.data, o.off, o.sync)
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// apply runs o on m and reports its outcome (the error text, which names the
// path, so two FSes agree only if they failed the same way).
func apply(m *memory.FS, o op) string {
	withFile := func(flag int, f func(h interface {
		io.WriteSeeker
		Truncate(int64) error
	}) error) string {
		h, err := m.OpenFile(o.name, flag, 0o600)
		if err != nil {
			return outcome(err)
		}
		defer h.Close()
		if err := f(h); err != nil {
			return outcome(err)
		}
		if o.sync {
			return outcome(h.Sync())
		}
		return "ok"
	}
	write := func(h interface {
		io.WriteSeeker
		Truncate(int64) error
	}) error {
		_, err := h.Write([]byte(o.data))
		return err
	}
	switch o.kind {
	case "append":
		return withFile(os.O_WRONLY|os.O_APPEND|os.O_CREATE, write)
	case "pwrite":
		return withFile(os.O_RDWR, func(h interface {
			io.WriteSeeker
			Truncate(int64) error
		}) error {
			if _, err := h.Seek(o.off, io.SeekStart); err != nil {
				return err
			}
			return write(h)
		})
	case "truncate":
		return withFile(os.O_RDWR, func(h interface {
			io.WriteSeeker
			Truncate(int64) error
		}) error {
			return h.Truncate(o.off)
		})
	case "otrunc":
		return withFile(os.O_WRONLY|os.O_TRUNC, write)
	case "syncdir":
		return outcome(m.SyncDir(o.name))
	case "rename":
		return outcome(m.Rename(o.name, o.to))
	case "link":
		return outcome(m.Link(o.name, o.to))
	case "remove":
		return outcome(m.Remove(o.name))
	case "mkdir":
		return outcome(m.MkdirAll(o.name, 0o750))
	case "writefile":
		return outcome(m.WriteFile(o.name, []byte(o.data), 0o640))
	case "lock":
		l, err := m.Lock(o.name)
		if err != nil {
			return outcome(err)
		}
		return outcome(l.Unlock())
	case "crash":
		m.CrashKeeping(func(string, []byte) int { return int(o.off) })
		return "ok"
	}
	panic("unknown op " + o.kind)
}

func run(m *memory.FS, ops []op) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = apply(m, o)
	}
	return out
}

var cloneNames = []string{"/", "/a", "/b", "/d", "/d/a", "/d/b", "/d/e", "/d/e/f"}

// snapshot is everything a test can observe of m at the paths ops use: what
// Stat, ReadFile, DurableFile and ReadDir return.
func snapshot(m *memory.FS) string {
	var b strings.Builder
	for _, n := range cloneNames {
		fmt.Fprintf(&b, "%s:", n)
		if st, err := m.Stat(n); err != nil {
			fmt.Fprintf(&b, " stat %s", outcome(err))
		} else {
			fmt.Fprintf(&b, " stat %v %v %d", st.IsDir(), st.Mode(), st.Size())
		}
		if d, err := m.ReadFile(n); err != nil {
			fmt.Fprintf(&b, " read %s", outcome(err))
		} else {
			fmt.Fprintf(&b, " read %q", d)
		}
		if d, err := m.DurableFile(n); err != nil {
			fmt.Fprintf(&b, " durable %s", outcome(err))
		} else {
			fmt.Fprintf(&b, " durable %q", d)
		}
		if es, err := m.ReadDir(n); err != nil {
			fmt.Fprintf(&b, " readdir %s", outcome(err))
		} else {
			b.WriteString(" readdir")
			for _, e := range es {
				fmt.Fprintf(&b, " %s/%v", e.Name(), e.IsDir())
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// replay is a fresh FS that went through every list of ops in turn.
func replay(lists ...[]op) *memory.FS {
	m := memory.NewFS()
	for _, l := range lists {
		run(m, l)
	}
	return m
}

// cloneBase leaves every kind of state a crash treats differently: durable
// files, unsynced appends and overwrites, a hard link, an entry durable under
// one name and present under another (an unsynced rename), and a directory
// whose own entry is not durable.
var cloneBase = []op{
	{kind: "writefile", name: "/d/a", data: "durable-a\n"},
	{kind: "writefile", name: "/b", data: "durable-b\n"},
	{kind: "append", name: "/d/a", data: "tail-a\n"},
	{kind: "mkdir", name: "/d/e"},
	{kind: "append", name: "/d/e/f", data: "f\n", sync: true},
	{kind: "syncdir", name: "/d/e"},
	{kind: "link", name: "/b", to: "/d/b"},
	{kind: "rename", name: "/d/a", to: "/a"},
	{kind: "pwrite", name: "/b", data: "B", off: 0},
	{kind: "append", name: "/b", data: "tail-b\n"},
}

const keepAll = 1 << 20

// TestCloneSidesAreIndependent applies each operation to one side of a Clone
// only, then crashes both sides, and holds each side to a fresh replay of
// what it alone went through.
func TestCloneSidesAreIndependent(t *testing.T) {
	table := []struct {
		name string
		ops  []op
	}{
		{"append and sync", []op{{kind: "append", name: "/a", data: "more\n", sync: true}}},
		{"append through the other link", []op{{kind: "append", name: "/d/b", data: "via-link\n", sync: true}}},
		{"overwrite inside synced bytes", []op{{kind: "pwrite", name: "/a", data: "XY", off: 2, sync: true}}},
		{"overwrite unsynced", []op{{kind: "pwrite", name: "/b", data: "zz", off: 4}}},
		{"write past the end", []op{{kind: "pwrite", name: "/b", data: "far", off: 40, sync: true}}},
		{"truncate shorter and sync", []op{{kind: "truncate", name: "/a", off: 3, sync: true}}},
		{"truncate longer", []op{{kind: "truncate", name: "/d/e/f", off: 9}}},
		{"open with O_TRUNC", []op{{kind: "otrunc", name: "/b", data: "new", sync: true}}},
		{"sync the unsynced rename", []op{{kind: "syncdir", name: "/"}, {kind: "syncdir", name: "/d"}}},
		{"rename back", []op{{kind: "rename", name: "/a", to: "/d/a"}}},
		{"remove durably", []op{{kind: "remove", name: "/d/b"}, {kind: "syncdir", name: "/d"}}},
		{"new durable file", []op{
			{kind: "append", name: "/d/e/g", data: "g\n", sync: true},
			{kind: "syncdir", name: "/d/e"}, {kind: "syncdir", name: "/d"},
		}},
		{"new directory", []op{{kind: "mkdir", name: "/x/y"}, {kind: "syncdir", name: "/"}}},
		{"fixture write", []op{{kind: "writefile", name: "/d/e/f", data: "fixture"}}},
		{"lock", []op{{kind: "lock", name: "/l/k.lock"}}},
		{"crash keeping a torn prefix", []op{{kind: "crash", off: 2}}},
	}
	for _, tc := range table {
		for _, side := range []string{"original", "clone"} {
			t.Run(tc.name+"/"+side, func(t *testing.T) {
				m := replay(cloneBase)
				c := m.Clone()
				touched, other := m, c
				if side == "clone" {
					touched, other = c, m
				}
				wantTouched, wantOther := replay(cloneBase), replay(cloneBase)
				if got, want := run(touched, tc.ops), run(wantTouched, tc.ops); !slices.Equal(got, want) {
					t.Fatalf("outcomes %q, on a fresh FS %q", got, want)
				}
				check := func(when string) {
					t.Helper()
					if got, want := snapshot(touched), snapshot(wantTouched); got != want {
						t.Fatalf("%s, the %s differs from a fresh FS that did the same:\n%s\nwant:\n%s", when, side, got, want)
					}
					if got, want := snapshot(other), snapshot(wantOther); got != want {
						t.Fatalf("%s, the side the ops were not applied to changed:\n%s\nwant:\n%s", when, got, want)
					}
				}
				check("before the crash")
				for _, fs := range []*memory.FS{touched, other, wantTouched, wantOther} {
					fs.CrashKeeping(func(string, []byte) int { return keepAll })
				}
				check("after a crash keeping all unsynced appends")
				// A second round on the crashed state: what each side wrote
				// durably must still be its own.
				for _, fs := range []*memory.FS{touched, wantTouched} {
					run(fs, []op{{kind: "append", name: "/d/e/f", data: "after\n", sync: true}})
				}
				for _, fs := range []*memory.FS{touched, other, wantTouched, wantOther} {
					fs.Crash()
				}
				check("after a second crash keeping nothing")
			})
		}
	}
}

// TestCloneThenCrashIsCrash: a clone crashed at once leaves exactly what the
// original leaves when it crashes the same way, and offers keep the same
// unsynced bytes in the same order.
func TestCloneThenCrashIsCrash(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep int
	}{{"kill-like, keeping every unsynced append", keepAll}, {"power loss, keeping none", 0}, {"torn", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			m := replay(cloneBase)
			before := snapshot(m)
			c := m.Clone()
			if got := snapshot(c); got != before {
				t.Fatalf("clone differs from the original:\n%s\nwant:\n%s", got, before)
			}
			crash := func(fs *memory.FS) []string {
				var offered []string
				fs.CrashKeeping(func(name string, unsynced []byte) int {
					offered = append(offered, name+" "+string(unsynced))
					return tc.keep
				})
				return offered
			}
			co := crash(c)
			if snapshot(m) != before {
				t.Fatal("crashing the clone changed the original")
			}
			mo := crash(m)
			if !slices.Equal(co, mo) {
				t.Fatalf("keep was offered %q on the clone, %q on the original", co, mo)
			}
			if len(mo) == 0 {
				t.Fatal("the base state has no unsynced append: the test proves nothing")
			}
			got, want := snapshot(c), snapshot(m)
			if got != want {
				t.Fatalf("crashed clone:\n%s\ncrashed original:\n%s", got, want)
			}
			if got == before {
				t.Fatal("the crash changed nothing: the test proves nothing")
			}
			for _, n := range []string{"/a", "/b", "/d/a", "/d/b", "/d/e/f"} {
				a, errA := c.DurableFile(n)
				b, errB := m.DurableFile(n)
				if string(a) != string(b) || outcome(errA) != outcome(errB) {
					t.Fatalf("DurableFile(%s): clone (%q, %v), original (%q, %v)", n, a, errA, b, errB)
				}
			}
		})
	}
}

// TestCloneKeepsLinksShared: two names of one file in the original are two
// names of one file in the clone, and of a different file than the
// original's.
func TestCloneKeepsLinksShared(t *testing.T) {
	m := replay(cloneBase)
	c := m.Clone()
	run(c, []op{{kind: "append", name: "/b", data: "clone\n"}})
	cb, _ := c.ReadFile("/d/b")
	if !strings.HasSuffix(string(cb), "clone\n") {
		t.Fatalf("the clone's other link did not see the write: %q", cb)
	}
	if mb, _ := m.ReadFile("/d/b"); strings.Contains(string(mb), "clone") {
		t.Fatalf("the original's link saw the clone's write: %q", mb)
	}
}

// TestCloneBothSidesAppend: the original's file has room past its length
// (append grew it), the clone shares its bytes; both append different bytes
// and overwrite the same offsets, and neither sees the other's.
func TestCloneBothSidesAppend(t *testing.T) {
	m := memory.NewFS()
	for range 10 {
		run(m, []op{{kind: "append", name: "/f", data: "0123456789", sync: true}})
	}
	run(m, []op{{kind: "syncdir", name: "/"}})
	c := m.Clone()
	cc := c.Clone()
	run(m, []op{{kind: "append", name: "/f", data: "mm", sync: true}})
	run(c, []op{{kind: "append", name: "/f", data: "cc", sync: true}})
	run(cc, []op{{kind: "pwrite", name: "/f", data: "X", off: 0, sync: true}})
	run(m, []op{{kind: "pwrite", name: "/f", data: "M", off: 1}})
	base := strings.Repeat("0123456789", 10)
	for _, tc := range []struct {
		fs            *memory.FS
		read, durable string
	}{
		{m, "0M" + base[2:] + "mm", base + "mm"},
		{c, base + "cc", base + "cc"},
		{cc, "X" + base[1:], "X" + base[1:]},
	} {
		got, _ := tc.fs.ReadFile("/f")
		dur, _ := tc.fs.DurableFile("/f")
		if string(got) != tc.read || string(dur) != tc.durable {
			t.Errorf("read %q durable %q, want %q and %q", got, dur, tc.read, tc.durable)
		}
	}
}

// TestCloneLeavesProcessState: open files, locks, armed faults and counts
// belong to the process using the original, not to the copy.
func TestCloneLeavesProcessState(t *testing.T) {
	m := replay(cloneBase)
	h, err := m.OpenFile("/a", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	held, err := m.Lock("/k.lock")
	if err != nil {
		t.Fatal(err)
	}
	m.Inject(memory.Fault{Op: memory.OpWrite})
	c := m.Clone()
	if c.Count(memory.OpWrite) != 0 || c.Count(memory.OpLock) != 0 {
		t.Fatalf("clone counted %d writes, %d locks", c.Count(memory.OpWrite), c.Count(memory.OpLock))
	}
	if m.Count(memory.OpLock) != 1 {
		t.Fatalf("original's count changed: %d locks", m.Count(memory.OpLock))
	}
	l, err := c.Lock("/k.lock") // would block forever if the lock had been copied
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Unlock()
	if got := apply(c, op{kind: "append", name: "/a", data: "c"}); got != "ok" {
		t.Fatalf("a write on the clone hit the original's fault: %s", got)
	}
	if _, err := h.Write([]byte("m")); !errors.Is(err, memory.ErrInjected) {
		t.Fatalf("the original's fault did not stay armed: %v", err)
	}
	if _, err := h.Write([]byte("m")); err != nil {
		t.Fatal(err)
	}
	ca, _ := c.ReadFile("/a")
	ma, _ := m.ReadFile("/a")
	if !strings.HasSuffix(string(ca), "tail-a\nc") || !strings.HasSuffix(string(ma), "tail-a\nm") {
		t.Fatalf("clone %q, original %q", ca, ma)
	}
	_ = held.Unlock()
}

// TestCloneOfHaltedFS: the process died at the crash point, so the clone too
// is halted until its own Crash, which leaves what the original's leaves.
func TestCloneOfHaltedFS(t *testing.T) {
	m := replay(cloneBase)
	m.Inject(memory.Fault{Op: memory.OpWrite, Torn: 3, Crash: true})
	if got := apply(m, op{kind: "append", name: "/d/e/f", data: "torn-write\n"}); !strings.Contains(got, memory.ErrCrashed.Error()) {
		t.Fatalf("crash point: %s", got)
	}
	c := m.Clone()
	if !c.Halted() {
		t.Fatal("clone of a halted FS runs")
	}
	if f, _ := c.ReadFile("/d/e/f"); string(f) != "f\ntor" {
		t.Fatalf("the torn write did not reach the clone's page cache: %q", f)
	}
	if _, err := c.Stat("/a"); !errors.Is(err, memory.ErrCrashed) {
		t.Fatalf("stat on the halted clone: %v", err)
	}
	c.CrashKeeping(func(string, []byte) int { return keepAll })
	if c.Halted() || !m.Halted() {
		t.Fatalf("after the clone's crash: clone halted %v, original halted %v", c.Halted(), m.Halted())
	}
	m.CrashKeeping(func(string, []byte) int { return keepAll })
	if got, want := snapshot(c), snapshot(m); got != want {
		t.Fatalf("crashed clone:\n%s\ncrashed original:\n%s", got, want)
	}
}

func drawOp(t *rapid.T, label string) op {
	names := cloneNames[1:]
	o := op{
		kind: rapid.SampledFrom([]string{
			"append", "append", "append", "pwrite", "truncate", "otrunc", "syncdir", "syncdir",
			"rename", "link", "remove", "mkdir", "writefile", "lock", "crash",
		}).Draw(t, label+" kind"),
		name: rapid.SampledFrom(names).Draw(t, label+" name"),
		to:   rapid.SampledFrom(names).Draw(t, label+" to"),
		data: rapid.StringMatching(`[a-z]{0,12}`).Draw(t, label+" data"),
		off:  rapid.Int64Range(0, 16).Draw(t, label+" off"),
		sync: rapid.Bool().Draw(t, label+" sync"),
	}
	if o.kind == "syncdir" {
		o.name = rapid.SampledFrom([]string{"/", "/d", "/d/e"}).Draw(t, label+" dir")
	}
	return o
}

// TestCloneBehavesAsReplay: after any history, a Clone and its original go
// on (interleaved) through different operations and crashes, and each ends
// where a fresh FS that went through its history alone ends.
func TestCloneBehavesAsReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := func(label string, max int) []op {
			n := rapid.IntRange(0, max).Draw(t, label+" length")
			out := make([]op, n)
			for i := range out {
				out[i] = drawOp(t, fmt.Sprintf("%s %d", label, i))
			}
			return out
		}
		prefix, left, right := ops("prefix", 16), ops("original", 10), ops("clone", 10)
		m := memory.NewFS()
		run(m, prefix)
		c := m.Clone()
		for i := range max(len(left), len(right)) {
			for _, side := range []struct {
				fs  *memory.FS
				ops []op
			}{{m, left}, {c, right}} {
				if i < len(side.ops) {
					apply(side.fs, side.ops[i])
				}
			}
		}
		keep := rapid.IntRange(0, 4).Draw(t, "keep")
		for _, side := range []struct {
			name string
			fs   *memory.FS
			ops  []op
		}{{"original", m, left}, {"clone", c, right}} {
			want := replay(prefix, side.ops)
			if got, w := snapshot(side.fs), snapshot(want); got != w {
				t.Fatalf("%s:\n%s\nreplayed:\n%s", side.name, got, w)
			}
			side.fs.CrashKeeping(func(string, []byte) int { return keep })
			want.CrashKeeping(func(string, []byte) int { return keep })
			if got, w := snapshot(side.fs), snapshot(want); got != w {
				t.Fatalf("%s after a crash:\n%s\nreplayed:\n%s", side.name, got, w)
			}
		}
	})
}

// TestCloneConcurrentUse: a Clone and its original share file bytes but not
// a lock, so using both at once must be race-free (run with -race).
func TestCloneConcurrentUse(t *testing.T) {
	m := replay(cloneBase)
	c := m.Clone()
	done := make(chan string, 2)
	for _, side := range []*memory.FS{m, c} {
		go func() {
			for range 50 {
				apply(side, op{kind: "append", name: "/a", data: "0123456789", sync: true})
				apply(side, op{kind: "pwrite", name: "/a", data: "x", off: 1})
				_, _ = side.ReadFile("/a")
			}
			side.Crash()
			done <- snapshot(side)
		}()
	}
	if a, b := <-done, <-done; a != b {
		t.Fatalf("the same work on both sides ended differently:\n%s\n%s", a, b)
	}
}

// TestReadFileSharedNeverChanges: the bytes ReadFileShared returns stay what
// the file held then, whatever later operations and crashes do to it, and
// equal what ReadFile returned at the same moment.
func TestReadFileSharedNeverChanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := memory.NewFS()
		type view struct {
			name      string
			got, want []byte
		}
		var views []view
		n := rapid.IntRange(1, 24).Draw(t, "ops")
		for i := range n {
			apply(m, drawOp(t, fmt.Sprintf("op %d", i)))
			name := rapid.SampledFrom(cloneNames[1:]).Draw(t, fmt.Sprintf("view %d", i))
			got, err := m.ReadFileShared(name)
			want, werr := m.ReadFile(name)
			if outcome(err) != outcome(werr) || string(got) != string(want) {
				t.Fatalf("ReadFileShared(%s) = %q, %v; ReadFile = %q, %v", name, got, err, want, werr)
			}
			if err == nil {
				views = append(views, view{name, got, want})
			}
			for _, v := range views {
				if string(v.got) != string(v.want) {
					t.Fatalf("after op %d, the shared bytes of %s read %q, were %q", i, v.name, v.got, v.want)
				}
			}
		}
	})
}
