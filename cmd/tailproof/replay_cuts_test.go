package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/simulations"
)

// genOpts shape a generated session (genSession).
type genOpts struct {
	turns    int
	marker   bool // admissions carry tailUuid, the transcript's tail
	identity bool // prompt records carry daemonPromptId
	// staleMarker: every third admission's tailUuid names an earlier record.
	staleMarker bool
	rewindAt    int    // a record at this turn re-parents onto the first one (0: none)
	gapAt       int    // a record at this turn names a missing parent (0: none)
	clockBackAt int    // the clock steps back a minute at this turn (0: none)
	reuseAt     int    // this turn's prompt id is an earlier turn's (0: none)
	tail        string // bytes appended to the transcript
	openLast    int    // prompts left without a terminal at the end
}

func genSession(o genOpts) (ledger, transcript []byte) {
	var l, tr bytes.Buffer
	parent, first := "null", ""
	ms := int64(1_700_000_000_000)
	n := 0
	rec := func(typ, prov, extra, msg string) string {
		ms += 7
		n++
		uuid := fmt.Sprintf("r%d", n)
		fmt.Fprintf(&tr, `{"uuid":%q,"parentUuid":%s,"sessionId":"s","timestamp":"%s","type":%q,"provenance":%q%s,"message":%s}`+"\n",
			uuid, parent, timestamp(ms), typ, prov, extra, msg)
		if first == "" {
			first = uuid
		}
		parent = `"` + uuid + `"`
		return uuid
	}
	last := ""
	for i := 1; i <= o.turns; i++ {
		id := fmt.Sprintf("p%d", i)
		if i == o.reuseAt {
			id = "p1"
		}
		if i == o.clockBackAt {
			ms -= 60_000
		}
		ms += 3
		tail := ""
		switch {
		case o.marker && o.staleMarker && i%3 == 0 && first != "":
			tail = fmt.Sprintf(`,"tailUuid":%q`, first)
		case o.marker && last != "":
			tail = fmt.Sprintf(`,"tailUuid":%q`, last)
		}
		fmt.Fprintf(&l, `{"v":1,"promptId":%q,"state":"in_flight"%s,"at":%d}`+"\n", id, tail, ms)
		if i == o.rewindAt {
			parent = `"` + first + `"`
		}
		if i == o.gapAt {
			parent = `"missing"`
		}
		extra := ""
		if o.identity {
			extra = fmt.Sprintf(`,"daemonPromptId":%q`, id)
		}
		rec("user", "real_user", extra, `{"role":"user","parts":[{"text":"do the thing"}]}`)
		last = rec("assistant", "assistant_output", "", `{"role":"model","parts":[{"text":"done"}]}`)
		if i <= o.turns-o.openLast {
			ms += 3
			fmt.Fprintf(&l, `{"v":1,"promptId":%q,"terminal":"completed","stopReason":"end_turn","at":%d}`+"\n", id, ms)
		}
	}
	tr.WriteString(o.tail)
	return l.Bytes(), tr.Bytes()
}

func timestamp(ms int64) string {
	return fmt.Sprintf("2023-11-14T22:%02d:%02d.%03dZ", (ms/60000)%60, (ms/1000)%60, ms%1000)
}

