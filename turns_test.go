package tailproof_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

const rollout = "/home/user/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-0199c0de-0000-7000-8000-000000000001.jsonl"

// memSession puts fixture at path on a fresh strict memory filesystem.
func memSession(t testing.TB, path, fixture string) (*memory.FS, tailproof.OpenSession) {
	fail := func(err error) {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	b, err := os.ReadFile(fixture)
	if err != nil {
		fail(err)
	}
	m := memory.NewFS()
	if err := m.MkdirAll(path[:strings.LastIndexByte(path, '/')], 0o700); err != nil {
		fail(err)
	}
	if err := m.WriteFile(path, b, 0o600); err != nil {
		fail(err)
	}
	return m, opener(m, path)
}

func opener(m *memory.FS, path string) tailproof.OpenSession {
	return func(context.Context) (io.ReadCloser, error) { return m.OpenFile(path, os.O_RDONLY, 0) }
}

// A Codex session cut mid tool call: the first turn completed, the second
// was writing its tool's output when the process died (a torn final line).
// reconcile stamps both in the sidecar, once; repair cuts the fragment; the
// verdicts are the same before and after.
func ExampleReconcileTurns() {
	ctx := context.Background()
	m, open := memSession(nil, rollout, "testdata/turns/codex-crashed.jsonl")
	side := harnessfs.NewSidecar(m, rollout)
	o := tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 1796029200000}

	res, _ := tailproof.ReconcileTurns(ctx, open, side, o)
	for _, r := range res.Appended {
		fmt.Println(r.Describe())
	}
	again, _ := tailproof.ReconcileTurns(ctx, open, side, o)
	fmt.Println("second run appended", len(again.Appended), "of", again.AlreadyStamped, "stamped")

	rep, _ := harnessfs.Repair(ctx, m, rollout, codex.Harness(), harnessfs.RepairOptions{})
	fmt.Println("repair:", rep.Action, rep.Bytes, "bytes at offset", rep.Offset)
	st, _ := tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness(), WriterStopped: true, Ledger: side})
	fmt.Println("last turn", st.Last.Turn, st.Last.Verdict, "stamped", st.Stamp.Terminal, st.Stamp.Code)
	// Output:
	// TERM t1 completed stopReason=reconstructed_from_transcript at=1796029200000
	// TERM t2 interrupted code=daemon_lost at=1796029200000
	// second run appended 0 of 2 stamped
	// repair: cut 124 bytes at offset 2066
	// last turn t2 interrupted stamped interrupted daemon_lost
}

func TestTurnStatusKeepsAnOpenTurnUnknownUntilTheWriterStopped(t *testing.T) {
	ctx := context.Background()
	_, open := memSession(t, rollout, "testdata/turns/codex-crashed.jsonl")
	st, err := tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness()})
	if err != nil {
		t.Fatal(err)
	}
	if st.Turns != 2 || st.Last.Verdict != "unknown" {
		t.Fatalf("writer maybe live: %d turns, last %s", st.Turns, st.Last.Verdict)
	}
	st, err = tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness(), WriterStopped: true})
	if err != nil {
		t.Fatal(err)
	}
	d := st.Last
	if d.Verdict != "interrupted" || len(d.Resend) != 1 || d.Resend[0].Text != "delete b.go" ||
		len(d.Dangling) != 1 || d.Dangling[0].ID != "c2" {
		t.Fatalf("writer stopped: %s", d.Describe())
	}
	if st.Damage != 0 {
		t.Fatalf("a torn final fragment is not damage: %d", st.Damage)
	}
}

// The sidecar holds the v1 lines Qwen's ledger writer would write, and a
// terminal already there is never written again — even when the file has
// grown since and the turn would now be decided otherwise.
func TestReconcileTurnsNeverStampsATurnTwice(t *testing.T) {
	ctx := context.Background()
	m, open := memSession(t, rollout, "testdata/turns/codex-crashed.jsonl")
	side := harnessfs.NewSidecar(m, rollout)
	o := tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 7}
	if _, err := tailproof.ReconcileTurns(ctx, open, side, o); err != nil {
		t.Fatal(err)
	}
	got, _ := m.ReadFile(harnessfs.SidecarPath(rollout))
	want := `{"v":1,"promptId":"t1","terminal":"completed","stopReason":"reconstructed_from_transcript","at":7}` + "\n" +
		`{"v":1,"promptId":"t2","terminal":"interrupted","code":"daemon_lost","at":7}` + "\n"
	if string(got) != want {
		t.Fatalf("sidecar:\n%s\nwant:\n%s", got, want)
	}
	// The harness resumes and, improbably, completes t2 after all.
	f, _ := m.OpenFile(rollout, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("\n" + `{"timestamp":"2026-11-30T09:05:00.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t2"}}` + "\n"))
	f.Close()
	res, err := tailproof.ReconcileTurns(ctx, open, side, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Appended) != 0 {
		t.Fatalf("restamped: %v", res.Appended)
	}
}

