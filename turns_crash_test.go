package tailproof_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/ledger"
)

// codexTurns is a Codex rollout of n turns, each a prompt and a final
// answer; every one but the last records task_complete (the last was cut by
// the crash).
func codexTurns(n int) []byte {
	var b bytes.Buffer
	ts := `"timestamp":"2026-11-30T09:00:00.000Z"`
	fmt.Fprintf(&b, `{%s,"type":"session_meta","payload":{"id":"0199c0de-0000-7000-8000-000000000001","timestamp":"2026-11-30T09:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.169.0"}}`+"\n", ts)
	for t := 1; t <= n; t++ {
		fmt.Fprintf(&b, `{%[1]s,"type":"turn_context","payload":{"turn_id":"t%[2]d","cwd":"/w","model":"gpt-5.1-codex"}}
{%[1]s,"type":"event_msg","payload":{"type":"task_started","turn_id":"t%[2]d"}}
{%[1]s,"type":"event_msg","payload":{"type":"user_message","message":"step %[2]d","kind":"plain"}}
{%[1]s,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}],"phase":"final_answer"}}
`, ts, t)
		if t < n {
			fmt.Fprintf(&b, `{%s,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t%d","last_agent_message":"ok"}}`+"\n", ts, t)
		}
	}
	return b.Bytes()
}

// reconcileOnce is what `tailproof reconcile --harness codex` does: decide
// the whole file holding the terminals (Collect), then append them in one
// durable append.
func reconcileOnce(m *memory.FS) (tailproof.TurnReconcileResult, error) {
	ctx := context.Background()
	side := harnessfs.NewSidecar(m, rollout)
	res, err := tailproof.ReconcileTurns(ctx, opener(m, rollout), side,
		tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 1796029200000, Collect: true})
	if err != nil {
		return res, err
	}
	return res, side.AppendLedgerSeq(ctx, res.Collected.Lines())
}

func sidecarRecords(t *testing.T, m *memory.FS) ([]ledger.Record, int) {
	t.Helper()
	b, err := m.ReadFile(harnessfs.SidecarPath(rollout))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	recs, dropped, err := ledger.Read(bytes.NewReader(b), false)
	if err != nil {
		t.Fatal(err)
	}
	return recs, dropped
}

// TestReconcileCrashMidAppend crashes the one append of a reconcile run
// whose terminals span several writes (4,000 turns, about 400 KB of lines,
// more than one 256 KiB chunk: two writes) at each of its writes — torn at several
// offsets — and at its fsyncs, reboots keeping none, some or all of the
// unsynced bytes, and checks the contract ADR 0028 states: what survives
// is a prefix of the run's terminals (its last line possibly torn, never
// more than one unreadable line), and a rerun completes it — every turn
// then has exactly the terminal a crash-free run writes, once, and a third
// run appends nothing.
func TestReconcileCrashMidAppend(t *testing.T) {
	const n = 4000
	file := codexTurns(n)
	clean := memory.NewFS()
	clean.WriteFile(rollout, file, 0o600)
	// The last turn is open (no task_complete after its answer): unknown,
	// never stamped.
	res, err := reconcileOnce(clean)
	if err != nil || res.Collected.Len() != n-1 || res.Unknown != 1 {
		t.Fatalf("clean run: %v, %d stamps, %d unknown", err, res.Collected.Len(), res.Unknown)
	}
	want, _ := sidecarRecords(t, clean)
	if len(want) != n-1 {
		t.Fatalf("clean run left %d records", len(want))
	}
	k := len(want)
	side := harnessfs.SidecarPath(rollout)
	faults := []memory.Fault{{Op: memory.OpSync, Path: side, Crash: true}, {Op: memory.OpSyncDir, Crash: true}}
	for nth := 1; nth <= 2; nth++ { // the run's lines take two writes: the test fails if write #2 is never reached
		for _, torn := range []int{0, 1, 4096, 200 << 10} {
			faults = append(faults, memory.Fault{Op: memory.OpWrite, Path: side, Nth: nth, Torn: torn, Crash: true})
		}
	}
	points := 0
	for _, f := range faults {
		for _, keep := range []string{"none", "half", "all"} {
			note := fmt.Sprintf("crash at %s#%d torn %d, keep %s", f.Op, f.Nth, f.Torn, keep)
			m := memory.NewFS()
			m.WriteFile(rollout, file, 0o600)
			m.Inject(f)
			if _, err := reconcileOnce(m); err == nil {
				t.Fatalf("%s: the run succeeded", note)
			}
			if !m.Halted() {
				t.Fatalf("%s: crash point never reached", note)
			}
			m.CrashKeeping(func(_ string, u []byte) int {
				switch keep {
				case "half":
					return len(u) / 2
				case "all":
					return len(u)
				}
				return 0
			})
			m.ClearFaults()
			got, dropped := sidecarRecords(t, m)
			if dropped > 1 || len(got) > k || !slices.EqualFunc(got, want[:len(got)], sameRecord) {
				t.Fatalf("%s: %d records (%d unreadable) are not a prefix of the run's", note, len(got), dropped)
			}
			res, err := reconcileOnce(m)
			if err != nil || res.AlreadyStamped != len(got) || res.Collected.Len() != k-len(got) {
				t.Fatalf("%s: rerun: %v, already %d appended %d after %d survived", note, err, res.AlreadyStamped, res.Collected.Len(), len(got))
			}
			final, dropped := sidecarRecords(t, m)
			if dropped > 1 || !slices.EqualFunc(final, want, sameRecord) {
				t.Fatalf("%s: after the rerun %d records (%d unreadable), want the clean run's %d", note, len(final), dropped, k)
			}
			if res, err := reconcileOnce(m); err != nil || res.Collected.Len() != 0 || res.AlreadyStamped != k {
				t.Fatalf("%s: third run: %v, %d appended", note, err, res.Collected.Len())
			}
			points++
		}
	}
	t.Logf("%d crash points verified", points)
}

func sameRecord(a, b ledger.Record) bool { return bytes.Equal(ledger.Encode(a), ledger.Encode(b)) }

// A full disk at any chunk of the run's append leaves the sidecar as it
// was: the whole round is cut back (jsonl.ErrNotAppended), and a rerun with
// room appends every terminal.
func TestReconcileFullDiskMidAppend(t *testing.T) {
	const n = 4000
	file := codexTurns(n)
	for _, free := range []int64{0, 100, 256 << 10, 300 << 10} {
		m := memory.NewFS()
		m.WriteFile(rollout, file, 0o600)
		q := memory.NewQuota(m, free)
		ctx := context.Background()
		side := harnessfs.NewSidecar(q, rollout)
		res, err := tailproof.ReconcileTurns(ctx, opener(m, rollout), side,
			tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 1, Collect: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := side.AppendLedgerSeq(ctx, res.Collected.Lines()); !errors.Is(err, jsonl.ErrNotAppended) {
			t.Fatalf("%d bytes free: %v", free, err)
		}
		if got, _ := m.ReadFile(side.Path()); len(got) != 0 {
			t.Fatalf("%d bytes free: the failed append left %d bytes", free, len(got))
		}
	}
}
