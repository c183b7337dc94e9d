package simulations

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/tailproof/tailproof/events/dsh"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	evturn "github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
	"github.com/tailproof/tailproof/projections/dshrecovery"
	"github.com/tailproof/tailproof/projections/turns"
)

// TestDSHTurnsAgreeWithEnclosure checks events/dsh's mapping onto the
// vocabulary (what `tailproof status --harness dsh` decides over) against
// dsh's own turn enclosure (projections/turns, which reproduces dsh v1's
// load repair) at every cut of dsh logs: every byte of the bundled crashed
// example, and every line boundary and a byte inside every line of the
// simulator's dsh logs. At each cut the whole lines are what dsh's load
// keeps (a final segment without a newline is torn), and:
//
//   - a turn dsh's load would close as interrupted (open, no turn/end) is
//     the last decided turn, under the same number, never completed, with
//     no harness end, and with exactly the calls dsh would close with an
//     error result as its dangling calls, in order;
//   - a log whose last turn dsh sees closed has that turn decided with the
//     harness's end;
//   - a log with no turn yet has no decided turn.
func TestDSHTurnsAgreeWithEnclosure(t *testing.T) {
	var logs [][]byte
	ex, err := os.ReadFile("../examples/dsh/crashed-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	logs = append(logs, ex)
	prof := &profiles[0]
	for run := range 200 {
		src := dshRand(7, run)
		p := *prof
		p.ErrPct = 30
		b := dsh.AppendHeader(nil, dsh.Header{Version: dsh.Version, ID: dshSession, CreatedAt: recordBaseMs})
		b = append(b, '\n')
		for _, batch := range dshBatches(src, &p) {
			for _, r := range batch {
				b = append(dsh.AppendRecord(b, r), '\n')
			}
		}
		logs = append(logs, b)
	}
	cuts, open, closed := 0, 0, 0
	for i, log := range logs {
		var at []int
		if i == 0 {
			for n := 0; n <= len(log); n++ {
				at = append(at, n)
			}
		} else {
			at = append(at, 0)
			for n, c := range log {
				if c == '\n' {
					at = append(at, n+1, n) // the line whole, and torn one byte short
				}
			}
		}
		for _, n := range at {
			cuts++
			o, c := checkCut(t, i, log[:n])
			open += o
			closed += c
		}
	}
	// Every byte of the example and two cuts per line of 200 simulated
	// logs; the figures pin the run (the seed fixes the logs).
	t.Logf("%d cuts: %d with a turn dsh would close as interrupted, %d with the last turn closed", cuts, open, closed)
	if cuts != 14249 || open != 12504 || closed != 736 {
		t.Fatalf("%d cuts (%d open, %d closed): the test did not cover what it says", cuts, open, closed)
	}
}

func checkCut(t *testing.T, log int, b []byte) (open, closed int) {
	t.Helper()
	whole := b[:bytes.LastIndexByte(b, '\n')+1]
	var enc turns.Enclosure
	lines := bytes.Split(whole, []byte("\n"))
	for k, l := range lines {
		if k == 0 || len(l) == 0 {
			continue // the header; the empty segment after the last newline
		}
		r, err := dsh.ParseRecord(l)
		if err != nil {
			t.Fatalf("log %d: line %d: %v", log, k+1, err)
		}
		if err := enc.Apply(r); err != nil {
			t.Fatalf("log %d: %v", log, err)
		}
	}
	ds, err := turnverdict.DecideAll(evturn.Read(bytes.NewReader(b), dsh.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil {
		t.Fatalf("log %d cut %d: %v", log, len(b), err)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("log %d cut at byte %d (%s): "+format, append([]any{log, len(b), enc.Describe()}, args...)...)
	}
	if enc.Len() == 0 {
		if len(ds) != 0 {
			fail("no turn in the log, but %d decided", len(ds))
		}
		return 0, 0
	}
	if len(ds) == 0 {
		fail("dsh sees events, no turn was decided")
	}
	last := ds[len(ds)-1]
	n, isOpen := enc.OpenTurn()
	if last.Turn != strconv.FormatInt(n, 10) {
		fail("the last decided turn is %s, dsh's is %d", last.Turn, n)
	}
	if !isOpen {
		if last.HarnessEnd == evturn.EndNone {
			fail("dsh sees turn %d closed, the decision has no end: %+v", n, last)
		}
		return 0, 1
	}
	if last.Verdict == turnverdict.Completed || last.HarnessEnd != evturn.EndNone {
		fail("a turn dsh closes as interrupted is %s (end %s)", last.Verdict, last.HarnessEnd)
	}
	var want, got []string
	for _, p := range enc.Pending() {
		want = append(want, p.CallID)
	}
	for _, c := range last.Dangling {
		got = append(got, c.ID)
	}
	if !slices.Equal(want, got) {
		fail("dangling calls %v, dsh would close %v", got, want)
	}
	return 1, 0
}

// TestDSHV0TurnsAgreeWithFold is the same check for dsh format v0: the
// logical form `tailproof status --harness dsh` builds from a v0 log (what
// v0.Scan preserves) decided over v0.Harness, against dsh 0.1.0-rc.8's own
// load repair (projections/dshrecovery's Fold and Closers), at every line
// boundary and one byte short of each of 200 simulator v0 logs, unpacked
// and with chunk rows packed, in the raw encoding (the zstd frames are
// Scan's, tested with it). The bundled zstd example is checked whole.
func TestDSHV0TurnsAgreeWithFold(t *testing.T) {
	type log struct {
		b   []byte
		enc v0.Encoding
	}
	ex, err := os.ReadFile("../examples/dsh/v0/--home-me-proj--/sess-01/session.jsonl.zstd")
	if err != nil {
		t.Fatal(err)
	}
	logs := []log{{ex, v0.Zstd}}
	for run := range 200 {
		src := dshRand(11, run)
		p := profiles[0]
		b := append(v0.AppendHeader(nil, DSHV0Header()), '\n')
		for _, batch := range DSHV0Batches(src, &p, run%2 == 1) {
			b = append(b, batch.Lines...)
		}
		logs = append(logs, log{b, v0.Raw})
	}
	cuts, open, closed := 0, 0, 0
	for i, l := range logs {
		at := []int{len(l.b)}
		if l.enc == v0.Raw {
			at = nil
			for n, c := range l.b {
				if c == '\n' {
					at = append(at, n+1, n)
				}
			}
		}
		for _, n := range at {
			cuts++
			o, c := checkV0Cut(t, i, l.b[:n], l.enc)
			open += o
			closed += c
		}
	}
	t.Logf("%d cuts: %d with a turn dsh would close as interrupted, %d with the last turn closed", cuts, open, closed)
	if cuts != 13559 || open != 12345 || closed != 614 {
		t.Fatalf("%d cuts (%d open, %d closed): the test did not cover what it says", cuts, open, closed)
	}
}

func checkV0Cut(t *testing.T, log int, b []byte, enc v0.Encoding) (open, closed int) {
	t.Helper()
	var fold dshrecovery.Fold
	var lines []byte
	res, err := v0.Scan(bytes.NewReader(b), enc, v0.Options{}, func(r v0.Record) error {
		lines = append(r.AppendJSON(lines), '\n')
		return fold.Apply(r)
	})
	if err != nil {
		return 0, 0 // a cut inside the header: no log to decide
	}
	logical := append(append(v0.AppendHeader(nil, res.Header), '\n'), lines...)
	ds, err := turnverdict.DecideAll(evturn.Read(bytes.NewReader(logical), v0.Harness()), turnverdict.Options{WriterStopped: true})
	if err != nil {
		t.Fatal(err)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("v0 log %d cut at byte %d (%s): "+format, append([]any{log, len(b), fold.Describe()}, args...)...)
	}
	closers, err := fold.Closers()
	if err != nil {
		fail("%v", err)
	}
	if fold.Len() == 0 {
		if len(ds) != 0 {
			fail("no event, %d turns decided", len(ds))
		}
		return 0, 0
	}
	turnNo, isOpen := fold.OpenTurn()
	if !isOpen {
		if len(ds) > 0 && ds[len(ds)-1].HarnessEnd == evturn.EndNone {
			fail("dsh sees the last turn closed, the decision has no end: %+v", ds[len(ds)-1])
		}
		return 0, 1
	}
	if len(ds) == 0 {
		fail("dsh sees turn %s open, no turn was decided", turnNo)
	}
	last := ds[len(ds)-1]
	if last.Turn != turnNo || last.Verdict == turnverdict.Completed || last.HarnessEnd != evturn.EndNone {
		fail("dsh would close turn %s as interrupted; the decision is turn %s %s (end %s)", turnNo, last.Turn, last.Verdict, last.HarnessEnd)
	}
	var want, got []string
	for _, c := range closers {
		if c.Type != v0.TypeToolResult {
			continue
		}
		var r struct {
			Data struct {
				Message struct {
					Source struct {
						CallID string `json:"callId"`
					} `json:"source"`
				} `json:"message"`
			} `json:"data"`
		}
		if err := json.Unmarshal(c.Line, &r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Data.Message.Source.CallID)
	}
	for _, c := range last.Dangling {
		got = append(got, c.ID)
	}
	if !slices.Equal(want, got) {
		fail("dangling calls %v, dsh would close %v", got, want)
	}
	return 1, 0
}
