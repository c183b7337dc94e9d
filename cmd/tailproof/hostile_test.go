package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/events"
)

// TestHostileInputs runs testdata/hostile/*.txt: every command driven with
// the inputs a careless or hostile caller gives it — missing paths,
// directories, FIFOs, /dev/zero, symbolic links out of the named
// directories, random bytes, lines over the limit, bad flag values, hostile
// session ids — printing the exit code, stdout and stderr, and which files
// changed. Every case starts from the same fixture tree (see hostileTree);
// `files: unchanged` is the proof that no byte of the user's files moved.
//
//	run
//	reconcile --ledger $D/missing --transcript $D/ok/s.jsonl
//	----
//	exit 3
//	stderr:
//	  tailproof reconcile: --ledger $D/missing does not exist
//	files: unchanged
func TestHostileInputs(t *testing.T) {
	datadriven.Walk(t, "testdata/hostile", func(t *testing.T, path string) {
		base := t.TempDir()
		h := newHostileTree(t, base)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "run" {
				t.Fatalf("unknown command %q", d.Cmd)
			}
			h.reset(t)
			before := snapshot(t, base)
			args := strings.Fields(h.expand(d.Input))
			var out, errb bytes.Buffer
			code := run(context.Background(), args, &out, &errb)
			after := snapshot(t, base)
			var b strings.Builder
			fmt.Fprintf(&b, "exit %d\n", code)
			writeBlock(&b, "stdout", h.shorten(out.String()), 14)
			writeBlock(&b, "stderr", h.shorten(errb.String()), 6)
			b.WriteString(h.shorten(diffSnapshots(before, after)))
			return b.String()
		})
	})
}

// hostileTree is the fixture every case starts from:
//
//	$D/ok/s.ledger.jsonl, s.jsonl   a prompt left in flight and its transcript
//	$D/random.bin                   1 MB of seeded random bytes
//	$S/huge.jsonl                   a record, a line over the 64 MiB limit, a record
//	                                (built once: $S is never reset)
//	$S/sparse.jsonl                 a record, a 2 GiB line (a sparse hole: NUL
//	                                bytes, no newline), a newline and a record
//	$D/fifo, $D/dir                 a FIFO and a directory
//	$D/fifo-w                       a FIFO with a writer: the test holds it open
//	                                and writes to it without a newline until
//	                                the case ends
//	$D/ledger-out.jsonl, transcript-out.jsonl, dsh-out.jsonl
//	                                symbolic links to files in $OUT
//	$D/dsh/s.jsonl                  the crashed dsh example
//	$D/batch/                       a replay --dir holding a FIFO next to a session
//	$QWEN                           Qwen's layout for workspace /w: sessions
//	                                aaaa… (ledger and transcript), bbbb… (no
//	                                ledger), cccc… (archived), dddd… (no
//	                                transcript), eeee… (ledger linked out),
//	                                ffff… (ledger a FIFO), 9999…-1111…
//	                                (ledger, empty transcript)
//	$QWENOUT                        a runtime whose chats directory links to $OUT
//	$OUT                            files outside every directory named
type hostileTree struct {
	base, d, s, out, qwen, qwenOut string
	// writer holds $D/fifo-w open for writing while a case runs.
	writer *os.File
}

const (
	sessA = "aaaaaaaa-0000-4000-8000-000000000001"
	sessB = "bbbbbbbb-0000-4000-8000-000000000002"
	sessC = "cccccccc-0000-4000-8000-000000000003"
	sessD = "dddddddd-0000-4000-8000-000000000004"
	sessE = "eeeeeeee-0000-4000-8000-000000000005"
	sessF = "ffffffff-0000-4000-8000-000000000006"
	sessG = "99999999-1111-4000-8000-000000000007"
)

const hostileLedger = `{"v":1,"promptId":"p1","state":"in_flight","at":1767225600000}` + "\n"

