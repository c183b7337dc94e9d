package dshlog_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/dsh"
	"github.com/tailproof/tailproof/projections/turns"
)

const dshCrashRoot = "/s"

// dshCrashLog is a completed turn and an open one whose last record asks for
// a tool call — the record a crash tears.
func dshCrashLog() (durable []dsh.Record, last dsh.Record) {
	durable = append(adaptertest.OneTurnLog(),
		dsh.NewRecord(6, 7, &dsh.TurnStart{Turn: 2, Trigger: dsh.Trigger{Kind: "message", Source: &dsh.Source{Kind: "user"}}}),
		dsh.NewRecord(7, 8, &dsh.StepStart{Turn: 2, Step: 1}))
	last = dsh.NewRecord(8, 9, &dsh.AssistantMessage{Turn: 2, Step: 1, Content: []dsh.Block{
		{Type: "text", Text: "removing"}, {Type: "tool-call", ID: "call_9", Name: "bash", Arguments: `{"command":"rm -r tmp"}`}}})
	return durable, last
}

func recLine(r dsh.Record) string { return string(dsh.AppendRecord(nil, r)) }

// dshCheckRecovered is what every crash must leave: the load succeeds, every
// record that was durable is there unchanged, the log is balanced, a reload
// changes nothing, and the next append is a line of its own.
func dshCheckRecovered(t *testing.T, m *memory.FS, durable []dsh.Record, label string) {
	t.Helper()
	ls, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
	if err != nil {
		t.Fatalf("%s: load: %v", label, err)
	}
	if len(ls.Events) < len(durable) {
		t.Fatalf("%s: %d events, %d were durable", label, len(ls.Events), len(durable))
	}
	for i, r := range durable {
		if recLine(ls.Events[i]) != recLine(r) {
			t.Fatalf("%s: durable record %d changed:\n got %s\nwant %s", label, i, recLine(ls.Events[i]), recLine(r))
		}
	}
	for i, r := range ls.Events {
		if r.Seq != int64(i) {
			t.Fatalf("%s: seq %d at %d", label, r.Seq, i)
		}
	}
	if cl, err := turns.Closers(ls.Events); err != nil || len(cl) != 0 {
		t.Fatalf("%s: not balanced after load: %v %v", label, cl, err)
	}
	again, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
	if err != nil || len(again.Repair.Closers) != 0 || again.Repair.TruncatedBytes != 0 || len(again.Events) != len(ls.Events) {
		t.Fatalf("%s: second load repaired again: %v %+v", label, err, again.Repair)
	}
	n := int64(len(ls.Events))
	next := dsh.NewRecord(n, 100, &dsh.TurnStart{Turn: 3, Trigger: dsh.Trigger{Kind: "continuation"}})
	l := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{})
	if err := l.Append(dshBG, "c", []dsh.Record{next}); err != nil {
		t.Fatalf("%s: next append: %v", label, err)
	}
	after, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
	if err != nil {
		t.Fatalf("%s: reload after append: %v", label, err)
	}
	if len(after.Events) != int(n)+2 || recLine(after.Events[n]) != recLine(next) {
		t.Fatalf("%s: next append fused or lost: %d events", label, len(after.Events))
	}
}

