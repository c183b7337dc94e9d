package jsonl_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/events/ledger"
)

const (
	killChildDir  = "TAILPROOF_KILL9_DIR"
	killChildName = "TAILPROOF_KILL9_NAME"
	killSeedEnv   = "TAILPROOF_KILL9_SEED"
)

// TestKill9Loop re-executes this test binary as two child processes that
// append to one ledger as fast as they can, each printing a prompt id once
// its append returned (was fsynced). The parent SIGKILLs them at seeded
// random moments, round after round, and then checks that every
// acknowledged record is in the file, that the file parses with at most one
// torn fragment per killed child, and that appends from the two processes
// never fused. Replay a failure with TAILPROOF_KILL9_SEED=<seed>.
//
// SIGKILL loses no page cache, so this proves the write/lock/seal protocol
// across processes, not power-loss durability; the memory-FS crash tests
// cover that.
func TestKill9Loop(t *testing.T) {
	if dir := os.Getenv(killChildDir); dir != "" {
		killChild(dir, os.Getenv(killChildName))
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL and flock")
	}
	seed := uint64(20261130)
	if s := os.Getenv(killSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	layout := jsonl.NewQwenLayout(dir, "/work/project")
	const rounds, children = 6, 2
	acked := map[string]bool{}
	kills := 0
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for c := range children {
			name := fmt.Sprintf("r%dc%d", round, c)
			delay := time.Duration(10+rng.IntN(150)) * time.Millisecond
			cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Loop$", "-test.count=1")
			cmd.Env = append(os.Environ(), killChildDir+"="+dir, killChildName+"="+name)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			wg.Go(func() {
				sc := bufio.NewScanner(out)
				first := true
				for sc.Scan() {
					id, ok := strings.CutPrefix(sc.Text(), "ack ")
					if !ok {
						continue
					}
					mu.Lock()
					acked[id] = true
					mu.Unlock()
					if first {
						first = false
						close(started)
					}
				}
				if first {
					close(started)
				}
			})
			wg.Go(func() {
				<-started
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
			})
			kills++
		}
		wg.Wait()
	}
	s := jsonl.NewQwenStore(vfs.OS, layout)
	rc, err := s.OpenLedger(bg, crashSID)
	if err != nil {
		t.Fatal(err)
	}
	recs, dropped, err := ledger.Read(rc, false)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, r := range recs {
		present[r.PromptID] = true
	}
	for id := range acked {
		if !present[id] {
			t.Fatalf("seed %d: acknowledged %s missing from the ledger", seed, id)
		}
	}
	if dropped > kills {
		t.Fatalf("seed %d: %d unreadable lines after %d kills: appends fused", seed, dropped, kills)
	}
	if len(acked) < rounds {
		t.Fatalf("seed %d: only %d acknowledgements in %d rounds; the children did not run", seed, len(acked), rounds)
	}
	t.Logf("seed %d: %d kills, %d acknowledged, %d records, %d torn fragments", seed, kills, len(acked), len(recs), dropped)
}

// killChild appends until killed (or a safety limit), acknowledging each
// record on stdout only after AppendLedger returned.
func killChild(dir, name string) {
	s := jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(dir, "/work/project"))
	// The child is killed long before this; the bound keeps a lost parent
	// from leaving it running.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		id := fmt.Sprintf("%s-%06d", name, i)
		if err := s.AppendLedger(bg, crashSID, ledger.Encode(ledger.InFlight(id, int64(i), ""))); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stdout, "ack %s\n", id)
	}
	os.Exit(0)
}