func newHostileTree(t *testing.T, base string) *hostileTree {
	h := &hostileTree{base: base, d: filepath.Join(base, "d"), s: filepath.Join(base, "static"), out: filepath.Join(base, "outside"),
		qwen: filepath.Join(base, "d", "qwen"), qwenOut: filepath.Join(base, "d", "qwen-linked")}
	// One line longer than the reader's limit, between two valid records.
	huge := append([]byte(hostileLedger), bytes.Repeat([]byte("x"), events.DefaultMaxLineBytes+1)...)
	huge = append(append(huge, '\n'), cliTranscript...)
	if err := os.MkdirAll(h.s, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.s, "huge.jsonl"), huge, 0o600); err != nil {
		t.Fatal(err)
	}
	// 2 GiB of hole between two records: a line 32 times the limit that
	// costs no disk (and reads as NUL bytes, as a file system leaves a
	// region a crash never wrote).
	f, err := os.Create(filepath.Join(h.s, "sparse.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err = f.WriteString(hostileLedger); err == nil {
		_, err = f.WriteAt([]byte("\n"+hostileLedger), int64(len(hostileLedger))+2<<30)
	}
	if cerr := f.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	t.Cleanup(h.stopWriter)
	return h
}

// startWriter opens $D/fifo-w for writing (O_RDWR: the open needs no
// reader) and writes 'x' to it until stopWriter closes it: a reader that
// opened it would get bytes with no newline for ever.
func (h *hostileTree) startWriter(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(h.d, "fifo-w"), os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.writer = f
	go func() {
		chunk := bytes.Repeat([]byte("x"), 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				return // closed by stopWriter
			}
		}
	}()
}

func (h *hostileTree) stopWriter() {
	if h.writer != nil {
		h.writer.Close()
		h.writer = nil
	}
}

