package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events"
	"github.com/tailproof/tailproof/guards"
	"github.com/tailproof/tailproof/machines"
	"github.com/tailproof/tailproof/machines/reconcile"
)

// The golden sessions at the repository root serve the CLI tests too.
var replayRuntime = filepath.Join("..", "..", "testdata", "replay")

const (
	sessCompleted   = "b7e2c4d1-9f3a-4c8e-a5d6-1e2f3a4b5c6d"
	sessInterrupted = "4a9d8c2e-6b1f-4e7a-8c3d-5f6e7a8b9c0d"
	sessDeadline    = "c3d4e5f6-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
)

func replayCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func sessionArgs(id string) []string {
	return []string{"--qwen-runtime", replayRuntime, "--cwd", "/work/golden", "--session", id}
}

// goldenSession is one replay golden's ledger and transcript bytes.
type goldenSession struct {
	id                 string
	ledger, transcript []byte
}

// goldenSessions reads every replay golden session (a ledger and its
// transcript), in directory order.
func goldenSessions(t *testing.T) []goldenSession {
	t.Helper()
	src := filepath.Join(replayRuntime, "projects", "-work-golden", "chats")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenSession
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".ledger.jsonl")
		if !ok {
			continue
		}
		l, err1 := os.ReadFile(filepath.Join(src, e.Name()))
		tr, err2 := os.ReadFile(filepath.Join(src, id+".jsonl"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		out = append(out, goldenSession{id: id, ledger: l, transcript: tr})
	}
	if len(out) == 0 {
		t.Fatalf("no golden sessions under %s", src)
	}
	return out
}

