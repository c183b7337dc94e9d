package dshlog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/dsh"
)

func dshSummary(recs []dsh.Record) string {
	if len(recs) == 0 {
		return "events: none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "events: %d (seq %d..%d)", len(recs), recs[0].Seq, recs[len(recs)-1].Seq)
	for i, r := range recs {
		if i%6 == 0 {
			b.WriteString("\n ")
		}
		b.WriteString(" " + r.Type)
	}
	return b.String()
}

func TestDSHRecoverScenarios(t *testing.T) {
	datadriven.RunTest(t, "testdata/recover_v1.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "recover" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		input := d.Input
		if !d.HasArg("no-final-newline") {
			input += "\n"
		}
		m := memory.NewFS()
		const path = "/r/s.jsonl"
		if err := m.MkdirAll("/r", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(path, []byte(input), 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := dshlog.RecoverV1(m, path)
		after, rerr := m.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		var out strings.Builder
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			if string(after) == input {
				out.WriteString("file unchanged\n")
			} else {
				out.WriteString("FILE CHANGED\n")
			}
			return out.String()
		}
		fmt.Fprintln(&out, dshSummary(rec.Events))
		if rec.Repair.TruncatedBytes > 0 {
			ev, err := m.ReadFile(rec.Repair.Evidence)
			kept := "evidence MISSING"
			if err == nil && string(ev) == input {
				kept = "original kept as " + filepath.Base(rec.Repair.Evidence)
			}
			fmt.Fprintf(&out, "truncated: %d of %d bytes; %s\n", rec.Repair.TruncatedBytes, len(input), kept)
		}
		for _, c := range rec.Repair.Closers {
			fmt.Fprintf(&out, "closer: %s\n", dsh.AppendRecord(nil, c))
		}
		committed := int64(len(input)) - rec.Repair.TruncatedBytes
		if !bytes.Equal(after[:committed], []byte(input)[:committed]) {
			out.WriteString("COMMITTED PREFIX REWRITTEN\n")
		}
		// What the file holds now is exactly what was returned.
		again, err := dshlog.RecoverV1(m, path)
		if err != nil || len(again.Repair.Closers) != 0 || again.Repair.TruncatedBytes != 0 || len(again.Events) != len(rec.Events) {
			fmt.Fprintf(&out, "NOT IDEMPOTENT: %v %+v\n", err, again.Repair)
		}
		return out.String()
	})
}

func TestDSHEncodeSegment(t *testing.T) {
	for in, want := range map[string]string{
		"a/b": "a~002Fb", "/etc/passwd": "~002Fetc~002Fpasswd", "a\x00b": "a~0000b",
		"plain-ID_1.2": "plain-ID_1.2", "a~b": "a~007Eb", ".": "~002E", "..": "~002E~002E",
		"\xed\xa0\x80": "~D800", "\xed\xb0\x80": "~DC00", "é": "~00E9", "😀": "~D83D~DE00",
		"../../etc/pwn": "..~002F..~002Fetc~002Fpwn",
	} {
		got, err := dshlog.EncodeSegment(in)
		if err != nil || got != want {
			t.Errorf("encode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := dshlog.EncodeSegment(""); !errors.Is(err, adapters.ErrInvalidSessionID) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty: %v", err)
	}
	if _, err := dshlog.EncodeSegment("a\xffb"); !errors.Is(err, adapters.ErrInvalidSessionID) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	slash, _ := dshlog.EncodeSegment("/")
	lit, _ := dshlog.EncodeSegment("~002F")
	if slash == lit {
		t.Error("'~002F' and '/' collide")
	}
	if got := dshlog.Bucket(dshPtr("/proj")); got != "cwd-79903f0c2002" {
		t.Errorf("bucket(/proj) = %s", got)
	}
	if got := dshlog.Bucket(nil); got != "_no-cwd" {
		t.Errorf("bucket(nil) = %s", got)
	}
}

func FuzzDSHEncodeSegment(f *testing.F) {
	for _, s := range []string{"a/b", "..", "~", "\xed\xa0\x80", "😀", "a\x00", "\xff"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, erra := dshlog.EncodeSegment(a)
		eb, errb := dshlog.EncodeSegment(b)
		if erra != nil || errb != nil {
			return
		}
		if strings.ContainsAny(ea, "/\\\x00") || ea == "." || ea == ".." {
			t.Fatalf("encode(%q) = %q is not one safe segment", a, ea)
		}
		if a != b && ea == eb {
			t.Fatalf("encode(%q) == encode(%q) == %q", a, b, ea)
		}
	})
}

func dshPtr(s string) *string { return &s }

var dshBG = context.Background()

func dshOSLog(t *testing.T) (*dshlog.Log, string) {
	root := filepath.Join(t.TempDir(), "root")
	return dshlog.New(vfs.OS, root, dshlog.Options{}), root
}

func dshMustAppend(t *testing.T, l adapters.SessionLog, id string, recs ...dsh.Record) {
	t.Helper()
	if err := l.Append(dshBG, id, recs); err != nil {
		t.Fatal(err)
	}
}

// Lazy materialization, exact bytes, and the permissions dsh uses.
func TestDSHLayoutAndBytes(t *testing.T) {
	l, root := dshOSLog(t)
	m := adaptertest.SLMeta("lazy", "/work")
	if err := l.Create(dshBG, m); err != nil {
		t.Fatal(err)
	}
	path, _ := l.LogPath(dshPtr("/work"), "lazy")
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("log exists before the first append: %v", err)
	}
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("root created before the first append: %v", err)
	}
	dshMustAppend(t, l, "lazy", adaptertest.OneTurnLog()...)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"session","version":1,"id":"lazy","createdAt":1000,"cwd":"/work"}` + "\n"
	for _, r := range adaptertest.OneTurnLog() {
		want += string(dsh.AppendRecord(nil, r)) + "\n"
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatal(diff)
	}
	if !strings.Contains(want, `{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}}`) {
		t.Fatal("fixture bytes are not dsh's")
	}
	for p, perm := range map[string]fs.FileMode{path: 0o600, filepath.Dir(path): 0o700, strings.TrimSuffix(path, ".jsonl") + ".summary.json": 0o600} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&^perm != 0 {
			t.Errorf("%s has mode %v, wider than %v", p, info.Mode().Perm(), perm)
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// JSONL 3: the torn-tail crash, then resumption.
func TestDSHTornTailCrash(t *testing.T) {
	l, _ := dshOSLog(t)
	if err := l.Create(dshBG, adaptertest.SLMeta("torn", "/w")); err != nil {
		t.Fatal(err)
	}
	dshMustAppend(t, l, "torn", adaptertest.OneTurnLog()...)
	path, _ := l.LogPath(dshPtr("/w"), "torn")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw := `{"type":"turn/start","seq":6,"time":7,"data":{"turn":2,"trigger":{"kind":"message","source":{"kind":"user"}}}}` + "\n" +
		`{"type":"step/start","seq":7,"time":8,"data":{"turn":2,"step":1}}` + "\n" + `{"type":"assistant/chunk","seq":8,"ti`
	f.WriteString(raw)
	f.Close()
	original, _ := os.ReadFile(path)

	fresh := dshlog.New(vfs.OS, l.Root(), dshlog.Options{})
	ls, err := fresh.Load(dshBG, "torn")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Events) != 10 || ls.Events[8].Type != "step/end" || ls.Events[9].Type != "turn/end" {
		t.Fatalf("events %v", ls.Events)
	}
	if ls.Repair.TruncatedBytes != int64(len(`{"type":"assistant/chunk","seq":8,"ti`)) {
		t.Fatalf("truncated %d", ls.Repair.TruncatedBytes)
	}
	evidence, err := os.ReadFile(ls.Repair.Evidence)
	if err != nil || !bytes.Equal(evidence, original) {
		t.Fatalf("evidence %s: %v", ls.Repair.Evidence, err)
	}
	if want := path + fmt.Sprintf(".broken-%d", len(original)); ls.Repair.Evidence != want {
		t.Fatalf("evidence at %s, want %s", ls.Repair.Evidence, want)
	}
	dshMustAppend(t, fresh, "torn",
		dsh.NewRecord(10, 11, &dsh.TurnStart{Turn: 3, Trigger: dsh.Trigger{Kind: "continuation"}}),
		dsh.NewRecord(11, 12, &dsh.TurnEnd{Turn: 3, Reason: dsh.Reason{Kind: "completed"}}))
	again, err := dshlog.New(vfs.OS, l.Root(), dshlog.Options{}).Load(dshBG, "torn")
	if err != nil || len(again.Events) != 12 {
		t.Fatalf("%v %d", err, len(again.Events))
	}
	// The listing never mistakes the evidence copy for a session.
	ms, _ := fresh.List(dshBG)
	if len(ms) != 1 {
		t.Fatalf("list %v", ms)
	}
}