// reset rebuilds the tree exactly, so that each case meets the same files.
func (h *hostileTree) reset(t *testing.T) {
	t.Helper()
	h.stopWriter()
	for _, d := range []string{h.d, h.out} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(h.d, "ok", "s.ledger.jsonl"), []byte(hostileLedger))
	write(filepath.Join(h.d, "ok", "s.jsonl"), []byte(cliTranscript))
	r := rand.New(rand.NewPCG(17, 17))
	noise := make([]byte, 1_000_000)
	for i := range noise {
		noise[i] = byte(r.UintN(256))
	}
	write(filepath.Join(h.d, "random.bin"), noise)
	fifo(filepath.Join(h.d, "fifo"))
	fifo(filepath.Join(h.d, "fifo-w"))
	h.startWriter(t)
	if err := os.MkdirAll(filepath.Join(h.d, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(h.out, "victim.ledger.jsonl"), []byte(hostileLedger))
	write(filepath.Join(h.out, "victim.jsonl"), []byte(cliTranscript))
	dsh, err := os.ReadFile("../../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(h.out, "victim-dsh.jsonl"), dsh)
	write(filepath.Join(h.d, "dsh", "s.jsonl"), dsh)
	link("../outside/victim.ledger.jsonl", filepath.Join(h.d, "ledger-out.jsonl"))
	link("../outside/victim.jsonl", filepath.Join(h.d, "transcript-out.jsonl"))
	link("../outside/victim-dsh.jsonl", filepath.Join(h.d, "dsh-out.jsonl"))
	link("../outside", filepath.Join(h.d, "html-dir-out"))
	write(filepath.Join(h.d, "batch", "s.ledger.jsonl"), []byte(hostileLedger))
	write(filepath.Join(h.d, "batch", "s.jsonl"), []byte(cliTranscript))
	fifo(filepath.Join(h.d, "batch", "f.jsonl"))
	link("../outside/victim.jsonl", filepath.Join(h.d, "batch", "v.jsonl"))

	layout := jsonl.NewQwenLayout(h.qwen, "/w")
	at := func(id string, state jsonl.SessionState, ledger bool) string {
		p, err := layout.TranscriptPath(id, state)
		if ledger {
			p, err = layout.LedgerPath(id, state)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, id := range []string{sessA, sessD, sessE, sessF} {
		if id != sessE && id != sessF {
			write(at(id, jsonl.Active, true), []byte(hostileLedger))
		}
	}
	for _, id := range []string{sessA, sessB, sessE, sessF} {
		write(at(id, jsonl.Active, false), []byte(cliTranscript))
	}
	write(at(sessC, jsonl.Archived, false), []byte(cliTranscript))
	write(at(sessC, jsonl.Archived, true), []byte(hostileLedger))
	link(filepath.Join(h.out, "victim.ledger.jsonl"), at(sessE, jsonl.Active, true))
	fifo(at(sessF, jsonl.Active, true))
	write(at(sessG, jsonl.Active, true), []byte(hostileLedger)) // killed right after admission: an empty transcript
	write(at(sessG, jsonl.Active, false), nil)
	outLayout := jsonl.NewQwenLayout(h.qwenOut, "/w")
	link(h.out, outLayout.ChatsDir(jsonl.Active))
	link(filepath.Join(h.out, "victim.ledger.jsonl"), filepath.Join(h.out, sessA+".ledger.jsonl"))
	h.harnessFixtures(t) // harness_hostile_test.go
}

func (h *hostileTree) expand(s string) string {
	return strings.NewReplacer("$QWENOUT", h.qwenOut, "$QWEN", h.qwen, "$OUT", h.out, "$D", h.d, "$S", h.s).Replace(s)
}

func (h *hostileTree) shorten(s string) string {
	return strings.NewReplacer(h.qwenOut, "$QWENOUT", h.qwen, "$QWEN", h.out, "$OUT", h.d, "$D", h.s, "$S", h.base, "$BASE").Replace(s)
}

// writeBlock prints an output stream indented, at most max lines of it.
func writeBlock(b *strings.Builder, name, s string, max int) {
	if s == "" {
		return
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	fmt.Fprintf(b, "%s:\n", name)
	for i, l := range lines {
		if i == max {
			fmt.Fprintf(b, "  ... (%d more lines)\n", len(lines)-max)
			break
		}
		if len(l) > 400 {
			l = l[:400] + "…"
		}
		fmt.Fprintf(b, "  %s\n", l)
	}
}

type fileState struct {
	mode  os.FileMode
	size  int64
	mtime int64 // large files only
	sum   uint32
	link  string
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshot records every entry under root: type, size, checksum, link target.
func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		st := fileState{mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			st.link, _ = os.Readlink(p)
		case info.Mode().IsRegular() && info.Size() > 8<<20:
			// The huge fixture: its size, change time and both ends, so a
			// case costs milliseconds, not a 64 MiB checksum.
			st.size, st.mtime = info.Size(), info.ModTime().UnixNano()
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			buf := make([]byte, 64<<10)
			n, _ := f.ReadAt(buf, 0)
			st.sum = crc32.Checksum(buf[:n], castagnoli)
			n, _ = f.ReadAt(buf, info.Size()-int64(len(buf)))
			st.sum = crc32.Update(st.sum, castagnoli, buf[:n])
			f.Close()
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.size, st.sum = int64(len(data)), crc32.Checksum(data, castagnoli)
		}
		out[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnapshots(before, after map[string]fileState) string {
	var lines []string
	for p, a := range after {
		b, ok := before[p]
		switch {
		case !ok:
			// No size: a created page holds paths, whose length varies.
			lines = append(lines, fmt.Sprintf("  created %s (%s)", p, describeMode(a.mode)))
		case a != b:
			lines = append(lines, fmt.Sprintf("  changed %s (%d -> %d bytes)", p, b.size, a.size))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			lines = append(lines, "  removed "+p)
		}
	}
	if len(lines) == 0 {
		return "files: unchanged\n"
	}
	sort.Strings(lines)
	return "files:\n" + strings.Join(lines, "\n") + "\n"
}

func describeMode(m os.FileMode) string {
	if m.IsRegular() {
		return "file"
	}
	return m.Type().String()
}
