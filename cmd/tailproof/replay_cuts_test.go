package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tailproof/tailproof"
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
	rewindAt    int // a record at this turn re-parents onto the first one (0: none)
	// rewindEvery: every N-th turn's first record continues from a record 2
	// to 6 records back in the file — a rewind on the active chain, or a
	// branch off one an earlier rewind left (0: none).
	rewindEvery int
	gapAt       int // a record at this turn names a missing parent (0: none)
	rootAt      int // a record at this turn has no parent: a second root (0: none)
	badAt       int // an undecodable line follows this turn's records (0: none)
	artifactAt  int // an artifact record (never on a chain) follows this turn's records (0: none)
	// artifactParent: the next turn's first record names that artifact
	// record as its parent.
	artifactParent bool
	clockBackAt    int    // the clock steps back a minute at this turn (0: none)
	reuseAt        int    // this turn's prompt id is an earlier turn's (0: none)
	tail           string // bytes appended to the transcript
	openLast       int    // prompts left without a terminal at the end
}

func genSession(o genOpts) (ledger, transcript []byte) {
	var l, tr bytes.Buffer
	parent, first := "null", ""
	ms := int64(1_700_000_000_000)
	n := 0
	var written []string
	rec := func(typ, prov, extra, msg string) string {
		ms += 7
		n++
		uuid := fmt.Sprintf("r%d", n)
		written = append(written, uuid)
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
		if o.rewindEvery > 0 && i > 1 && i%o.rewindEvery == 0 {
			parent = `"` + written[len(written)-min(len(written), 2+i%5)] + `"`
		}
		if i == o.gapAt {
			parent = `"missing"`
		}
		if i == o.rootAt {
			parent = "null"
		}
		extra := ""
		if o.identity {
			extra = fmt.Sprintf(`,"daemonPromptId":%q`, id)
		}
		rec("user", "real_user", extra, `{"role":"user","parts":[{"text":"do the thing"}]}`)
		last = rec("assistant", "assistant_output", "", `{"role":"model","parts":[{"text":"done"}]}`)
		if i == o.artifactAt {
			ms += 7
			fmt.Fprintf(&tr, `{"uuid":"art%d","parentUuid":%s,"sessionId":"s","timestamp":"%s","type":"system","subtype":"session_artifact_event","systemPayload":{}}`+"\n",
				i, parent, timestamp(ms))
			if o.artifactParent {
				parent = fmt.Sprintf(`"art%d"`, i)
			}
		}
		if i == o.badAt {
			tr.WriteString(`{"uuid":"torn","parentUuid":` + "\n")
		}
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
		rows, _, _, err := streamCrashRows(context.Background(), store, "", replayFlags{reference: ref}, nil)
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
	for _, g := range goldenSessions(t) {
		checkCrashPass(t, g.id, g.ledger, g.transcript)
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
		// decided by the in-memory pass; none: no crash point is; streams:
		// the streaming pass takes the session.
		all, none, streams bool
	}{
		{"markers and identities", genOpts{turns: 12, marker: true, identity: true, openLast: 1}, true, false, true},
		{"markers, two open", genOpts{turns: 12, marker: true, identity: true, openLast: 2}, true, false, true},
		{"no markers", genOpts{turns: 12, identity: true, openLast: 1}, true, false, true},
		{"no identities", genOpts{turns: 12, marker: true, openLast: 1}, true, false, true},
		{"stale markers", genOpts{turns: 12, marker: true, identity: true, staleMarker: true, openLast: 1}, true, false, true},
		{"clock steps back", genOpts{turns: 12, identity: true, clockBackAt: 6, openLast: 1}, true, false, true},
		{"reused prompt id", genOpts{turns: 12, marker: true, identity: true, reuseAt: 7, openLast: 1}, true, false, true},
		{"rewind", genOpts{turns: 12, marker: true, identity: true, rewindAt: 8, openLast: 1}, false, false, true},
		{"rewinds and branches", genOpts{turns: 30, marker: true, identity: true, rewindEvery: 3, openLast: 1}, false, false, true},
		{"rewinds, two open", genOpts{turns: 30, marker: true, identity: true, rewindEvery: 4, openLast: 2}, false, false, true},
		{"rewinds, no markers", genOpts{turns: 30, identity: true, rewindEvery: 3, openLast: 1}, false, false, true},
		{"rewinds, stale markers", genOpts{turns: 30, marker: true, identity: true, staleMarker: true, rewindEvery: 5, openLast: 1}, false, false, true},
		{"rewinds, reused id", genOpts{turns: 30, marker: true, identity: true, rewindEvery: 4, reuseAt: 9, openLast: 1}, false, false, true},
		{"rewinds, clock back", genOpts{turns: 30, identity: true, rewindEvery: 4, clockBackAt: 13, openLast: 1}, false, false, true},
		{"gap", genOpts{turns: 12, marker: true, identity: true, gapAt: 5, openLast: 1}, false, false, true},
		{"gap, then rewinds across it", genOpts{turns: 30, marker: true, identity: true, gapAt: 9, rewindEvery: 4, openLast: 1}, false, false, true},
		{"second root", genOpts{turns: 12, marker: true, identity: true, rootAt: 6, openLast: 1}, false, false, true},
		{"second root, no markers", genOpts{turns: 12, identity: true, rootAt: 4, rewindEvery: 5, openLast: 2}, false, false, true},
		{"torn tail", genOpts{turns: 6, marker: true, identity: true, tail: "{not json\n", openLast: 1}, false, true, true},
		{"torn tail without a newline", genOpts{turns: 6, marker: true, identity: true, tail: `{"uuid":"x","par`, openLast: 1}, false, true, true},
		{"artifact record", genOpts{turns: 12, marker: true, identity: true, artifactAt: 4, openLast: 1}, false, false, true},
		{"artifact record, rewinds", genOpts{turns: 30, marker: true, identity: true, artifactAt: 7, rewindEvery: 3, openLast: 1}, false, false, true},
		{"a record's parent is an artifact", genOpts{turns: 12, marker: true, identity: true, artifactAt: 5, artifactParent: true, openLast: 1}, false, false, true},
		{"corrupt line", genOpts{turns: 12, marker: true, identity: true, badAt: 5, openLast: 1}, false, true, true},
		{"corrupt line, rewinds", genOpts{turns: 30, marker: true, identity: true, badAt: 11, rewindEvery: 4, tail: "{\n", openLast: 1}, false, true, true},
	} {
		l, tr := genSession(c.o)
		passed, streamed := checkCrashPass(t, c.name, l, tr)
		if streamed != c.streams {
			t.Errorf("%s: streamed %v, want %v", c.name, streamed, c.streams)
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

// With a mark every few records, a rewind restores a mark and reads the
// records after it again (instead of the whole chain), a mark can sit
// exactly on the rewound-to record, and old marks are thinned: every crash
// point of rewinding and branching sessions, simulated and generated, is
// still what reconcile decides on that cut's bytes.
func TestStreamedRewindsFromMarks(t *testing.T) {
	defer func(old int32) { markEvery = old }(markEvery)
	runs := 120
	if testing.Short() {
		runs = 24
	}
	for _, every := range []int32{1, 2, 3, 5} {
		markEvery = every
		streamed := 0
		for i, o := range []genOpts{
			{turns: 40, marker: true, identity: true, rewindEvery: 3, openLast: 1},
			{turns: 40, marker: true, identity: true, rewindEvery: 2, openLast: 2},
			{turns: 40, identity: true, rewindEvery: 3, clockBackAt: 20, openLast: 1},
			{turns: 40, marker: true, identity: true, staleMarker: true, rewindEvery: 4, reuseAt: 11, openLast: 1},
			{turns: 40, marker: true, identity: true, gapAt: 13, rootAt: 27, rewindEvery: 3, badAt: 20, openLast: 1},
		} {
			l, tr := genSession(o)
			if _, ok := checkCrashPass(t, fmt.Sprintf("every %d, generated %d", every, i), l, tr); ok {
				streamed++
			}
		}
		if streamed != 5 {
			t.Fatalf("every %d: %d of 5 rewinding sessions streamed", every, streamed)
		}
		for run := range runs / 4 {
			l, tr, err := simulations.SessionFiles(context.Background(), uint64(every), run)
			if err != nil {
				t.Fatal(err)
			}
			checkCrashPass(t, fmt.Sprintf("every %d, simulated run %d", every, run), l, tr)
		}
	}
}

// replayOutput runs replay with args and returns what it printed and its
// exit code.
func replayOutput(args ...string) (string, int) {
	var out, errs bytes.Buffer
	code := runReplay(context.Background(), args, &out, &errs)
	return out.String(), code
}

// A streamed replay prints exactly what the whole-file replay prints
// (replayWholeFile), step by step and decision by decision, and writes the
// same --html page, for every way of running it: the goldens, simulated
// sessions and generated ones — linear, rewinding and branching, or not
// streamable (a gap).
func TestStreamedReplayPrintsTheWholeFileReplay(t *testing.T) {
	// Marks every three records: a rewind restores one and re-reads the
	// records after it.
	defer func(old int32) { markEvery = old }(markEvery)
	markEvery = 3
	dir := t.TempDir()
	type sess struct {
		name      string
		l, tr     []byte
		streams   bool
		checkable bool
	}
	var sessions []sess
	for i, o := range []genOpts{
		{turns: 8, marker: true, identity: true, openLast: 1},
		{turns: 8, marker: true, identity: true, staleMarker: true, openLast: 2},
		{turns: 8, identity: true, clockBackAt: 4, openLast: 1},
		{turns: 8, marker: true, identity: true, rewindAt: 5, openLast: 1},
		{turns: 16, marker: true, identity: true, rewindEvery: 3, openLast: 1},
		{turns: 16, identity: true, rewindEvery: 2, clockBackAt: 9, openLast: 2},
		{turns: 16, marker: true, identity: true, staleMarker: true, rewindEvery: 4, openLast: 1},
		{turns: 8, marker: true, identity: true, gapAt: 5, openLast: 1},
		{turns: 16, marker: true, identity: true, gapAt: 7, rewindEvery: 3, openLast: 1},
		{turns: 8, identity: true, rootAt: 4, openLast: 2},
		{turns: 8, marker: true, identity: true, badAt: 3, rewindEvery: 3, tail: "{not json", openLast: 1},
	} {
		l, tr := genSession(o)
		sessions = append(sessions, sess{name: fmt.Sprintf("gen%d", i), l: l, tr: tr, streams: true, checkable: true})
	}
	for run := range 24 {
		l, tr, err := simulations.SessionFiles(context.Background(), 1, run)
		if err != nil {
			t.Fatal(err)
		}
		if l != nil && tr != nil {
			sessions = append(sessions, sess{name: fmt.Sprintf("sim%d", run), l: l, tr: tr})
		}
	}
	streamed := 0
	for _, s := range sessions {
		lp, tp := filepath.Join(dir, s.name+".ledger.jsonl"), filepath.Join(dir, s.name+".jsonl")
		if err := os.WriteFile(lp, s.l, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tp, s.tr, 0o644); err != nil {
			t.Fatal(err)
		}
		sst, _ := newQwenSession(s.name, [2][]byte{s.l, s.tr}, [2]bool{true, true})
		if s.checkable || newCrashPass(sst, false) != nil {
			st := openStreamForTest(t, lp, tp)
			if s.checkable && st != s.streams {
				t.Errorf("%s: streams %v, want %v", s.name, st, s.streams)
			}
			if st {
				streamed++
			}
		}
		files := []string{"--ledger", lp, "--transcript", tp}
		for _, extra := range [][]string{nil, {"--json"}, {"--at", "3"}, {"--crash-at", "5"}, {"--crash-at", "0", "--json"},
			{"--crash-at", "all"}, {"--crash-at", "all", "--json", "--reference"}, {"--reference", "--now", "1700000000001"}, {"--at", "999"}} {
			args := append(append([]string{}, extra...), files...)
			streamedPage, wholePage := filepath.Join(dir, "streamed.html"), filepath.Join(dir, "whole.html")
			os.Remove(streamedPage)
			os.Remove(wholePage)
			html := len(extra) > 0 && extra[0] != "--at" // the page too, most ways
			withPage := func(page string) []string {
				if html {
					return append(append([]string{}, args...), "--html", page)
				}
				return args
			}
			got, gotCode := replayOutput(withPage(streamedPage)...)
			replayWholeFile = true
			want, wantCode := replayOutput(withPage(wholePage)...)
			replayWholeFile = false
			if gotCode != wantCode || got != want {
				t.Fatalf("%s %v: exit %d, want %d; output differs (-whole file +streamed):\n%s", s.name, extra, gotCode, wantCode, cmp.Diff(want, got))
			}
			if html {
				gp, err1 := os.ReadFile(streamedPage)
				wp, err2 := os.ReadFile(wholePage)
				if errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist) {
					continue // neither run wrote one (an error it exited on)
				}
				if err1 != nil || err2 != nil {
					t.Fatalf("%s %v: %v %v", s.name, extra, err1, err2)
				}
				if !bytes.Equal(gp, wp) {
					t.Fatalf("%s %v: the --html page differs (-whole file +streamed):\n%s", s.name, extra, cmp.Diff(string(wp), string(gp)))
				}
			}
		}
	}
	if streamed == 0 {
		t.Fatal("no session streamed")
	}
}

// openStreamForTest tells whether openStream takes the session's files.
func openStreamForTest(t *testing.T, lp, tp string) bool {
	t.Helper()
	f := replayFlags{}
	f.sf.ledger, f.sf.transcript = lp, tp
	sess, err := f.sf.open()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s, _, err := openStream(context.Background(), sess.Store, sess.ID, tailproof.Options{DryRun: true}, 0, true, true)
	if err != nil {
		return false
	}
	s.close()
	return true
}

// FuzzCrashPass holds the one pass, in memory and streamed, to a dry-run
// reconcile of every cut, on any ledger and transcript (split at the first
// NUL byte of the input).
func FuzzCrashPass(f *testing.F) {
	for _, o := range []genOpts{
		{turns: 3, marker: true, identity: true, openLast: 1},
		{turns: 3, identity: true, staleMarker: true, marker: true, openLast: 2},
		{turns: 3, identity: true, clockBackAt: 2, openLast: 1},
		{turns: 3, marker: true, rewindAt: 2, openLast: 1},
		{turns: 6, marker: true, identity: true, rewindEvery: 2, openLast: 1},
	} {
		l, tr := genSession(o)
		f.Add(append(append(l, 0), tr...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		l, tr, ok := bytes.Cut(in, []byte{0})
		if !ok || len(l) > 4<<10 || len(tr) > 16<<10 {
			return
		}
		checkCrashPass(t, "fuzz", l, tr)
	})
}

// Every crash point of a random generated session — any mix of markers,
// identities, stale markers, rewinds and branches, a gap, a second root,
// corrupt lines, a torn tail, clock steps and reused ids, marked every 1
// to 6 records or at the default spacing — is what reconcile decides on
// that cut's bytes, in memory and streamed.
func TestCrashPassOnRandomSessions(t *testing.T) {
	defer func(old int32) { markEvery = old }(markEvery)
	runs, streamed := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		turns := rapid.IntRange(1, 14).Draw(rt, "turns")
		at := func(name string) int { return rapid.IntRange(0, turns).Draw(rt, name) }
		o := genOpts{turns: turns, marker: rapid.Bool().Draw(rt, "marker"), identity: rapid.Bool().Draw(rt, "identity"),
			staleMarker: rapid.Bool().Draw(rt, "stale"), rewindEvery: rapid.IntRange(0, 4).Draw(rt, "rewindEvery"),
			rewindAt: at("rewindAt"), gapAt: at("gapAt"), rootAt: at("rootAt"), badAt: at("badAt"),
			clockBackAt: at("clockBackAt"), reuseAt: at("reuseAt"), artifactAt: at("artifactAt"), artifactParent: rapid.Bool().Draw(rt, "artifactParent"), openLast: rapid.IntRange(0, 2).Draw(rt, "openLast"),
			tail: rapid.SampledFrom([]string{"", "{not json\n", `{"uuid":"x","par`}).Draw(rt, "tail")}
		markEvery = rapid.SampledFrom([]int32{1, 2, 3, 6, 64}).Draw(rt, "markEvery")
		l, tr := genSession(o)
		_, ok := checkCrashPass(t, fmt.Sprintf("%+v", o), l, tr)
		runs++
		if ok {
			streamed++
		}
	})
	if streamed == 0 {
		t.Fatalf("none of %d random sessions streamed", runs)
	}
	t.Logf("%d of %d random sessions streamed", streamed, runs)
}
