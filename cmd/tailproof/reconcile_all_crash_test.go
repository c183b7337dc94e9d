package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// crashRuntime is the fixture of the crash test in a memory FS: the replay
// goldens and the examples, two projects whose prompts are decided every
// way (completed, interrupted, unknown).
func crashRuntime(t *testing.T) *memory.FS {
	t.Helper()
	m := memory.NewFS()
	for src, project := range map[string]string{"../../testdata/replay/" + goldenChats: "-work-golden", "../../examples/qwen/projects/-work-demo/chats": "-work-demo"} {
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.WriteFile(filepath.Join("/rt/projects", project, "chats", e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// memLedgers decodes every ledger of the memory runtime: its records as the
// ledger reader keeps them, and how many lines it drops.
func memLedgers(t *testing.T, m *memory.FS) (records map[string][]string, undecodable map[string]int) {
	t.Helper()
	records, undecodable = map[string][]string{}, map[string]int{}
	projects, err := m.ReadDir("/rt/projects")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		project := p.Name()
		chats := filepath.Join("/rt/projects", project, "chats")
		entries, err := m.ReadDir(chats)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".ledger.jsonl") {
				continue
			}
			b, err := m.ReadFile(filepath.Join(chats, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			key := project + "/" + e.Name()
			records[key] = []string{}
			for line := range bytes.Lines(b) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				if _, err := ledger.Decode(line); err != nil || !bytes.HasSuffix(line, []byte("\n")) {
					undecodable[key]++
					continue
				}
				records[key] = append(records[key], string(line))
			}
		}
	}
	return records, undecodable
}

func crashFlags(workers int) allFlags {
	return allFlags{workers: workers, lockWait: time.Second, clockSource: "--now", clockGiven: true,
		opts: tailproof.Options{Now: func() int64 { return 1900000000000 }, NoTrace: true}}
}

// TestReconcileAllCrash kills reconcile --all at every write and every fsync
// it makes (the memory FS halts there; the reboot keeps a random prefix of
// each file's unsynced bytes), then checks that every ledger still reads —
// at most one dropped line, the torn fragment of the append the crash cut —
// and that a rerun leaves every ledger with exactly the records of a run
// that never crashed: nothing lost, nothing twice.
func TestReconcileAllCrash(t *testing.T) {
	ctx := context.Background()
	base := crashRuntime(t)
	clean := base.Clone()
	doc, err := reconcileAll(ctx, clean, "/rt", crashFlags(1), io.Discard)
	if err != nil || doc.Totals.Appended < 4 || doc.Totals.Outcomes[outcomeUnknown] == 0 {
		t.Fatalf("the clean run: %v, totals %+v", err, doc.Totals)
	}
	want, dropped := memLedgers(t, clean)
	if len(dropped) != 0 {
		t.Fatalf("the clean run left undecodable lines: %v", dropped)
	}
	rng := rand.New(rand.NewPCG(36, 36))
	points := 0
	for _, op := range []memory.Op{memory.OpWrite, memory.OpSync, memory.OpSyncDir} {
		for k := 1; k <= clean.Count(op); k++ {
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("%s #%d, %d workers", op, k, workers)
				m := base.Clone()
				m.Inject(memory.Fault{Op: op, Nth: k, Crash: true, Torn: rng.IntN(64)})
				if _, err := reconcileAll(ctx, m, "/rt", crashFlags(workers), io.Discard); err != nil {
					t.Fatalf("%s: the crashed run failed as a whole: %v", name, err)
				}
				if !m.Halted() {
					t.Fatalf("%s: the crash point was never reached", name)
				}
				m.CrashKeeping(memory.KeepRandom(rng))
				m.ClearFaults()
				_, after := memLedgers(t, m)
				for f, n := range after {
					if n > 1 {
						t.Errorf("%s: %s has %d undecodable lines after the crash", name, f, n)
					}
				}
				rerun, err := reconcileAll(ctx, m, "/rt", crashFlags(workers), io.Discard)
				if err != nil || rerun.Totals.Outcomes[outcomeFailed] != 0 {
					t.Fatalf("%s: rerun: %v, totals %+v", name, err, rerun.Totals)
				}
				got, _ := memLedgers(t, m)
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("%s: after the rerun the ledgers differ from a run without a crash:\n%s", name, d)
				}
				points++
			}
		}
	}
	t.Logf("%d crash points", points)
	if points < 10 {
		t.Fatalf("only %d crash points", points)
	}
}