// JSONL 5: a failed fsync rolls the file back to its size before the append,
// and the retry continues without a gap or a duplicate.
func TestDSHFailedSyncRollsBack(t *testing.T) {
	l := memory.NewDSHLog()
	if err := l.Create(dshBG, adaptertest.SLMeta("s", "/w")); err != nil {
		t.Fatal(err)
	}
	dshMustAppend(t, l, "s", adaptertest.OneTurnLog()...)
	path, _ := l.LogPath(dshPtr("/w"), "s")
	before, _ := l.Mem().ReadFile(path)
	l.Mem().Inject(memory.Fault{Op: memory.OpSync, Path: path, Err: fmt.Errorf("simulated fsync: %w", syscall.ENOSPC)})
	err := l.Append(dshBG, "s", []dsh.Record{dsh.NewRecord(6, 7, &dsh.TurnStart{Turn: 2, Trigger: dsh.Trigger{Kind: "continuation"}})})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v", err)
	}
	after, _ := l.Mem().ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("file not rolled back: %d -> %d bytes", len(before), len(after))
	}
	dshMustAppend(t, l, "s", dsh.NewRecord(6, 7, &dsh.TurnStart{Turn: 2, Trigger: dsh.Trigger{Kind: "continuation"}}),
		dsh.NewRecord(7, 8, &dsh.TurnEnd{Turn: 2, Reason: dsh.Reason{Kind: "completed"}}))
	ls, err := l.Load(dshBG, "s")
	if err != nil || len(ls.Events) != 8 {
		t.Fatalf("%v %d", err, len(ls.Events))
	}
}

