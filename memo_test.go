package tailproof

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// checkMemo decides the scenario's evidence as a dry run without a memo,
// then twice through one TranscriptMemo — the first read decodes and
// remembers, the second is fed from memory — and fails unless all three
// results are the same, traces included.
func checkMemo(t *testing.T, store *memory.QwenStore, sid string, opts Options) {
	t.Helper()
	opts.DryRun = true
	want, werr := Reconcile(context.Background(), store, sid, opts)
	opts.Memo = NewTranscriptMemo(2)
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	for i := range 2 {
		got, err := Reconcile(context.Background(), store, sid, opts)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("memo read %d changed the error: %v, without %v", i+1, err, werr)
		}
		if diff := cmp.Diff(want, got, all); diff != "" {
			t.Fatalf("memo read %d changed the result (-without +with):\n%s", i+1, diff)
		}
	}
	if m := opts.Memo; m.reads > 0 && m.hits != m.reads-1 {
		t.Fatalf("%d walks of an unchanged transcript, %d fed from the memo, want %d", m.reads, m.hits, m.reads-1)
	}
	if l := &opts.Memo.ledger; l.reads > 0 && l.hits != l.reads-1 {
		t.Fatalf("%d reads of an unchanged ledger, %d fed from the memo, want %d", l.reads, l.hits, l.reads-1)
	}
}

// TestMemoKeepsTheLatest: a memo of n keeps the n transcripts read last
// (an evicted entry's arrays are reused for the next), a transcript that
// changed is read afresh, and every result is the plain path's.
func TestMemoKeepsTheLatest(t *testing.T) {
	m := NewTranscriptMemo(2)
	store := memory.NewQwenStore()
	tp, _ := store.Layout().TranscriptPath(testSID, jsonl.Active)
	lp, _ := store.Layout().LedgerPath(testSID, jsonl.Active)
	if err := store.Mem().WriteFile(lp, append(ledger.Encode(ledger.InFlight("p1", 1767225600500, "")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{Now: func() int64 { return 1767225700000 }, DryRun: true, Memo: m}
	read := func(transcript string) {
		t.Helper()
		if err := store.Mem().WriteFile(tp, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Reconcile(context.Background(), store, testSID, opts)
		if err != nil {
			t.Fatal(err)
		}
		plain := opts
		plain.Memo = nil
		want, _ := Reconcile(context.Background(), store, testSID, plain)
		if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Fatalf("memo changed the result (-without +with):\n%s", diff)
		}
	}
	a := memoRecord("u1", "null", "user") + memoRecord("a1", `"u1"`, "assistant")
	b := a + memoRecord("u2", `"a1"`, "user")
	c := b + memoRecord("a2", `"u2"`, "assistant")
	for _, step := range []struct {
		transcript string
		hits       int
	}{{a, 0}, {a, 1}, {b, 1}, {a, 2}, {c, 2}, {b, 2}, {a, 2}, {b, 3}} {
		read(step.transcript)
		if m.hits != step.hits {
			t.Fatalf("after reading a %d-byte transcript: %d hits (%d reads), want %d", len(step.transcript), m.hits, m.reads, step.hits)
		}
	}
}

const testSID = "00000000-0000-4000-8000-0000000000ab"

func memoRecord(uuid, parent, typ string) string {
	role := map[string]string{"user": "user", "assistant": "model"}[typ]
	prov := map[string]string{"user": "real_user", "assistant": "assistant_output"}[typ]
	return `{"uuid":"` + uuid + `","parentUuid":` + parent + `,"sessionId":"` + testSID + `","timestamp":"2026-01-01T00:00:01.000Z","type":"` + typ +
		`","provenance":"` + prov + `","cwd":"/work/project","version":"0.24.4","message":{"role":"` + role + `","parts":[{"text":"x"}]}}` + "\n"
}