// checkCrashPass compares every crash point the one pass decides, over the
// session in memory and streamed from its files, with a reconcile of that
// cut's bytes, under both rule sets. It returns how many crash points (of
// the tailproof rules' run) the in-memory pass decided and whether the
// streaming pass took the session.
func checkCrashPass(t *testing.T, name string, ledger, transcript []byte) (passed int, streamed bool) {
	t.Helper()
	exists := [2]bool{ledger != nil, transcript != nil}
	s, err := newQwenSession(name, [2][]byte{ledger, transcript}, exists)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	mem := memory.NewFS()
	const lp, tp = "/s/session.ledger.jsonl", "/s/session.jsonl"
	if err := mem.MkdirAll("/s", 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{lp, tp} {
		if exists[i] {
			if err := mem.WriteFile(p, [2][]byte{ledger, transcript}[i], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	store := jsonl.NewFilesStore(mem, lp, tp)
	for _, ref := range []bool{false, true} {
		want, _ := crashRowsWith(context.Background(), s, ref, 0, nil, false)
		got, n := crashRowsWith(context.Background(), s, ref, 0, nil, true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (reference %v): one pass differs from reconciling each cut (-cut +pass):\n%s", name, ref, diff)
		}
		rows, err := streamCrashRows(context.Background(), store, "", ref, 0, nil)
		switch {
		case errors.Is(err, errNotStreamable):
		case err != nil:
			t.Fatalf("%s: streaming: %v", name, err)
		default:
			if diff := cmp.Diff(want, rows); diff != "" {
				t.Fatalf("%s (reference %v): the streaming pass differs from reconciling each cut (-cut +stream):\n%s", name, ref, diff)
			}
		}
		if !ref {
			passed, streamed = n, err == nil
		}
	}
	return passed, streamed
}

// Every crash point the one pass decides is what reconcile decides on that
// cut's bytes: the replay goldens, sessions the simulator's daemon model
// wrote (crashes, restarts, background turns, compressions, torn tails,
// clock steps), and generated sessions with and without markers and
// identities, stale markers, reused prompt ids, rewinds, gaps and bad
// lines (where the pass hands over to reconciling each cut).
func TestCrashPassMatchesReconcilingEachCut(t *testing.T) {
	src := filepath.Join(replayRuntime, "projects", "-work-golden", "chats")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
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
		checkCrashPass(t, id, l, tr)
	}

	runs := 240
	if testing.Short() {
		runs = 48
	}
	simPassed, simStreamed := 0, 0
	for run := range runs {
		l, tr, err := simulations.SessionFiles(context.Background(), 1, run)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		passed, streamed := checkCrashPass(t, fmt.Sprintf("simulated run %d", run), l, tr)
		simPassed += passed
		if streamed {
			simStreamed++
		}
	}
	if simPassed == 0 || simStreamed == 0 {
		t.Fatalf("the one pass decided %d crash points of the simulated sessions and streamed %d sessions", simPassed, simStreamed)
	}
	t.Logf("simulated sessions: %d crash points decided in one pass, %d of %d sessions streamed", simPassed, simStreamed, runs)

	for _, c := range []struct {
		name string
		o    genOpts
		// all: every crash point after the first transcript record is
		// decided by the pass, and the session streams; none: no crash
		// point is.
		all, none bool
	}{
		{"markers and identities", genOpts{turns: 12, marker: true, identity: true, openLast: 1}, true, false},
		{"markers, two open", genOpts{turns: 12, marker: true, identity: true, openLast: 2}, true, false},
		{"no markers", genOpts{turns: 12, identity: true, openLast: 1}, true, false},
		{"no identities", genOpts{turns: 12, marker: true, openLast: 1}, true, false},
		{"stale markers", genOpts{turns: 12, marker: true, identity: true, staleMarker: true, openLast: 1}, true, false},
		{"clock steps back", genOpts{turns: 12, identity: true, clockBackAt: 6, openLast: 1}, true, false},
		{"reused prompt id", genOpts{turns: 12, marker: true, identity: true, reuseAt: 7, openLast: 1}, true, false},
		{"rewind", genOpts{turns: 12, marker: true, identity: true, rewindAt: 8, openLast: 1}, false, false},
		{"gap", genOpts{turns: 12, marker: true, identity: true, gapAt: 5, openLast: 1}, false, false},
		{"bad line", genOpts{turns: 6, marker: true, identity: true, tail: "{not json\n", openLast: 1}, false, true},
	} {
		l, tr := genSession(c.o)
		passed, streamed := checkCrashPass(t, c.name, l, tr)
		if streamed != c.all {
			t.Errorf("%s: streamed %v, want %v", c.name, streamed, c.all)
		}
		s, _ := newQwenSession(c.name, [2][]byte{l, tr}, [2]bool{true, true})
		firstRecord := 0
		for n := range s.ev.Len() {
			if s.ev.Event(n).Stream == s.ev.Sources[1].Stream {
				firstRecord = n + 1
				break
			}
		}
		all := s.ev.Len() + 1 - firstRecord
		switch {
		case c.all && passed != all:
			t.Errorf("%s: the pass decided %d of the %d crash points after the first record", c.name, passed, all)
		case c.none && passed != 0:
			t.Errorf("%s: the pass decided %d crash points, want none", c.name, passed)
		case !c.all && !c.none && (passed == 0 || passed == all):
			t.Errorf("%s: the pass decided %d of %d crash points, want some but not all", c.name, passed, all)
		}
	}
}