// A failed summary write does not fail the append (the log is the
// transaction); a failed update fails and never becomes durable later.
func TestDSHSummaryFailures(t *testing.T) {
	l := memory.NewDSHLog()
	if err := l.Create(dshBG, adaptertest.SLMeta("s", "/w")); err != nil {
		t.Fatal(err)
	}
	l.Mem().Inject(memory.Fault{Op: memory.OpRename})
	dshMustAppend(t, l, "s", adaptertest.OneTurnLog()...)
	l.Mem().Inject(memory.Fault{Op: memory.OpRename, Err: errors.New("disk full")})
	if err := l.UpdateSummary(dshBG, "s", dsh.SummaryPatch{Title: dshPtr("lost")}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
	dshMustAppend(t, l, "s", dsh.NewRecord(6, 7, &dsh.TurnStart{Turn: 2, Trigger: dsh.Trigger{Kind: "continuation"}}))
	l.Mem().Crash()
	ls, err := memory.NewDSHLogOn(l.Mem(), memory.DefaultDSHRoot, dshlog.Options{}).Load(dshBG, "s")
	if err != nil {
		t.Fatal(err)
	}
	if ls.Meta.Summary.Title != nil {
		t.Fatalf("failed update became durable: %q", *ls.Meta.Summary.Title)
	}
	if len(ls.Events) != 8 {
		t.Fatalf("%d events", len(ls.Events))
	}
}

// JSONL 9: a header rewritten to version 2 is refused.
func TestDSHVersion2Refused(t *testing.T) {
	l, _ := dshOSLog(t)
	l.Create(dshBG, adaptertest.SLMeta("v", "/w"))
	dshMustAppend(t, l, "v", adaptertest.OneTurnLog()...)
	path, _ := l.LogPath(dshPtr("/w"), "v")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte(`"version":1`), []byte(`"version":2`), 1), 0o600)
	_, err := dshlog.New(vfs.OS, l.Root(), dshlog.Options{}).Load(dshBG, "v")
	if !errors.Is(err, adapters.ErrUnsupportedVersion) || !strings.Contains(err.Error(), "version") {
		t.Fatalf("got %v", err)
	}
}

