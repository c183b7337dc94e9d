package tailproof_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/projections/ledgerview"
)

// Whatever bytes the two files hold, a reconciliation does not panic,
// decides only dangling prompts, at most once each, in admission order,
// appends only what it decided, and a second run appends nothing.
//
//	go test -run='^$' -fuzz=FuzzReconcile -fuzztime=60s .
func FuzzReconcile(f *testing.F) {
	f.Add([]byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1767225600500}`+"\n"), []byte(transcript))
	f.Add([]byte(`{"v":1,"promptId":"p1","state":"in_flight","at":1}`+"\n"+`{"v":1,"promptId":"p2","state":"in_flight","at":2}`+"\n"), []byte(transcript+`{"uuid":"x1","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-01T00:00:03.000Z","type":"system","subtype":"turn_result","systemPayload":{"promptId":"p1","state":"completed"}}`+"\n"))
	f.Add([]byte("not a ledger\n{"), []byte("{\"uuid\":"))
	f.Fuzz(func(t *testing.T, ledgerBytes, transcriptBytes []byte) {
		s := memory.NewQwenStore()
		seed(t, s, string(ledgerBytes), string(transcriptBytes))
		recs, _, _ := ledger.Read(bytes.NewReader(ledgerBytes), false)
		view := ledgerview.New()
		for _, r := range recs {
			view.Add(r)
		}
		order := map[string]int{}
		for i, id := range view.Dangling() {
			order[id] = i
		}
		for _, reference := range []bool{false, true} {
			opts := tailproof.Options{Now: func() int64 { return 1900000000000 }, DryRun: true, Reference: reference}
			res, err := tailproof.Reconcile(context.Background(), s, sid, opts)
			if err != nil {
				t.Fatalf("reference=%v: %v", reference, err)
			}
			last := -1
			for _, d := range res.Decisions {
				i, ok := order[d.Target]
				if !ok || i <= last {
					t.Fatalf("reference=%v: decision for %q out of admission order or not dangling (%v)", reference, d.Target, view.Dangling())
				}
				last = i
				if (d.Appended != nil) != (d.Verdict == tailproof.VerdictCompleted || d.Verdict == tailproof.VerdictInterrupted) {
					t.Fatalf("reference=%v: verdict %s with appended %v", reference, d.Verdict, d.Appended)
				}
			}
			if reference && len(res.Decisions) > 1 {
				t.Fatalf("the reference's rules decided %d prompts", len(res.Decisions))
			}
		}
		res, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }})
		if err != nil {
			return // an append can fail on a ledger the store refuses to extend; nothing to check
		}
		again, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000001 }})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Appended() {
			for _, a := range again.Appended() {
				if a.Target == d.Target {
					t.Fatalf("%s settled twice", d.Target)
				}
			}
		}
	})
}