// A live writer refuses the whole run: nothing is appended.
func TestReconcileTurnsRefusesALiveWriter(t *testing.T) {
	ctx := context.Background()
	m, open := memSession(t, rollout, "testdata/turns/codex-crashed.jsonl")
	side := harnessfs.NewSidecar(m, rollout)
	live := func(context.Context) error { return harnessfs.ErrWriterLive }
	_, err := tailproof.ReconcileTurns(ctx, open, side, tailproof.TurnReconcileOptions{Harness: codex.Harness(), WriterLive: live})
	if !errors.Is(err, harnessfs.ErrWriterLive) {
		t.Fatalf("err %v", err)
	}
	if _, err := m.Stat(harnessfs.SidecarPath(rollout)); err == nil {
		t.Fatal("a sidecar was written for a live writer")
	}
}

// Each decision maps to the terminal the evidence proves.
func TestTurnTerminalStampsWhatTheEvidenceProves(t *testing.T) {
	for _, c := range []struct {
		because string
		end     turn.End
		reason  string
		want    string
	}{
		{"abort-recorded", turn.EndInterrupted, "replaced", "TERM k interrupted code=harness_aborted stopReason=replaced at=1"},
		{"abort-recorded", turn.EndFailed, "boom", "TERM k error code=harness_failed stopReason=boom at=1"},
		{"abort-recorded", turn.EndCancelled, "", "TERM k cancelled code=harness_cancelled at=1"},
		{"interrupt-marker", turn.EndUnstated, "", "TERM k interrupted code=harness_aborted stopReason=interrupt_marker at=1"},
		{"unfinished-work", turn.EndNone, "", "TERM k interrupted code=daemon_lost at=1"},
	} {
		d := decision("interrupted", c.because, c.end, c.reason)
		r, ok := tailproof.TurnTerminal(d, 1)
		if !ok || r.Describe() != c.want {
			t.Errorf("%s/%s: %v %q, want %q", c.because, c.end, ok, r.Describe(), c.want)
		}
	}
	if _, ok := tailproof.TurnTerminal(decision("unknown", "", turn.EndNone, ""), 1); ok {
		t.Error("an unknown turn got a terminal")
	}
}

func decision(v turnverdict.Verdict, because string, end turn.End, reason string) turnverdict.Decision {
	return turnverdict.Decision{Turn: "k", Verdict: v, Because: because, HarnessEnd: end, EndReason: reason}
}

// A turn a notification opened and the crash cut: nothing to resend, and
// the plan says why — a notification is never resent as if typed (#90526).
func TestTurnStatusNeverResendsANotification(t *testing.T) {
	const path = "/home/user/.claude/projects/-work-demo/5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4.jsonl"
	b, _ := os.ReadFile("testdata/turns/claude-session.jsonl")
	lines := strings.SplitAfter(string(b), "\n")
	m := memory.NewFS()
	m.WriteFile(path, []byte(strings.Join(lines[:9], "")), 0o600) // up to the notification prompt
	st, err := tailproof.TurnStatus(context.Background(), opener(m, path), tailproof.TurnStatusOptions{Harness: claude.Harness(), WriterStopped: true})
	if err != nil {
		t.Fatal(err)
	}
	d := st.Last
	vetoed := false
	for _, v := range d.ResendVetoes {
		vetoed = vetoed || v.Guard == "prompt-recorded"
	}
	if d.Verdict != "interrupted" || len(d.Resend) != 0 || !vetoed {
		t.Fatalf("%s", d.Describe())
	}
}

// The last turn of a session whose writer may still be running is unknown;
// once the writer is known to be gone, the evidence decides it.
func ExampleTurnStatus() {
	ctx := context.Background()
	_, open := memSession(nil, rollout, "testdata/turns/codex-crashed.jsonl")
	for _, stopped := range []bool{false, true} {
		st, _ := tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness(), WriterStopped: stopped})
		d := st.Last
		fmt.Printf("writer stopped %v: turn %s %s", stopped, d.Turn, d.Verdict)
		if len(d.Resend) > 0 {
			fmt.Printf(", resend %q, dangling %s", d.Resend[0].Text, d.Dangling[0].ID)
		}
		fmt.Println()
	}
	// Output:
	// writer stopped false: turn t2 unknown
	// writer stopped true: turn t2 interrupted, resend "delete b.go", dangling c2
}

// Stepping through a session line by line: each turn is decided when the
// next one opens, the last at the end.
func ExampleReplayTurns() {
	_, open := memSession(nil, rollout, "testdata/turns/codex-crashed.jsonl")
	tailproof.ReplayTurns(context.Background(), open, codex.Harness(), true, func(st tailproof.TurnStep) error {
		where := st.Pos.String()
		if st.Final {
			where = "the end"
		}
		for _, d := range st.Decided {
			fmt.Printf("at %s: turn %s %s\n", where, d.Turn, d.Verdict)
		}
		if st.Damage != nil {
			fmt.Printf("at %s: %v\n", st.Pos, st.Damage.Kind)
		}
		return nil
	})
	// Output:
	// at line 11, offset 1649: turn t1 completed
	// at line 14, offset 2066: torn tail
	// at the end: turn t2 interrupted
}