// JSONL 11: a hostile id never writes outside root.
func TestDSHHostileIDStaysUnderRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "a", "b", "root")
	l := dshlog.New(vfs.OS, root, dshlog.Options{})
	for _, id := range []string{"../../etc/pwn", "../../../pwn", "/etc/passwd", "..", "."} {
		for _, cwd := range []*string{nil, dshPtr("../../x")} {
			m := adaptertest.SLMeta(id)
			m.Header.Cwd = cwd
			fresh := dshlog.New(vfs.OS, root, dshlog.Options{})
			if err := fresh.Create(dshBG, m); err != nil {
				if errors.Is(err, adapters.ErrSessionExists) {
					continue
				}
				t.Fatal(err)
			}
			dshMustAppend(t, fresh, id, adaptertest.OneTurnLog()...)
			fresh.UpdateSummary(dshBG, id, dsh.SummaryPatch{Title: dshPtr("t")})
		}
	}
	_ = l
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() && !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Errorf("file written outside root: %s", p)
		}
		return nil
	})
}

// A line over the limit is a hole named by its line, not an allocation.
func TestDSHLineTooLong(t *testing.T) {
	m := memory.NewFS()
	l := memory.NewDSHLogOn(m, "/s", dshlog.Options{MaxLineBytes: 512})
	l.Create(dshBG, adaptertest.SLMeta("big", "/w"))
	big := dsh.NewRecord(1, 2, &dsh.UserMessage{Content: []dsh.Block{{Type: "text", Text: strings.Repeat("x", 1000)}}, Source: dsh.Source{Kind: "user"}})
	log := adaptertest.OneTurnLog()
	log[1] = big
	dshMustAppend(t, l, "big", log...)
	_, err := memory.NewDSHLogOn(m, "/s", dshlog.Options{MaxLineBytes: 512}).Load(dshBG, "big")
	if !errors.Is(err, adapters.ErrCorruptLog) || !strings.Contains(err.Error(), "line 3, offset") || !strings.Contains(err.Error(), "exceeds 512") {
		t.Fatalf("got %v", err)
	}
	// With the default limit it loads.
	if _, err := memory.NewDSHLogOn(m, "/s", dshlog.Options{}).Load(dshBG, "big"); err != nil {
		t.Fatal(err)
	}
}

// dsh §4.3 listing cases: skipped files, long headers, missing and non-directory roots.
func TestDSHList(t *testing.T) {
	l, root := dshOSLog(t)
	l.Create(dshBG, adaptertest.SLMeta("ok", "/w"))
	dshMustAppend(t, l, "ok", adaptertest.OneTurnLog()...)
	bucket := filepath.Join(root, dshlog.Bucket(dshPtr("/w")))
	long := `{"type":"session","version":1,"id":"long","createdAt":5,"pad":"` + strings.Repeat("p", 20<<10) + `"}` + "\n"
	for name, content := range map[string]string{
		"empty.jsonl": "", "noline.jsonl": `{"type":"session","version":1,"id":"x","createdAt":5}`,
		"notjson.jsonl": "nope\n", "nothdr.jsonl": `{"type":"event"}` + "\n", "long.jsonl": long,
	} {
		os.WriteFile(filepath.Join(bucket, name), []byte(content), 0o600)
	}
	ms, err := l.List(dshBG)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.Header.ID)
	}
	if diff := cmp.Diff([]string{"long", "ok"}, ids); diff != "" {
		t.Fatal(diff)
	}
	if ms[0].Summary.UpdatedAt != 5 {
		t.Fatalf("without a summary updatedAt is createdAt: %v", ms[0].Summary.UpdatedAt)
	}
	missing := dshlog.New(vfs.OS, filepath.Join(root, "nope"), dshlog.Options{})
	if ms, err := missing.List(dshBG); err != nil || len(ms) != 0 {
		t.Fatalf("missing root: %v %v", ms, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := dshlog.New(vfs.OS, file, dshlog.Options{}).List(dshBG); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("root is a file: %v", err)
	}
	// A tracked session whose bucket path is a file: has reports the error.
	r2 := filepath.Join(t.TempDir(), "r2")
	os.MkdirAll(r2, 0o700)
	os.WriteFile(filepath.Join(r2, dshlog.Bucket(dshPtr("/x"))), nil, 0o600)
	l2 := dshlog.New(vfs.OS, r2, dshlog.Options{})
	l2.Create(dshBG, adaptertest.SLMeta("h", "/x"))
	if _, err := l2.Has(dshBG, "h"); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("bucket is a file: %v", err)
	}
}