func dshLogPath(t *testing.T) string {
	p, err := dshlog.New(memory.NewFS(), dshCrashRoot, dshlog.Options{}).LogPath(dshPtr("/w"), "c")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dshCrashBytes is the log of dshCrashLog's records: the header, the
// durable records, then last; start is where last begins.
func dshCrashBytes(durable []dsh.Record, last dsh.Record) (full *bytes.Buffer, start int) {
	full = new(bytes.Buffer)
	full.WriteString(`{"type":"session","version":1,"id":"c","createdAt":1000,"cwd":"/w"}` + "\n")
	for _, r := range durable {
		full.WriteString(recLine(r) + "\n")
	}
	start = full.Len()
	full.WriteString(recLine(last) + "\n")
	return full, start
}

// Every byte offset inside the last record: the file holds a durable prefix
// and 0..len(line)+1 bytes of the last record (the +1 is its newline).
func TestDSHCrashAtEveryOffsetOfLastRecord(t *testing.T) {
	durable, last := dshCrashLog()
	path := dshLogPath(t)
	full, start := dshCrashBytes(durable, last)
	for cut := start; cut <= full.Len(); cut++ {
		m := memory.NewFS()
		if err := m.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(path, full.Bytes()[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		want := durable
		if cut == full.Len() {
			want = append(append([]dsh.Record(nil), durable...), last)
		}
		dshCheckRecovered(t, m, want, fmt.Sprintf("cut at %d of %d", cut, full.Len()))
	}
}

// The same through the real write path: the last append tears after k bytes
// and the machine dies; whatever of the unsynced write survives the reboot
// (0..all of it) must recover.
func TestDSHTornAppendThenPowerLoss(t *testing.T) {
	durable, last := dshCrashLog()
	path := dshLogPath(t)
	n := len(recLine(last)) + 1
	for k := 0; k <= n; k++ {
		for _, keep := range []int{0, k / 2, k} {
			m := memory.NewFS()
			l := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{})
			if err := l.Create(dshBG, adaptertest.SLMeta("c", "/w")); err != nil {
				t.Fatal(err)
			}
			if err := l.Append(dshBG, "c", durable); err != nil {
				t.Fatal(err)
			}
			m.Inject(memory.Fault{Op: memory.OpWrite, Path: path, Torn: k, Crash: true})
			if err := l.Append(dshBG, "c", []dsh.Record{last}); err == nil {
				t.Fatalf("k=%d: the torn append succeeded", k)
			}
			m.CrashKeeping(func(name string, unsynced []byte) int {
				if name == path {
					return min(keep, len(unsynced))
				}
				return 0
			})
			dshCheckRecovered(t, m, durable, fmt.Sprintf("torn after %d bytes, %d kept", k, keep))
		}
	}
}

// A crash anywhere inside Load's own repair (evidence copy, truncate, closer
// append) leaves a log the next Load repairs to the same balanced result.
func TestDSHCrashDuringRepair(t *testing.T) {
	durable, last := dshCrashLog()
	path := dshLogPath(t)
	setup := func() *memory.FS {
		m := memory.NewFS()
		l := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{})
		l.Create(dshBG, adaptertest.SLMeta("c", "/w"))
		if err := l.Append(dshBG, "c", append(append([]dsh.Record(nil), durable...), last)); err != nil {
			t.Fatal(err)
		}
		// a torn fragment after the last record, so repair must cut and close
		f, err := m.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(`{"type":"tool/call","seq":9,"ti`))
		f.Sync()
		f.Close()
		return m
	}
	clean, err := memory.NewDSHLogOn(setup(), dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]dsh.Record(nil), durable...), last)
	fired := 0
	for _, op := range []memory.Op{memory.OpOpen, memory.OpRead, memory.OpWrite, memory.OpSync, memory.OpTruncate, memory.OpLink, memory.OpSyncDir, memory.OpStat, memory.OpRemove} {
		for nth := 1; ; nth++ {
			m := setup()
			m.Inject(memory.Fault{Op: op, Nth: nth, Crash: true, Torn: 7})
			_, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
			if !m.Halted() {
				if err != nil {
					t.Fatalf("%s #%d: load failed without a fault: %v", op, nth, err)
				}
				break
			}
			fired++
			label := fmt.Sprintf("crash at %s #%d", op, nth)
			m.CrashKeeping(func(string, []byte) int { return 7 })
			ls, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if len(ls.Events) != len(clean.Events) {
				t.Fatalf("%s: %d events, clean repair gave %d", label, len(ls.Events), len(clean.Events))
			}
			for i := range ls.Events {
				if recLine(ls.Events[i]) != recLine(clean.Events[i]) {
					t.Fatalf("%s: event %d differs from the clean repair", label, i)
				}
			}
			dshCheckRecovered(t, m, want, label)
		}
	}
	if fired < 10 {
		t.Fatalf("only %d crash points exercised", fired)
	}
}

// Materialization and the bucket directory survive power loss once Append
// returns, even when the summary write (whose directory fsync would also
// cover the log's entry) fails.
func TestDSHMaterializeDurableWithoutSummary(t *testing.T) {
	m := memory.NewFS()
	l := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{})
	l.Create(dshBG, adaptertest.SLMeta("c", "/w"))
	m.Inject(memory.Fault{Op: memory.OpRename})
	if err := l.Append(dshBG, "c", adaptertest.OneTurnLog()); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	ls, err := memory.NewDSHLogOn(m, dshCrashRoot, dshlog.Options{}).Load(dshBG, "c")
	if err != nil || len(ls.Events) != 6 {
		t.Fatalf("%v %d", err, len(ls.Events))
	}
	var _ adapters.SessionLog = l
}

