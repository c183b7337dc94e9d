package reconcile_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/events/ledger"
	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// repeatedPrompt is a transcript whose last prompt reuses a promptId first
// seen more than the fingerprinted fold's recent set (4096 ids) earlier:
// the fold cannot prove from fingerprints that the id is not unique, so the
// walk is not exact.
func repeatedPrompt() string {
	var b strings.Builder
	parent := "null"
	n := 0
	add := func(typ, prov, extra, msg string) {
		n++
		uuid := fmt.Sprintf("r%d", n)
		fmt.Fprintf(&b, `{"uuid":%q,"parentUuid":%s,"sessionId":"S","timestamp":"2026-01-01T00:00:%02d.000Z","type":%q,"provenance":%q,"cwd":"/w","version":"0.24.4"%s,"message":%s}`+"\n",
			uuid, parent, n%60, typ, prov, extra, msg)
		parent = fmt.Sprintf("%q", uuid)
	}
	user := func(pid, did string) {
		add("user", "real_user", fmt.Sprintf(`,"promptId":%q,"daemonPromptId":%q`, pid, did), `{"role":"user","parts":[{"text":"go on"}]}`)
	}
	user("P", "D1")
	user("Q", "D9") // unpins P
	for i := range 5000 {
		add("assistant", "assistant_output", "", fmt.Sprintf(`{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"ls"}}]}`, i))
	}
	user("P", "D2")
	add("assistant", "assistant_output", "", `{"role":"model","parts":[{"text":"done"}]}`)
	return b.String()
}

// TestFingerprintWalkFallsBackToExact is the façade's duty (feedTranscript)
// on the core: a fingerprinted walk that is not exact is walked again
// without fingerprints, and the decision is the exact walk's, trace and all.
func TestFingerprintWalkFallsBackToExact(t *testing.T) {
	tr := repeatedPrompt()
	recs := []ledger.Record{ledger.InFlight("P", 1767225600500, "")}
	want := decide(t, reconcile.Tailproof(), recs, tr, -1)

	core := reconcile.New(reconcile.Input{Rules: reconcile.Tailproof()})
	size := int64(len(ledger.Encode(recs[0])) + 1)
	core.AddLedger(recs[0])
	core.EndLedger(1, 0, size)
	core.Fingerprints(true)
	feedWalk(core, tr)
	if core.WalkExact() {
		t.Fatal("a promptId repeated beyond the recent set must make the fingerprinted walk inexact")
	}
	core.Fingerprints(false)
	feed(core, tr)
	if !core.WalkExact() {
		t.Fatal("the exact walk must be exact")
	}
	got := core.Ready()
	if got.NeedFence {
		got = core.Commit(size, nil)
	}
	if len(got.Decisions) != 1 || got.Decisions[0].Verdict != want.Decisions[0].Verdict ||
		strings.Join(got.Decisions[0].Trace, "\n") != strings.Join(want.Decisions[0].Trace, "\n") {
		t.Fatalf("after the exact walk:\n%s\n--- want\n%s", strings.Join(got.Decisions[0].Trace, "\n"), strings.Join(want.Decisions[0].Trace, "\n"))
	}
}

// feedWalk is feed without EndChain: the walk whose exactness the façade
// checks before it ends the chain.
func feedWalk(core *reconcile.Core, transcript string) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(transcript))), nil }
	chain, err := qwen.LoadChain(open, qwen.LoadOptions{})
	if err != nil {
		panic(err)
	}
	core.StartChain()
	_ = chain.Walk(open, func(_ int, e events.Event) error { return core.AddChainEvent(e) })
}
