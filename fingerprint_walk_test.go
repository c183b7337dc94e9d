package tailproof_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// TestInexactFingerprintWalkIsWalkedAgain: a promptId reused beyond the
// fingerprinted fold's recent set makes the façade walk the transcript a
// second time, and the decision is the exact core's.
func TestInexactFingerprintWalkIsWalkedAgain(t *testing.T) {
	tr := reusedPrompt("P")
	adm := ledger.InFlight("p1", 1767225600500, "")
	opens := func(tr string) (tailproof.Result, int) {
		s := &countingStore{QwenStore: memory.NewQwenStore()}
		seed(t, s.QwenStore, string(ledger.Encode(adm))+"\n", tr)
		res, err := tailproof.Reconcile(context.Background(), s, sid, tailproof.Options{Now: func() int64 { return 1900000000000 }, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return res, s.transcriptOpens
	}
	res, reused := opens(tr)
	if _, fresh := opens(reusedPrompt("R")); reused <= fresh {
		t.Fatalf("transcript opened %d times with the reused promptId, %d without: the inexact walk was not walked again", reused, fresh)
	}

	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
	size := int64(len(ledger.Encode(adm)) + 1)
	core.AddLedger(adm)
	core.EndLedger(1, 0, size)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(tr))), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core.StartChain()
	werr := chain.Walk(open, func(_ int, e events.Event) error { return core.AddChainEvent(e) })
	core.EndChain(chain, werr)
	want := core.Ready()
	if want.NeedFence {
		want = core.Commit(size, nil)
	}
	if len(res.Decisions) != 1 || len(want.Decisions) != 1 || res.Decisions[0].Verdict != want.Decisions[0].Verdict ||
		res.Decisions[0].Route != want.Decisions[0].Route {
		t.Fatalf("decisions %+v, exact core %+v", res.Decisions, want.Decisions)
	}
}

// reusedPrompt is a transcript whose last prompt has promptId last after
// 5000 tool calls, the first prompt's promptId being P.
func reusedPrompt(last string) string {
	var b strings.Builder
	parent, n := "null", 0
	add := func(typ, prov, extra, msg string) {
		n++
		fmt.Fprintf(&b, `{"uuid":"r%d","parentUuid":%s,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":%q,"provenance":%q,"cwd":"/work/project","version":"0.24.4"%s,"message":%s}`+"\n",
			n, parent, typ, prov, extra, msg)
		parent = fmt.Sprintf(`"r%d"`, n)
	}
	for _, p := range []string{"P", "Q"} { // Q unpins P
		add("user", "real_user", `,"promptId":"`+p+`"`, `{"role":"user","parts":[{"text":"go"}]}`)
	}
	for i := range 5000 {
		add("assistant", "assistant_output", "", fmt.Sprintf(`{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"ls"}}]}`, i))
	}
	add("user", "real_user", `,"promptId":"`+last+`"`, `{"role":"user","parts":[{"text":"again"}]}`)
	add("assistant", "assistant_output", "", `{"role":"model","parts":[{"text":"done"}]}`)
	return b.String()
}