// A sidecar someone damaged (a garbage line, a torn last line) is read the
// way Qwen's reader reads a ledger — bad lines dropped — and appended to
// after a sealing newline, so no stamp fuses with the fragment.
func TestReconcileTurnsOverADamagedSidecar(t *testing.T) {
	ctx := context.Background()
	m, open := memSession(t, rollout, "testdata/turns/codex-crashed.jsonl")
	side := harnessfs.NewSidecar(m, rollout)
	m.WriteFile(side.Path(), []byte("garbage\n{\"v\":1,\"promptId\":\"t1\",\"termi"), 0o600)
	o := tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 9}
	res, err := tailproof.ReconcileTurns(ctx, open, side, o)
	if err != nil || len(res.Appended) != 2 {
		t.Fatalf("%v, %d appended", err, len(res.Appended))
	}
	got, _ := m.ReadFile(side.Path())
	if !strings.HasSuffix(string(got), "termi\n"+`{"v":1,"promptId":"t1","terminal":"completed","stopReason":"reconstructed_from_transcript","at":9}`+"\n"+
		`{"v":1,"promptId":"t2","terminal":"interrupted","code":"daemon_lost","at":9}`+"\n") {
		t.Fatalf("sidecar:\n%q", got)
	}
	if again, _ := tailproof.ReconcileTurns(ctx, open, side, o); len(again.Appended) != 0 {
		t.Fatalf("second run appended %d", len(again.Appended))
	}
}

// A session file that is missing is an error naming it; nothing is created.
func TestReconcileTurnsOnAMissingFile(t *testing.T) {
	m := memory.NewFS()
	side := harnessfs.NewSidecar(m, rollout)
	_, err := tailproof.ReconcileTurns(context.Background(), opener(m, rollout), side, tailproof.TurnReconcileOptions{Harness: codex.Harness()})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%v", err)
	}
	if _, err := m.Stat(side.Path()); err == nil {
		t.Fatal("a sidecar was created")
	}
}

// A line over the reader's limit is damage at its position, never held in
// memory, and the turn around it is unknown — so nothing is stamped for it.
func TestReconcileTurnsWithAHugeLine(t *testing.T) {
	b, _ := os.ReadFile("testdata/turns/codex-crashed.jsonl")
	lines := strings.SplitAfter(string(b), "\n")
	huge := `{"timestamp":"2026-11-30T09:01:01.500Z","type":"response_item","payload":{"type":"reasoning","encrypted_content":"` + strings.Repeat("A", 1<<20) + `"}}` + "\n"
	file := strings.Join(lines[:12], "") + huge + strings.Join(lines[12:], "")
	m := memory.NewFS()
	m.WriteFile(rollout, []byte(file), 0o600)
	h := codex.Harness()
	h.Options.MaxLineBytes = 64 << 10
	res, err := tailproof.ReconcileTurns(context.Background(), opener(m, rollout), harnessfs.NewSidecar(m, rollout), tailproof.TurnReconcileOptions{Harness: h})
	if err != nil {
		t.Fatal(err)
	}
	if res.Damage != 1 || res.Unknown != 1 || len(res.Appended) != 1 || res.Appended[0].PromptID != "t1" {
		t.Fatalf("%+v", res)
	}
}

// The `turn` object status prints: the last turn of the crashed session,
// decided once the writer is known to be gone.
func TestSummaryJSON(t *testing.T) {
	ctx := context.Background()
	m, open := memSession(t, rollout, "testdata/turns/codex-crashed.jsonl")
	side := harnessfs.NewSidecar(m, rollout)
	tailproof.ReconcileTurns(ctx, open, side, tailproof.TurnReconcileOptions{Harness: codex.Harness(), Now: 5})
	st, err := tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness(), WriterStopped: true, Ledger: side})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tailproof.Summary(*st.Last, st.Stamp))
	want := `{"id":"t2","verdict":"interrupted","because":"unfinished-work","vetoes":[],"harnessEnd":"none",` +
		`"resend":[{"text":"delete b.go","line":12,"origin":"structural"}],"resendVetoes":[],` +
		`"danglingCalls":[{"id":"c2","name":"shell","line":13,"ran":false}],` +
		`"stamp":{"terminal":"interrupted","code":"daemon_lost","at":5}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	st, _ = tailproof.TurnStatus(ctx, open, tailproof.TurnStatusOptions{Harness: codex.Harness()})
	b, _ = json.Marshal(tailproof.Summary(*st.Last, nil))
	if !strings.Contains(string(b), `"verdict":"unknown"`) || !strings.Contains(string(b), `"guard":"turn-over"`) {
		t.Fatalf("writer maybe live: %s", b)
	}
}