// When even the rollback of a failed append fails, the file may end in a
// fragment: the next append must not land after it.
func TestDSHFailedRollbackIsRepairedBeforeTheNextAppend(t *testing.T) {
	l := memory.NewDSHLog()
	l.Create(dshBG, adaptertest.SLMeta("s", "/w"))
	dshMustAppend(t, l, "s", adaptertest.OneTurnLog()...)
	path, _ := l.LogPath(dshPtr("/w"), "s")
	l.Mem().Inject(memory.Fault{Op: memory.OpWrite, Path: path, Torn: 20})
	l.Mem().Inject(memory.Fault{Op: memory.OpTruncate, Path: path})
	next := dsh.NewRecord(6, 7, &dsh.TurnStart{Turn: 2, Trigger: dsh.Trigger{Kind: "continuation"}})
	if err := l.Append(dshBG, "s", []dsh.Record{next}); err == nil {
		t.Fatal("append succeeded")
	}
	dshMustAppend(t, l, "s", next, dsh.NewRecord(7, 8, &dsh.TurnEnd{Turn: 2, Reason: dsh.Reason{Kind: "completed"}}))
	ls, err := memory.NewDSHLogOn(l.Mem(), memory.DefaultDSHRoot, dshlog.Options{}).Load(dshBG, "s")
	if err != nil || len(ls.Events) != 8 {
		t.Fatalf("%v %d", err, len(ls.Events))
	}
}

// Append reports the first index whose seq does not continue the log, with
// the seq it expected there, and a record that cannot be written before any
// seq problem — the rule stated as the loop over the batch it replaced.
func TestDSHAppendNamesTheFirstBadSeq(t *testing.T) {
	rec := func(seq int64) dsh.Record {
		return dsh.NewRecord(seq, 1, &dsh.StepStart{Turn: 1, Step: seq})
	}
	model := func(cursor int64, batch []dsh.Record) string {
		for _, r := range batch {
			if _, err := r.Canonical(); err != nil {
				return fmt.Sprintf("dshlog: session %q: %v", "s", err)
			}
		}
		for i, r := range batch {
			if want := cursor + int64(i); r.Seq != want {
				return fmt.Sprintf("dshlog: append seq mismatch for %q: expected %d at index %d, got %d: %v", "s", want, i, r.Seq, adapters.ErrSeqMismatch)
			}
		}
		return ""
	}
	bad := dsh.Record{Type: "step/start", Seq: 3, Time: 1, Data: []byte(`{"turn":`)}
	for _, seqs := range [][]int64{{2}, {3}, {1}, {2, 3, 5}, {2, 2}, {3, 4, 5}, {2, 3, 4, -1}, {-5}, {2, 3, 1 << 62}} {
		for _, withBad := range []bool{false, true} {
			l := memory.NewDSHLog()
			l.Create(dshBG, adaptertest.SLMeta("s"))
			dshMustAppend(t, l, "s", rec(0), rec(1))
			var batch []dsh.Record
			for _, s := range seqs {
				batch = append(batch, rec(s))
			}
			if withBad {
				batch = append(batch, bad)
			}
			want := model(2, batch)
			err := l.Append(dshBG, "s", batch)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("seqs %v (bad record %v): got %q, want %q", seqs, withBad, got, want)
			}
			if want != "" && strings.Contains(want, "seq mismatch") != errors.Is(err, adapters.ErrSeqMismatch) {
				t.Errorf("seqs %v: %v does not wrap ErrSeqMismatch", seqs, err)
			}
		}
	}
}

func TestErrCorruptLogIsEventsErrCorrupt(t *testing.T) {
	err := fmt.Errorf("dshlog: x: %w", adapters.ErrCorruptLog)
	if !errors.Is(err, adapters.ErrCorruptLog) || !errors.Is(err, events.ErrCorrupt) {
		t.Fatalf("%v is not classified as both", err)
	}
	if errors.Is(events.ErrCorrupt, adapters.ErrCorruptLog) {
		t.Fatal("the classification runs one way")
	}
}
