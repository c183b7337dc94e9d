package reconcile_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// A two-record transcript in Qwen Code 0.24.4's shape: the prompt's user
// record and the model's answer.
const answered = `{"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"hello"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/w","version":"0.24.4","message":{"role":"model","parts":[{"text":"hi"}]}}
`

// feed is what the façade does: the chain's index, then one walk.
func feed(core *reconcile.Core, transcript string) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(transcript))), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		core.ChainUnavailable(err, false)
		return
	}
	core.StartChain()
	werr := chain.Walk(open, func(_ int, e events.Event) error { return core.AddChainEvent(e) })
	core.EndChain(chain, werr)
}

// The core is fed evidence and hands back the work: no store, no clock.
func Example() {
	adm := ledger.Encode(ledger.InFlight("p1", 1767225600500, ""))
	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
	core.AddLedger(ledger.InFlight("p1", 1767225600500, ""))
	core.EndLedger(1, 0, int64(len(adm)+1))
	if core.NeedsTranscript() {
		feed(core, answered)
	}
	rd := core.Ready()
	fmt.Println("fence needed:", rd.NeedFence)
	// The caller measures the ledger's size (unchanged here) and commits.
	rd = core.Commit(rd.LedgerSize, nil)
	for _, d := range rd.Decisions {
		fmt.Println(d.Target, d.Verdict, "by", d.Route, "->", d.State)
		fmt.Println(string(ledger.Encode(*d.Appended)))
	}
	// Output:
	// fence needed: true
	// p1 completed by tail-complete -> committed
	// {"v":1,"promptId":"p1","terminal":"completed","stopReason":"reconstructed_from_transcript","at":0}
}

// feedPartial starts a walk and feeds only its first record.
func feedPartial(core *reconcile.Core, transcript string) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(transcript))), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		return
	}
	core.StartChain()
	_ = chain.Walk(open, func(i int, e events.Event) error {
		if i > 0 {
			return io.EOF
		}
		return core.AddChainEvent(e)
	})
}
