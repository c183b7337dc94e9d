package ledgerview

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tailproof/tailproof/events/ledger"
)

// hashes the property test injects: the real one, every id on one
// fingerprint, and three fingerprints (so retired and new ids collide).
var testHashes = map[string]func(string) uint64{
	"real": nil,
	"one":  func(string) uint64 { return 7 },
	"three": func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64() % 3
	},
}

func newTestCompact(window int, hash func(string) uint64) *View {
	v := NewCompact(window)
	v.c.gone = newFPSet(hash)
	return v
}

// compareQueries checks every query the reconciler asks (about the
// dangling prompts) and the whole-ledger answers of c against e.
func compareQueries(t interface{ Fatalf(string, ...any) }, step int, e, c *View) {
	if got, want := c.Dangling(), e.Dangling(); !slices.Equal(got, want) {
		t.Fatalf("after %d: Dangling %v, want %v", step, got, want)
	}
	if c.Len() != e.Len() {
		t.Fatalf("after %d: Len %d, want %d", step, c.Len(), e.Len())
	}
	ga, gok := c.LatestUnsettledAdmission()
	wa, wok := e.LatestUnsettledAdmission()
	if gok != wok || ga != wa {
		t.Fatalf("after %d: LatestUnsettledAdmission %v %v, want %v %v", step, ga, gok, wa, wok)
	}
	if got, want := c.RecentTerminals(), e.RecentTerminals(); !slices.Equal(got, want) {
		t.Fatalf("after %d: RecentTerminals %v, want %v", step, got, want)
	}
	if got, want := c.DeadlineExceeded(), e.DeadlineExceeded(); !slices.Equal(got, want) {
		t.Fatalf("after %d: DeadlineExceeded %v, want %v", step, got, want)
	}
	for _, q := range e.Dangling() {
		ua, uok := c.UnsettledAdmission(q)
		wa, wok := e.UnsettledAdmission(q)
		if uok != wok || ua != wa {
			t.Fatalf("after %d: UnsettledAdmission(%s) %v %v, want %v %v", step, q, ua, uok, wa, wok)
		}
		if g, w := c.Settled(q), e.Settled(q); g != w {
			t.Fatalf("after %d: Settled(%s) %v, want %v", step, q, g, w)
		}
		gt, gok := c.LatestOtherTerminalAt(q)
		wt, wok2 := e.LatestOtherTerminalAt(q)
		if gok != wok2 || gt != wt {
			t.Fatalf("after %d: LatestOtherTerminalAt(%s) %v %v, want %v %v", step, q, gt, gok, wt, wok2)
		}
		pt, pok := c.LatestPredecessorTerminalAt(q)
		wpt, wpok := e.LatestPredecessorTerminalAt(q)
		if pok != wpok || pt != wpt {
			t.Fatalf("after %d: LatestPredecessorTerminalAt(%s) %v %v, want %v %v", step, q, pt, pok, wpt, wpok)
		}
		a1, t1, ok1 := c.LatestCompletedPredecessor(q)
		a2, t2, ok2 := e.LatestCompletedPredecessor(q)
		if ok1 != ok2 || a1 != a2 || t1 != t2 {
			t.Fatalf("after %d: LatestCompletedPredecessor(%s) %v %v %v, want %v %v %v", step, q, a1, t1, ok1, a2, t2, ok2)
		}
	}
}

// While a compact view says it is exact, every answer the reconciler reads
// equals the exact view's, whatever the fingerprints: the hash is replaced by
// colliding ones and the window is tiny, so retirements, frozen open prompts,
// late closings, prompts named again after retiring and false fingerprint hits
// all occur. The test fails unless both exact and unproven runs occur.
func TestCompactNeverChangesAnAnswer(t *testing.T) {
	var proven, unproven int
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom([]string{"real", "one", "three"}).Draw(t, "hash")
		window := rapid.IntRange(1, 4).Draw(t, "window")
		states := []ledger.TerminalState{ledger.Completed, ledger.Cancelled, ledger.Interrupted, ledger.Error}
		e, c := New(), newTestCompact(window, testHashes[name])
		fresh := 0
		n := rapid.IntRange(0, 60).Draw(t, "records")
		for i := range n {
			var id string
			if rapid.IntRange(0, 3).Draw(t, fmt.Sprint("new", i)) == 0 || fresh == 0 {
				id = fmt.Sprint("p", fresh)
				fresh++
			} else {
				id = fmt.Sprint("p", rapid.IntRange(max(0, fresh-2*window-2), fresh-1).Draw(t, fmt.Sprint("id", i)))
			}
			at := rapid.Int64Range(0, 30).Draw(t, fmt.Sprint("at", i))
			var r ledger.Record
			if rapid.Bool().Draw(t, fmt.Sprint("inflight", i)) {
				r = ledger.InFlight(id, at, "")
			} else {
				code := rapid.SampledFrom([]string{"", ledger.CodePromptDeadlineExceeded}).Draw(t, fmt.Sprint("code", i))
				r = ledger.Terminal(id, rapid.SampledFrom(states).Draw(t, fmt.Sprint("state", i)), code, "", at)
			}
			e.Add(r)
			c.Add(r)
			if !c.Exact() {
				unproven++
				return
			}
			compareQueries(t, i, e, c)
			if !c.Exact() {
				t.Fatalf("after %d: a query about a dangling prompt made the view unproven", i)
			}
		}
		proven++
	})
	if proven == 0 || unproven == 0 {
		t.Fatalf("proven %d, unproven %d runs: both must occur", proven, unproven)
	}
}