// copySession copies a golden session to explicit files so a test can check
// that replay leaves them byte for byte as they were.
func copySession(t *testing.T, id string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(replayRuntime, "projects", "-work-golden", "chats")
	var paths []string
	for _, name := range []string{id + ".ledger.jsonl", id + ".jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

func TestReplayStepsAndDecision(t *testing.T) {
	lp, tp := copySession(t, sessCompleted)
	before := [2][]byte{}
	before[0], _ = os.ReadFile(lp)
	before[1], _ = os.ReadFile(tp)
	code, out, errs := replayCLI(t, "replay", "--ledger", lp, "--transcript", tp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := len(regexp.MustCompile(`(?m)^step \d+/13 `).FindAllString(out, -1)); n != 13 {
		t.Fatalf("%d step lines, want 13:\n%s", n, out)
	}
	for _, want := range []string{
		"step 8/13  ledger:3 ledger.in_flight",
		"  ledger view:    3 records, dangling [5c9e2b7a-1d3f-4a8c-b6e4-9f0a2c7d1e58]",
		"  timeline:       + #13 notification transcript:10",
		"  verdict:  completed\n",
		"machine commit: proven-completed --> committed",
		"    check-evidence  system-provenance      pass\n",
		"dry run: would append",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	after := [2][]byte{}
	after[0], _ = os.ReadFile(lp)
	after[1], _ = os.ReadFile(tp)
	if !bytes.Equal(before[0], after[0]) || !bytes.Equal(before[1], after[1]) {
		t.Fatal("replay changed the session's files")
	}
	// Same input, same bytes: the clock is the evidence's, not the system's.
	_, again, _ := replayCLI(t, "replay", "--ledger", lp, "--transcript", tp)
	if again != out {
		t.Fatal("two replays of one session differ")
	}
}

func TestReplayJSONSteps(t *testing.T) {
	code, out, errs := replayCLI(t, append([]string{"replay", "--json", "--at", "5"}, sessionArgs(sessDeadline)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 5 steps and a decision:\n%s", len(lines), out)
	}
	for i, l := range lines[:5] {
		var s struct {
			Step    int               `json:"step"`
			Event   string            `json:"event"`
			Changed []json.RawMessage `json:"changed"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil || s.Step != i+1 || s.Event == "" {
			t.Fatalf("line %d: %v %+v", i+1, err, s)
		}
	}
	var d struct {
		Decision struct {
			Verdict string `json:"verdict"`
			Target  string `json:"target"`
			Vetoes  []struct{ Guard, Reason string }
		} `json:"decision"`
		Events int  `json:"events"`
		Crash  bool `json:"crash"`
	}
	if err := json.Unmarshal([]byte(lines[5]), &d); err != nil {
		t.Fatal(err)
	}
	// --at stops the stepping; the decision still covers the recording.
	// The hand-built recording's answer u-04 carries 0.24.4's version but
	// neither telemetry nor usage, which the real writer never writes for a
	// completed answer: call-identity refuses it too (2026-12-01).
	if d.Decision.Verdict != "unknown" || d.Events != 7 || d.Crash || len(d.Decision.Vetoes) != 2 ||
		d.Decision.Vetoes[0].Guard != "call-identity" || d.Decision.Vetoes[1].Guard != "deadline" {
		t.Fatalf("decision %+v", d)
	}
}

func TestReplayCrashAt(t *testing.T) {
	code, out, errs := replayCLI(t, append([]string{"replay", "--crash-at", "3"}, sessionArgs(sessCompleted)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "step 4/") || !strings.Contains(out, "step 3/13") {
		t.Fatalf("--crash-at 3 must step exactly 3 events:\n%s", out)
	}
	if !strings.Contains(out, "crash right after event 3 of 13") || !strings.Contains(out, "verdict:  interrupted") ||
		!strings.Contains(out, "target:   e3a1f9c2-7b4d-4f0e-9a6c-2d8b5e1f7a30") {
		t.Fatalf("crash decision:\n%s", out)
	}
}

func TestReplayCrashAtAllMatchesGolden(t *testing.T) {
	code, out, errs := replayCLI(t, append([]string{"replay", "--crash-at", "all", "--json"}, sessionArgs(sessDeadline)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r crashRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		s := r.Verdict + " " + orDashStr(r.Target)
		if len(r.Guards) > 0 {
			s += " " + strings.Join(r.Guards, ",")
		}
		got = append(got, s)
	}
	b, err := os.ReadFile(filepath.Join(replayRuntime, sessDeadline+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "#") {
			want = append(want, strings.Join(f[1:], " "))
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the CLI's crash table and the golden replay disagree (-golden +cli):\n%s", d)
	}
	code, out, _ = replayCLI(t, append([]string{"replay", "--crash-at", "all"}, sessionArgs(sessDeadline)...)...)
	if code != 0 || !strings.Contains(out, "8 crash points: none 2 interrupted 2 unknown 4") {
		t.Fatalf("table summary:\n%s", out)
	}
}

func TestReplayDSH(t *testing.T) {
	log := filepath.Join("..", "..", "examples", "dsh", "crashed-session.jsonl")
	before, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := replayCLI(t, "replay", "--dsh", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"  turn enclosure: events=1 turn=1 step=closed pending=[]",
		"verdict:  interrupted", "target:   turn 2",
		"append:   turn/end", "repair: cut a torn final fragment of 38 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	after, _ := os.ReadFile(log)
	if !bytes.Equal(before, after) {
		t.Fatal("replay repaired the user's dsh log")
	}
	// Right after turn 1 ended the log is balanced: nothing to close.
	code, out, _ = replayCLI(t, "replay", "--dsh", log, "--crash-at", "21")
	if code != 0 || !strings.Contains(out, "verdict:  balanced") {
		t.Fatalf("crash after turn/end:\n%s", out)
	}
}

func TestReplayBatch(t *testing.T) {
	code, out, errs := replayCLI(t, "replay", "--dir", replayRuntime, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if errs != "" {
		t.Fatalf("a progress bar on a non-terminal stderr: %q", errs)
	}
	var sum batchSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	// 3c1f7a92 (the real daemon's cron-turn session) reads its truth,
	// interrupted, since call identity (ADR 0023) bounds the cut prompt's
	// turn; it read completed before (the serve cron-turn gap).
	want := map[string]int{"completed": 1, "interrupted": 3, "unknown": 2}
	if sum.Sessions != 6 || sum.Dangling != 6 || !cmp.Equal(sum.Verdicts, want) ||
		!cmp.Equal(sum.Vetoes, map[string]int{"call-identity": 1, "deadline": 1, "ownership": 1}) || len(sum.Unreadable) != 0 {
		t.Fatalf("summary %+v", sum)
	}

	// A flat directory of pairs, one of them unreadable.
	dir := t.TempDir()
	lp, tp := copySession(t, sessInterrupted)
	for _, p := range []string{lp, tp} {
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	loop := filepath.Join(dir, "loop.jsonl")
	if err := os.Symlink(loop, loop); err != nil {
		t.Skip("no symlinks:", err)
	}
	code, out, _ = replayCLI(t, "replay", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"sessions:         2", "dangling prompts: 1", "verdicts:         interrupted 1 unreadable 1",
		"unreadable files: 1", "loop.jsonl: open"} {
		if !strings.Contains(out, want) {
			t.Errorf("batch output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplayRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"replay"},
		append([]string{"replay", "--crash-at", "x"}, sessionArgs(sessCompleted)...),
		append([]string{"replay", "--crash-at", "14"}, sessionArgs(sessCompleted)...),
		append([]string{"replay", "--at", "99"}, sessionArgs(sessCompleted)...),
		append([]string{"replay", "--at", "1", "--crash-at", "1"}, sessionArgs(sessCompleted)...),
		{"replay", "--dsh", "x.jsonl", "--session", sessCompleted},
		{"replay", "--dir", replayRuntime, "--crash-at", "1"},
		append([]string{"replay", "--at", "-2"}, sessionArgs(sessCompleted)...),
		append([]string{"replay", "--now", "-5"}, sessionArgs(sessCompleted)...),
	} {
		code, out, errs := replayCLI(t, args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// A path that does not exist is an input error, not a usage error.
	for _, args := range [][]string{
		{"replay", "--dir", filepath.Join(replayRuntime, "nope")},
		{"replay", "--dsh", filepath.Join(replayRuntime, "nope.jsonl")},
	} {
		code, out, errs := replayCLI(t, args...)
		if code != 3 || out != "" || !strings.Contains(errs, "does not exist") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

func TestDiagram(t *testing.T) {
	cases := map[string]machines.Table{
		"reconcile": reconcile.Table, "prompt-lifecycle": machines.LifecycleTable,
		"repair-episode": machines.RepairEpisodeTable, "admission": machines.AdmissionTable(),
	}
	for name, table := range cases {
		code, out, _ := replayCLI(t, "diagram", name)
		if code != 0 || out != table.Mermaid() || !strings.HasPrefix(out, "stateDiagram-v2\n") {
			t.Errorf("%s mermaid: exit %d\n%s", name, code, out)
		}
		code, out, _ = replayCLI(t, "diagram", "--dot", name)
		if code != 0 || out != table.Dot() {
			t.Errorf("%s dot: exit %d\n%s", name, code, out)
		}
	}
	code, out, _ := replayCLI(t, "diagram")
	if code != 0 || strings.Count(out, "stateDiagram-v2") != len(cases) {
		t.Errorf("all machines: exit %d\n%s", code, out)
	}
	if code, _, errs := replayCLI(t, "diagram", "nope"); code != 2 || !strings.Contains(errs, "unknown machine") {
		t.Errorf("unknown machine: exit %d %q", code, errs)
	}
}

// TestReplayGuardListMatchesMachine: replay's per-guard answers must derive
// exactly the vetoes the reconcile machine recorded, at every crash point of
// every golden session, in both rule sets.
func TestReplayGuardListMatchesMachine(t *testing.T) {
	sessions, err := discoverSessions(vfs.OS, replayRuntime)
	if err != nil || len(sessions) == 0 {
		t.Fatal(err)
	}
	vetoed := 0
	for _, bs := range sessions {
		var data [2][]byte
		for i, p := range []string{bs.ledger, bs.transcript} {
			if data[i], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		s, err := newQwenSession(bs.id, data, [2]bool{true, true})
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []bool{false, true} {
			for n := 0; n <= s.ev.Len(); n++ {
				o := decide(context.Background(), s, n, ref, 1)
				if o.GuardsNote != "" || (o.Verdict != "none" && len(o.Guards) == 0) {
					t.Fatalf("%s reference=%v crash %d: %q, %d guard answers", bs.id, ref, n, o.GuardsNote, len(o.Guards))
				}
				for _, g := range o.Guards {
					if !g.Pass {
						vetoed++
					}
				}
			}
		}
	}
	if vetoed == 0 {
		t.Fatal("no crash point was vetoed: the check proved nothing")
	}
}

func TestExplainGuardsNoticesDrift(t *testing.T) {
	ev := &guards.Evidence{Target: "p"}
	steps := []machines.Step{{Event: "attribute", Src: "target-selected", Dst: "attributed"}}
	out, ok := explainGuards(steps, ev, []guards.Veto{{Guard: "attribution", Reason: "a reason the list cannot derive"}}, false)
	if ok || len(out) != 1 || out[0].Guard != "attribution" {
		t.Fatalf("ok=%v out=%+v: a veto the guard list does not reproduce must be flagged", ok, out)
	}
}

// endless never ends a line; it counts what was read from it.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

// A file that never ends a line stops the replay with the line's position,
// after reading at most one read past the limit; a finite file is read whole.
func TestReadLinesRefusesAnEndlessLine(t *testing.T) {
	src := &endless{}
	_, err := readLines(io.MultiReader(strings.NewReader("{}\n{\"a\":1}\n"), src), events.StreamTranscript, 1000)
	var ee *events.Error
	if !errors.As(err, &ee) || !errors.Is(err, events.ErrLineTooLong) || ee.Pos != (events.Position{Line: 3, Offset: 11}) || ee.Stream != events.StreamTranscript {
		t.Fatalf("err %v, want a too-long transcript line at line 3, offset 11", err)
	}
	if src.read > 1000+64<<10 {
		t.Fatalf("read %d bytes of an endless line with a 1000-byte limit", src.read)
	}
	want := strings.Repeat("{\"k\":\"vvvvvvvvvvvvvvvv\"}\n", 5000) + "torn"
	got, err := readLines(iotest.OneByteReader(strings.NewReader(want)), events.StreamLedger, 30)
	if err != nil || string(got) != want {
		t.Fatalf("finite input: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if _, err := readLines(strings.NewReader(want+strings.Repeat("y", 31)), events.StreamLedger, 30); !errors.Is(err, events.ErrLineTooLong) {
		t.Fatalf("a 35-byte final line under a 30-byte limit: %v", err)
	}
}

// A line over the limit is refused wherever it is: one read that holds the
// whole line, its newline and what follows must not let it through.
func TestReadLinesRefusesALongLineInOneRead(t *testing.T) {
	data := "{}\n" + strings.Repeat("x", 31) + "\n{}\n"
	_, err := readLines(strings.NewReader(data), events.StreamLedger, 30)
	var ee *events.Error
	if !errors.As(err, &ee) || !errors.Is(err, events.ErrLineTooLong) || ee.Pos != (events.Position{Line: 2, Offset: 3}) {
		t.Fatalf("err %v, want a too-long line at line 2, offset 3", err)
	}
	if got, err := readLines(strings.NewReader(strings.Repeat("x", 30)+"\n{}\n"), events.StreamLedger, 30); err != nil || len(got) != 34 {
		t.Fatalf("a line of exactly the limit: %d bytes, %v", len(got), err)
	}
}

// replay --dsh bounds its lines as replay on Qwen files does: an endless
// line, in a v1 log or a log named as the published v0 raw one, stops with
// the line's position after at most one read past the limit.
func TestReadDSHLogRefusesAnEndlessLine(t *testing.T) {
	header := `{"type":"session_header","version":1}` + "\n"
	for _, name := range []string{"/w/s.jsonl", "/w/" + dshlog.V0RawName} {
		src := &endless{}
		_, err := readDSHLog(name, io.MultiReader(strings.NewReader(header), src), 1000)
		var ee *events.Error
		if !errors.As(err, &ee) || !errors.Is(err, events.ErrLineTooLong) || ee.Stream != events.StreamSessionLog ||
			ee.Pos != (events.Position{Line: 2, Offset: int64(len(header))}) || !strings.Contains(err.Error(), "--dsh "+name) {
			t.Fatalf("%s: err %v, want a too-long session_log line at line 2, offset %d", name, err, len(header))
		}
		if src.read > 1000+64<<10 {
			t.Fatalf("%s: read %d bytes of an endless line with a 1000-byte limit", name, src.read)
		}
	}
}
