package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs/vfstest"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

const goldenChats = "projects/-work-golden/chats"

// ledgers reads every ledger under a runtime directory, keyed by its path
// below it.
func ledgers(t *testing.T, rt string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(rt, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ledger.jsonl") || d.Type()&os.ModeType != 0 {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(rt, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sessionIDs(t *testing.T, chats string) []string {
	t.Helper()
	entries, err := os.ReadDir(chats)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".ledger.jsonl"); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

type allDocJSON struct {
	Sessions []struct {
		Project, Session, Outcome string
		Error                     *allError
	}
	Totals   allTotals
	ExitCode int
}

func decodeAll(t *testing.T, out string) allDocJSON {
	t.Helper()
	var d allDocJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return d
}

// TestReconcileAllIsSingleReconcile: --all appends to every ledger exactly
// the bytes one reconcile per session appends (without --cwd as
// --ledger/--transcript, with it as --cwd/--session), on one worker or two,
// and a second run appends nothing.
func TestReconcileAllIsSingleReconcile(t *testing.T) {
	const now = "1900000000000"
	for _, c := range []struct {
		name, src, cwd string
		single         func(rt, chats, id string) []string
	}{
		{"files", "../../testdata/replay", "", func(rt, chats, id string) []string {
			return []string{"--ledger", filepath.Join(chats, id+".ledger.jsonl"), "--transcript", filepath.Join(chats, id+".jsonl")}
		}},
		{"workspace", "../../examples/qwen", exampleWS, func(rt, chats, id string) []string {
			return []string{"--qwen-runtime", rt, "--cwd", exampleWS, "--session", id}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			one := filepath.Join(t.TempDir(), "rt")
			copyTree(t, c.src, one)
			chats, _ := filepath.Glob(filepath.Join(one, "projects", "*", "chats"))
			ids := sessionIDs(t, chats[0])
			for _, id := range ids {
				if code, _, errs := runCLI(t, append([]string{"reconcile", "--now", now}, c.single(one, chats[0], id)...)...); code != cli.OK {
					t.Fatalf("reconcile %s: exit %d: %s", id, code, errs)
				}
			}
			want := ledgers(t, one)
			var docs []allDocJSON
			for _, workers := range []string{"1", "2"} {
				all := filepath.Join(t.TempDir(), "rt")
				copyTree(t, c.src, all)
				args := []string{"reconcile", "--all", "--qwen-runtime", all, "--now", now, "--workers", workers, "--json"}
				if c.cwd != "" {
					args = append(args, "--cwd", c.cwd)
				}
				code, out, errs := runCLI(t, args...)
				d := decodeAll(t, out)
				if code != d.ExitCode || (code != cli.OK && code != cli.CheckFailed) {
					t.Fatalf("exit %d (document says %d): %s", code, d.ExitCode, errs)
				}
				if diff := cmp.Diff(want, ledgers(t, all)); diff != "" {
					t.Fatalf("--all --workers %s appended other bytes than one reconcile per session:\n%s", workers, diff)
				}
				if d.Totals.Sessions != len(ids) || d.Totals.Appended == 0 {
					t.Fatalf("totals %+v for %d sessions", d.Totals, len(ids))
				}
				docs = append(docs, d)
				// Idempotence: the rerun finds every decided prompt settled.
				code2, out2, _ := runCLI(t, args...)
				if d2 := decodeAll(t, out2); d2.Totals.Appended != 0 || code2 != d2.ExitCode {
					t.Fatalf("rerun appended %d (exit %d)", d2.Totals.Appended, code2)
				}
				if diff := cmp.Diff(want, ledgers(t, all)); diff != "" {
					t.Fatalf("rerun changed a ledger:\n%s", diff)
				}
			}
			if diff := cmp.Diff(docs[0].Sessions, docs[1].Sessions); diff != "" {
				t.Fatalf("one worker and two report differently:\n%s", diff)
			}
		})
	}
}

// TestReconcileAllExitCodes: 0 when every prompt in flight was decided, 1
// when one stayed unknown, the first failed session's code otherwise.
func TestReconcileAllExitCodes(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "rt")
	copyTree(t, "../../examples/qwen", rt)
	if code, out, errs := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000"); code != cli.OK {
		t.Fatalf("every prompt decidable: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt); code != cli.OK || !strings.Contains(out, "none 2") {
		t.Fatalf("nothing left: exit %d\n%s", code, out)
	}
	chats := filepath.Join(rt, "projects", "-work-demo", "chats")
	const unknownID = "11111111-0000-4000-8000-000000000001" // a ledger, no transcript
	if err := os.WriteFile(filepath.Join(chats, unknownID+".ledger.jsonl"), []byte(hostileLedger), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt); code != cli.CheckFailed || !strings.Contains(out, unknownID+": unknown") {
		t.Fatalf("a prompt unknown: exit %d\n%s", code, out)
	}
	if err := os.Mkdir(filepath.Join(chats, "00000000-0000-4000-8000-000000000000.ledger.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt); code != cli.Input || !strings.Contains(out, "is a directory, not a regular file") {
		t.Fatalf("a ledger that is a directory: exit %d\n%s", code, out)
	}
}

// TestReconcileAllHostileNames: names no session can have, a ledger that
// is not a ledger, a project linked out of the runtime — each is reported
// on its own line and the session beside it is still reconciled.
func TestReconcileAllHostileNames(t *testing.T) {
	tmp := t.TempDir()
	rt := filepath.Join(tmp, "rt")
	copyTree(t, "../../examples/qwen", rt)
	chats := filepath.Join(rt, "projects", "-work-demo", "chats")
	outside := filepath.Join(tmp, "outside", "chats")
	copyTree(t, "../../examples/qwen/projects/-work-demo/chats", outside)
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i*7919 + i/13)
	}
	for name, data := range map[string][]byte{
		"forged\nsessions: 99 (decided 99).ledger.jsonl":    []byte(hostileLedger),
		"x.ledger.ledger.jsonl":                             []byte(hostileLedger),
		"22222222-0000-4000-8000-000000000002.ledger.jsonl": noise,
	} {
		if err := os.WriteFile(filepath.Join(chats, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(rt, "projects", "-evil")); err != nil {
		t.Fatal(err)
	}
	before := ledgers(t, filepath.Dir(outside))
	code, out, errs := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000")
	if code != cli.Input {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		`-evil: failed`, `is a symbolic link leading out of the runtime directory`,
		`-work-demo/"forged\nsessions: 99 (decided 99).ledger.jsonl": failed`, "contains a control character",
		`-work-demo/x.ledger.ledger.jsonl: failed`, "ends in .ledger",
		"-work-demo/" + exampleCompleted + ": decided", "-work-demo/" + exampleToolTurn + ": decided",
		"-work-demo/22222222-0000-4000-8000-000000000002: none\n  warning: ledger ", "(mostly undecodable: is it a ledger?)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nsessions: 99") {
		t.Errorf("a file name forged a report line:\n%s", out)
	}
	if diff := cmp.Diff(before, ledgers(t, filepath.Dir(outside))); diff != "" {
		t.Errorf("a ledger outside the runtime changed:\n%s", diff)
	}
	noisy := filepath.Join(chats, "22222222-0000-4000-8000-000000000002.ledger.jsonl")
	if b, _ := os.ReadFile(noisy); string(b) != string(noise) {
		t.Errorf("the ledger of random bytes was written to")
	}
}

// TestReconcileAllLiveWriter: a process holding a session's ledger lock
// makes that session fail with exit 5 after --lock-wait, and only it; once
// the lock is free a rerun reconciles it.
func TestReconcileAllLiveWriter(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "rt")
	copyTree(t, "../../examples/qwen", rt)
	chats := filepath.Join(rt, "projects", "-work-demo", "chats")
	lock, err := os.OpenFile(filepath.Join(chats, exampleToolTurn+".ledger.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	// flock excludes other open file descriptions, in this process too.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(chats, exampleToolTurn+".ledger.jsonl")
	before, _ := os.ReadFile(held)
	code, out, _ := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000", "--lock-wait", "50ms", "--json")
	d := decodeAll(t, out)
	if code != cli.Unavailable || d.Totals.Outcomes[outcomeFailed] != 1 || d.Totals.Outcomes[outcomeDecided] != 1 {
		t.Fatalf("exit %d, totals %+v", code, d.Totals)
	}
	for _, s := range d.Sessions {
		if s.Session == exampleToolTurn && (s.Error == nil || !strings.Contains(s.Error.Message, "another process holds the ledger lock")) {
			t.Fatalf("the locked session: %+v", s)
		}
	}
	if after, _ := os.ReadFile(held); string(after) != string(before) {
		t.Fatalf("the locked ledger changed: %q", after)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000", "--json")
	if d := decodeAll(t, out); code != cli.OK || d.Totals.Appended != 1 || !slices.ContainsFunc(d.Sessions, func(s struct {
		Project, Session, Outcome string
		Error                     *allError
	}) bool {
		return s.Session == exampleToolTurn && s.Outcome == outcomeDecided
	}) {
		t.Fatalf("after the lock was released: exit %d %+v", code, d)
	}
}

// reconcileAllSchemas is TestSchemas's case for reconcile --all: a clean
// runtime, the same with a failed session, an unknown one and a corrupt
// ledger, dry and for real.
func reconcileAllSchemas(t *testing.T, s *schemaSet) {
	clean := filepath.Join(t.TempDir(), "rt")
	copyTree(t, "../../examples/qwen", clean)
	s.check("reconcile-all.schema.json", "reconcile --all", runJSON(t, cli.OK, "reconcile", "--all", "--json", "--qwen-runtime", clean, "--cwd", exampleWS, "--now", "1900000000000"))
	rt := filepath.Join(t.TempDir(), "rt")
	copyTree(t, "../../examples/qwen", rt)
	chats := filepath.Join(rt, "projects", "-work-demo", "chats")
	for name, data := range map[string]string{
		"11111111-0000-4000-8000-000000000001.ledger.jsonl": hostileLedger,    // no transcript: unknown
		"22222222-0000-4000-8000-000000000002.ledger.jsonl": "not a ledger\n", // a warning
		"x.ledger.ledger.jsonl":                             hostileLedger,    // failed
	} {
		if err := os.WriteFile(filepath.Join(chats, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"--dry-run"}, {"--now", "1900000000000", "--workers", "1"}, {"--reference"}} {
		out := runJSON(t, cli.Input, append([]string{"reconcile", "--all", "--json", "--qwen-runtime", rt}, args...)...)
		s.check("reconcile-all.schema.json", "reconcile --all "+strings.Join(args, " "), out)
		for _, want := range []string{`"outcome":"failed"`, `"outcome":"unknown"`, `"warnings":["ledger `} {
			if !strings.Contains(string(out), want) {
				t.Errorf("reconcile --all %s: no %s in %s", strings.Join(args, " "), want, clip(out))
			}
		}
	}
}

// TestReconcileAllProgress: a bar on a terminal, not a byte on stderr
// otherwise.
func TestReconcileAllProgress(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "rt")
	copyTree(t, "../../examples/qwen", rt)
	args := []string{"reconcile", "--all", "--qwen-runtime", rt, "--dry-run", "--now", "1900000000000"}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != cli.OK || errb.Len() != 0 {
		t.Fatalf("off a terminal: exit %d, stderr %q", code, errb.String())
	}
	master, slave := vfstest.PTY(t)
	out.Reset()
	if code := run(context.Background(), args, &out, slave); code != cli.OK {
		t.Fatalf("on a terminal: exit %d", code)
	}
	if got := vfstest.ReadPTY(t, master, "\033[K"); !strings.Contains(got, "sessions [") || !strings.Contains(got, "100%") {
		t.Fatalf("the terminal showed %q", got)
	}
	if strings.Contains(out.String(), "\r") {
		t.Fatal("progress leaked into stdout")
	}
}

// TestReconcileAllInterrupted: once the context is done no session starts,
// and the command says so (130) instead of reporting a partial run as done.
func TestReconcileAllInterrupted(t *testing.T) {
	m := crashRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := reconcileAll(ctx, m, "/rt", crashFlags(2), io.Discard)
	if cli.Code(err, cli.OK) != cli.Interrupted || !strings.Contains(err.Error(), "run it again") {
		t.Fatalf("got %v", err)
	}
	recs, _ := memLedgers(t, m)
	fresh, _ := memLedgers(t, crashRuntime(t))
	if d := cmp.Diff(fresh, recs); d != "" {
		t.Fatalf("an interrupted run before any session appended:\n%s", d)
	}
}

type fakeEntry string

func (e fakeEntry) Name() string               { return string(e) }
func (e fakeEntry) IsDir() bool                { return false }
func (e fakeEntry) Type() os.FileMode          { return 0 }
func (e fakeEntry) Info() (os.FileInfo, error) { return nil, os.ErrNotExist }

// FuzzSessionsIn: whatever names a chats directory holds, every session
// found either has an id the store accepts and whose files lie directly in
// the chats directory, or is reported with a problem; ids are unique.
func FuzzSessionsIn(f *testing.F) {
	f.Add("5f0c7d8e-1111-4222-8333-944455556666.ledger.jsonl", "5f0c7d8e-1111-4222-8333-944455556666.jsonl")
	f.Add("a\nb.ledger.jsonl", "x.ledger.ledger.jsonl")
	f.Add("../../etc.ledger.jsonl", ".ledger.jsonl")
	f.Add("..ledger.jsonl", "a/b.ledger.jsonl")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := sessionsIn("-p", "/rt/projects/-p/chats", []os.DirEntry{fakeEntry(a), fakeEntry(b)}, nil)
		seen := map[string]bool{}
		for _, s := range got {
			if seen[s.id] {
				t.Fatalf("session %q listed twice", s.id)
			}
			seen[s.id] = true
			if s.problem != nil {
				continue
			}
			if err := jsonl.CheckSessionID(s.id); err != nil {
				t.Fatalf("session %q accepted: %v", s.id, err)
			}
			if filepath.Dir(filepath.Join(s.chats, s.id+".ledger.jsonl")) != s.chats {
				t.Fatalf("session %q escapes its chats directory", s.id)
			}
		}
	})
}

// TestReconcileAllWorkspace pins ADR 0036's one difference: with --cwd,
// Qwen's membership check applies as with --session (a transcript written
// in another workspace that sanitizes alike is not this workspace's: its
// prompt stays unknown); without it the session is reconciled as its two
// files.
func TestReconcileAllWorkspace(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "rt")
	// The example was written in /work/demo; /work-demo sanitizes alike.
	copyTree(t, "../../examples/qwen", rt)
	args := []string{"reconcile", "--all", "--qwen-runtime", rt, "--dry-run", "--now", "1900000000000", "--json"}
	code, out, _ := runCLI(t, append(args, "--cwd", "/work-demo")...)
	if d := decodeAll(t, out); code != cli.CheckFailed || d.Totals.Outcomes[outcomeUnknown] != 2 || !strings.Contains(out, `written in workspace \"/work/demo\", not \"/work-demo\"`) {
		t.Fatalf("--cwd /work-demo: exit %d %s", code, out)
	}
	for _, cwd := range []string{exampleWS, ""} {
		a := args
		if cwd != "" {
			a = append(a, "--cwd", cwd)
		}
		if code, out, _ := runCLI(t, a...); code != cli.OK || decodeAll(t, out).Totals.Outcomes[outcomeDecided] != 2 {
			t.Fatalf("--cwd %q: exit %d %s", cwd, code, out)
		}
	}
}