// FuzzDSHRecover: any file content either loads to a balanced log whose
// committed prefix is untouched, or is refused with the file unchanged; no
// input panics.
func FuzzDSHRecover(f *testing.F) {
	durable, last := dshCrashLog()
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"c","createdAt":1000}` + "\n")
	for _, r := range durable {
		b.WriteString(recLine(r) + "\n")
	}
	f.Add(b.Bytes())
	b.WriteString(recLine(last)[:40])
	f.Add(b.Bytes())
	f.Add([]byte(`{"type":"session","version":1,"id":"c","createdAt":1}` + "\n{not json\n" + `{"type":"turn/end"}` + "\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		m := memory.NewFS()
		const path = "/r/c.jsonl"
		m.MkdirAll("/r", 0o700)
		if err := m.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := dshlog.RecoverV1(m, path)
		after, _ := m.ReadFile(path)
		if err != nil {
			if !bytes.Equal(after, content) {
				t.Fatalf("refused log was changed: %v", err)
			}
			return
		}
		committed := int64(len(content)) - rec.Repair.TruncatedBytes
		if committed < 0 || !bytes.Equal(after[:committed], content[:committed]) {
			t.Fatal("committed prefix rewritten")
		}
		if cl, err := turns.Closers(rec.Events); err != nil || len(cl) != 0 {
			t.Fatalf("not balanced: %v %v", cl, err)
		}
		if rec.Repair.TruncatedBytes > 0 {
			ev, err := m.ReadFile(rec.Repair.Evidence)
			if err != nil || !bytes.Equal(ev, content) {
				t.Fatalf("evidence missing or different: %v", err)
			}
		}
		again, err := dshlog.RecoverV1(m, path)
		if err != nil || len(again.Events) != len(rec.Events) || again.Repair.TruncatedBytes != 0 || len(again.Repair.Closers) != 0 {
			t.Fatalf("not idempotent: %v %+v", err, again.Repair)
		}
	})
}

// RecoverV1Count decides and repairs every cut of the log exactly as
// RecoverV1 does — the same header, repair and resulting file, and a Count
// that is RecoverV1's len(Events) — while keeping no event; the same refusals.
func TestRecoverV1CountIsRecoverV1WithoutEvents(t *testing.T) {
	full, _ := dshCrashBytes(dshCrashLog())
	path := dshLogPath(t)
	data := full.Bytes()
	damaged := append(append([]byte(nil), data[:len(data)/2]...), append([]byte("{bad\n"), data[len(data)/2:]...)...)
	for _, src := range [][]byte{data, damaged} {
		for cut := 0; cut <= len(src); cut++ {
			var got [2]dshlog.Recovery
			var errs [2]error
			var files [2][]byte
			for i, recover := range []func(vfs.FS, string) (dshlog.Recovery, error){dshlog.RecoverV1, dshlog.RecoverV1Count} {
				m := memory.NewFS()
				if err := m.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := m.WriteFile(path, src[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				got[i], errs[i] = recover(m, path)
				files[i], _ = m.ReadFile(path)
			}
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				t.Fatalf("cut %d: RecoverV1 error %v, RecoverV1Count %v", cut, errs[0], errs[1])
			}
			if errs[0] != nil {
				continue
			}
			if got[1].Events != nil || got[1].Count != int64(len(got[0].Events)) || got[0].Count != got[1].Count {
				t.Fatalf("cut %d: RecoverV1Count kept %d events, counted %d; RecoverV1 has %d (Count %d)", cut, len(got[1].Events), got[1].Count, len(got[0].Events), got[0].Count)
			}
			got[0].Events = nil
			if !reflect.DeepEqual(got[0], got[1]) || !bytes.Equal(files[0], files[1]) {
				t.Fatalf("cut %d: RecoverV1 %+v, RecoverV1Count %+v (files equal: %v)", cut, got[0], got[1], bytes.Equal(files[0], files[1]))
			}
		}
	}
}