// A prompt named again after it retired must make the view unproven: folded
// as a new prompt, its predecessors would be the prompts after its first
// appearance (here c's terminal at 6), while the exact view has none.
func TestCompactRetiredPromptAgainIsUnproven(t *testing.T) {
	recs := []ledger.Record{IF("a", 1), TC("a", 2), IF("b", 3), TC("b", 4), IF("c", 5), TC("c", 6), IF("a", 7)}
	e, c := New(), NewCompact(2)
	for _, r := range recs {
		e.Add(r)
		c.Add(r)
	}
	if c.Exact() {
		t.Fatal("a retired prompt named again left the compact view exact")
	}
	if at, ok := e.LatestPredecessorTerminalAt("a"); ok {
		t.Fatalf("exact view: a has a predecessor terminal at %v", at)
	}
}

// Open prompts that leave the window stay exact (frozen), and their
// predecessors include a frozen prompt that closes after them.
func TestCompactFrozenPrompts(t *testing.T) {
	recs := []ledger.Record{IF("a", 1), IF("b", 2), IF("c", 3), TC("d", 4), TC("e", 5), TC("a", 9), IF("f", 10)}
	e, c := New(), NewCompact(1)
	for i, r := range recs {
		e.Add(r)
		c.Add(r)
		compareQueries(t, i, e, c)
	}
	if !c.Exact() {
		t.Fatal("unproven")
	}
	if at, ok := c.LatestPredecessorTerminalAt("b"); !ok || at != 9 {
		t.Fatalf("b's predecessor terminal %v %v, want 9 (a closed after b froze)", at, ok)
	}
}

// A compact view of many closed prompts keeps a fingerprint per prompt, not
// its id or fact.
func TestCompactStaysSmall(t *testing.T) {
	c := NewCompact(16)
	for i := range 10_000 {
		id := fmt.Sprintf("prompt-%06d", i)
		c.Add(ledger.InFlight(id, int64(2*i), ""))
		c.Add(ledger.Terminal(id, ledger.Completed, "", "", int64(2*i+1)))
	}
	c.Add(ledger.InFlight("last", 30_000, ""))
	if !c.Exact() || len(c.c.live) > 17 || len(c.facts) > 16 || c.c.gone.n != 10_001-16 {
		t.Fatalf("exact %v, live %d, window %d, retired %d", c.Exact(), len(c.c.live), len(c.facts), c.c.gone.n)
	}
	if at, ok := c.LatestPredecessorTerminalAt("last"); !ok || at != 19_999 {
		t.Fatalf("predecessor terminal %v %v", at, ok)
	}
	if a, at, ok := c.LatestCompletedPredecessor("last"); !ok || a != 19_998 || at != 19_999 {
		t.Fatalf("completed predecessor %v %v %v", a, at, ok)
	}
}

// A sealed compact view answers about its open prompts as before and makes
// itself unproven when asked about, or given a record of, any other prompt.
func TestCompactSealed(t *testing.T) {
	recs := []ledger.Record{IF("a", 1), TC("a", 2), IF("b", 3), TC("b", 4), IF("c", 5), TC("c", 6), IF("d", 7)}
	e, c := New(), NewCompact(2)
	for _, r := range recs {
		e.Add(r)
		c.Add(r)
	}
	c.Seal()
	compareQueries(t, len(recs), e, c)
	if !c.Exact() {
		t.Fatal("queries about the dangling prompt made the sealed view unproven")
	}
	if c.Settled("never-named"); c.Exact() {
		t.Fatal("a sealed view answered about a prompt it cannot tell from a retired one")
	}
	c2 := NewCompact(2)
	for _, r := range recs {
		c2.Add(r)
	}
	c2.Seal()
	if c2.Add(IF("new", 8)); c2.Exact() {
		t.Fatal("a sealed view folded a record of a prompt it cannot tell from a retired one")
	}
}