const killAllEnv = "TAILPROOF_RECONCILE_ALL_KILL_RT"

// realRuntime writes n sessions, copies of the replay goldens in turn, each
// under its own id, into a runtime directory on disk.
func realRuntime(t *testing.T, dir string, n int) {
	t.Helper()
	src := filepath.Join("../../testdata/replay", goldenChats)
	ids := sessionIDs(t, src)
	chats := filepath.Join(dir, "projects", "-work-golden", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := ids[i%len(ids)]
		to := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		for _, ext := range []string{".jsonl", ".ledger.jsonl"} {
			b, err := os.ReadFile(filepath.Join(src, id+ext))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(chats, to+ext), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// diskLedgers is memLedgers on a runtime directory on disk.
func diskLedgers(t *testing.T, rt string) (map[string][]string, map[string]int) {
	t.Helper()
	m := memory.NewFS()
	for rel, data := range ledgers(t, rt) {
		if err := m.WriteFile(filepath.Join("/rt", rel), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return memLedgers(t, m)
}

// TestReconcileAllKill9 runs reconcile --all in a child process (this test
// binary re-executed) and SIGKILLs it at seeded random moments: every ledger
// still reads, and a rerun makes them exactly what an uninterrupted run
// makes. SIGKILL keeps the page cache, so this checks the processes' side of
// the protocol (locks, appends, seals); TestReconcileAllCrash the power
// loss.
func TestReconcileAllKill9(t *testing.T) {
	if rt := os.Getenv(killAllEnv); rt != "" {
		os.Exit(run(context.Background(), []string{"reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000", "--workers", "2"}, io.Discard, io.Discard))
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	const sessions = 240
	clean := filepath.Join(t.TempDir(), "rt")
	realRuntime(t, clean, sessions)
	if code, _, errs := runCLI(t, "reconcile", "--all", "--qwen-runtime", clean, "--now", "1900000000000"); code != 1 {
		t.Fatalf("the clean run: exit %d: %s", code, errs)
	}
	want, _ := diskLedgers(t, clean)
	fresh := filepath.Join(t.TempDir(), "rt")
	realRuntime(t, fresh, sessions)
	initial, _ := diskLedgers(t, fresh)
	rng := rand.New(rand.NewPCG(9, 9))
	for round := range 4 {
		rt := filepath.Join(t.TempDir(), "rt")
		realRuntime(t, rt, sessions)
		cmd := exec.Command(os.Args[0], "-test.run=^TestReconcileAllKill9$", "-test.count=1")
		cmd.Env = append(os.Environ(), killAllEnv+"="+rt)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		partial, dropped := diskLedgers(t, rt)
		for f, n := range dropped {
			if n > 1 {
				t.Errorf("round %d: %s has %d undecodable lines after the kill", round, f, n)
			}
		}
		settled, toSettle := 0, 0
		for f, recs := range partial {
			if len(want[f]) > len(initial[f]) {
				toSettle++
				if len(recs) == len(want[f]) {
					settled++
				}
			}
		}
		if code, _, errs := runCLI(t, "reconcile", "--all", "--qwen-runtime", rt, "--now", "1900000000000"); code != 1 {
			t.Fatalf("round %d: rerun: exit %d: %s", round, code, errs)
		}
		got, _ := diskLedgers(t, rt)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("round %d: after the rerun the ledgers differ from a run never killed:\n%s", round, d)
		}
		t.Logf("round %d: killed with %d of the %d ledgers a run appends to complete", round, settled, toSettle)
	}
}
