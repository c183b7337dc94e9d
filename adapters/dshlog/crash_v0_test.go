package dshlog_test

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

const v0CrashPath = "/r/--w--/s1/session.jsonl"

// v0Torn is v0Log (recover_v0_test.go) in enc: raw as is, zstd as a header
// frame, one frame per batch and a torn last frame.
func v0Torn(enc v0.Encoding) []byte {
	if enc == v0.Raw {
		return []byte(v0Log)
	}
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	lines := strings.SplitAfter(v0Log, "\n")
	out := w.EncodeAll([]byte(lines[0]), nil)
	out = w.EncodeAll([]byte(strings.Join(lines[1:4], "")), out)
	last := w.EncodeAll([]byte(strings.Join(lines[4:7], "")), nil)
	return append(out, last[:len(last)-5]...)
}

func v0Events(t *testing.T, m *memory.FS, p string, enc v0.Encoding) []string {
	t.Helper()
	b, err := m.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var fold dshrecovery.Fold
	if _, err := v0.Scan(bytes.NewReader(b), enc, v0.Options{}, func(r v0.Record) error {
		out = append(out, string(r.AppendJSON(nil)))
		return fold.Apply(r)
	}); err != nil {
		t.Fatalf("re-read: %v", err)
	}
	if cl, err := fold.Closers(); err != nil || len(cl) > 0 {
		t.Fatalf("not balanced: %d closers, %v", len(cl), err)
	}
	return out
}

// TestRecoverV0CrashAtEveryOperation crashes the strict memory filesystem at
// every operation of a v0 repair (losing, or keeping, the unsynced bytes),
// then recovers again: the second recovery must reach the same balanced log
// as an undisturbed one, and the original bytes must never be lost.
func TestRecoverV0CrashAtEveryOperation(t *testing.T) {
	for _, enc := range []v0.Encoding{v0.Raw, v0.Zstd} {
		p := v0CrashPath
		if enc == v0.Zstd {
			p += ".zstd"
		}
		setup := func() *memory.FS {
			m := memory.NewFS()
			m.MkdirAll(path.Dir(p), 0o700)
			if err := m.WriteFile(p, v0Torn(enc), 0o600); err != nil {
				t.Fatal(err)
			}
			m.CrashKeeping(func(string, []byte) int { return 0 }) // the log is durable before the repair
			return m
		}
		clean := setup()
		if _, err := dshlog.RecoverV0(clean, p, v0.Options{}); err != nil {
			t.Fatal(err)
		}
		want := v0Events(t, clean, p, enc)
		crashes := 0
		for _, op := range []memory.Op{memory.OpWrite, memory.OpSync, memory.OpTruncate, memory.OpLink} {
			for nth := 1; ; nth++ {
				for _, keep := range []bool{false, true} {
					m := setup()
					m.Inject(memory.Fault{Op: op, Nth: nth, Crash: true, Torn: 7})
					_, err := dshlog.RecoverV0(m, p, v0.Options{})
					if err == nil {
						if keep {
							goto nextOp // the repair finished before the nth op: every point is covered
						}
						continue
					}
					if !errors.Is(err, memory.ErrCrashed) {
						t.Fatalf("%v %s #%d: %v", enc, op, nth, err)
					}
					crashes++
					m.ClearFaults()
					m.CrashKeeping(func(_ string, b []byte) int {
						if keep {
							return len(b)
						}
						return 0
					})
					if _, err := dshlog.RecoverV0(m, p, v0.Options{}); err != nil {
						t.Fatalf("%v crash at %s #%d (keep=%v): recovery after the crash: %v", enc, op, nth, keep, err)
					}
					if got := v0Events(t, m, p, enc); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("%v crash at %s #%d (keep=%v): %d events, want %d", enc, op, nth, keep, len(got), len(want))
					}
					orig := v0Torn(enc)
					if now, _ := m.ReadFile(p); !bytes.HasPrefix(now, orig) {
						kept, err := m.ReadFile(fmt.Sprintf("%s.broken-%d", p, len(orig)))
						if err != nil || !bytes.Equal(kept, orig) {
							t.Fatalf("%v crash at %s #%d (keep=%v): bytes were cut and the original is lost: %v", enc, op, nth, keep, err)
						}
					}
				}
			}
		nextOp:
		}
		if crashes < 4 {
			t.Fatalf("%v: only %d crash points", enc, crashes)
		}
	}
}

// FuzzRecoverV0: any raw content is either refused with the file unchanged,
// or recovered to a balanced log whose kept prefix is untouched, with the
// original kept aside when bytes were cut; recovery is then a no-op.
//
//	go test -run='^$' -fuzz=FuzzRecoverV0 -fuzztime=60s ./adapters/dshlog
func FuzzRecoverV0(f *testing.F) {
	f.Add([]byte(v0Log))
	f.Add([]byte(strings.Join(strings.Split(v0Log, "\n")[:7], "\n") + "\n"))
	f.Add([]byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w","delegationDepth":0}` + "\n{not json\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		m := memory.NewFS()
		m.MkdirAll(path.Dir(v0CrashPath), 0o700)
		if err := m.WriteFile(v0CrashPath, content, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := dshlog.RecoverV0(m, v0CrashPath, v0.Options{})
		after, _ := m.ReadFile(v0CrashPath)
		if err != nil {
			if !bytes.Equal(after, content) {
				t.Fatalf("refused log was changed: %v", err)
			}
			return
		}
		kept := int64(len(content))
		if rec.Plan.Cut >= 0 {
			kept = rec.Plan.Cut
			if ev, err := m.ReadFile(rec.Evidence); err != nil || !bytes.Equal(ev, content) {
				t.Fatalf("evidence missing or different: %v", err)
			}
		}
		if !bytes.Equal(after[:kept], content[:kept]) {
			t.Fatal("kept prefix rewritten")
		}
		v0Events(t, m, v0CrashPath, v0.Raw)
		again, err := dshlog.RecoverV0(m, v0CrashPath, v0.Options{})
		if err != nil || !again.Plan.Noop() {
			t.Fatalf("not idempotent: %v %+v", err, again.Plan)
		}
	})
}
