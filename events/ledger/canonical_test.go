package ledger

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// canonicalSeeds are canonical lines of every shape, with times at the
// digit-count edges (15 digits is the fast path's last; 16 is not exact).
var canonicalSeeds = []string{
	`{"v":1,"promptId":"p","state":"in_flight","at":0}`,
	`{"v":1,"promptId":"","state":"in_flight","tailUuid":"","at":7}`,
	`{"v":1,"promptId":"prompt-000001","state":"in_flight","tailUuid":"m-000000","at":1767225601002}`,
	`{"v":1,"promptId":"p","terminal":"completed","at":999999999999999}`,
	`{"v":1,"promptId":"p","terminal":"cancelled","code":"","at":100000000000000}`,
	`{"v":1,"promptId":"p ~!","terminal":"error","code":"daemon_lost","stopReason":"x","at":10}`,
	`{"v":1,"promptId":"p","terminal":"interrupted","stopReason":"reconstructed_from_transcript","at":1900000000000}`,
	`{"v":1,"promptId":"p","terminal":"completed","at":9007199254740993}`,
}

// mutationBytes are the bytes that end or change a canonical line's parts.
const mutationBytes = "\"\\ 0159-.+eE}{,:x\x7f\x1f\x00\x80\xff\t\r\n"

// mutations returns line with each byte deleted, replaced by each mutation
// byte, and with each mutation byte inserted before it, at every position.
func mutations(line string) []string {
	var out []string
	for i := 0; i <= len(line); i++ {
		if i < len(line) {
			out = append(out, line[:i]+line[i+1:])
		}
		for _, c := range []byte(mutationBytes) {
			if i < len(line) {
				out = append(out, line[:i]+string(c)+line[i+1:])
			}
			out = append(out, line[:i]+string(c)+line[i:])
		}
	}
	return out
}

// checkCanonical fails t when the fast path accepts line and the general
// reader or encoding/json (decodeOracle) reads it differently. It reports
// whether the fast path accepted it.
func checkCanonical(t *testing.T, line []byte) bool {
	t.Helper()
	got, ok := decodeCanonical(line)
	if !ok {
		return false
	}
	general, gerr := decodeGeneral(line)
	oracle, oerr := decodeOracle(line)
	if gerr != nil || oerr != nil {
		t.Fatalf("decodeCanonical(%q) = %#v, but general err = %v, oracle err = %v", line, got, gerr, oerr)
	}
	for _, want := range []Record{general, oracle} {
		if got != want || math.Float64bits(got.AtFrac) != math.Float64bits(want.AtFrac) {
			t.Fatalf("decodeCanonical(%q)\n got %#v\nwant %#v", line, got, want)
		}
	}
	return true
}

// plainRecord reports whether r's canonical line is one the fast path must
// take: strings of printable ASCII without quote or backslash, an exact
// non-negative time of at most 15 digits.
func plainRecord(r Record) bool {
	for _, s := range []string{r.PromptID, r.TailUUID, r.Code, r.StopReason} {
		for i := range len(s) {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
	}
	return !r.atRaw && r.At >= 0 && r.At < 1e15
}

// TestCanonicalEqualsGeneral holds the fast path to the general reader and
// to encoding/json on every line the package's tests know and on every
// one-byte mutation of canonical lines, and checks that it takes every
// canonical line Encode writes (else it would only cost a compare).
func TestCanonicalEqualsGeneral(t *testing.T) {
	lines := append(append([]string(nil), trickyLines...), fileLines(t)...)
	for _, l := range benchLines {
		lines = append(lines, l.line)
	}
	for _, s := range canonicalSeeds {
		lines = append(lines, s)
		lines = append(lines, mutations(s)...)
	}
	accepted := 0
	for _, l := range lines {
		if checkCanonical(t, []byte(l)) {
			accepted++
		}
	}
	for _, l := range benchLines {
		if _, ok := decodeCanonical([]byte(l.line)); !ok {
			t.Errorf("fast path refused the canonical %s line %s", l.name, l.line)
		}
	}

	// Records of random strings (plain, or with the bytes that are not) and
	// times: Encode's line is read back identically by both readers, and
	// taken by the fast path exactly when the record is plain.
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "-", " ", "~", "0", `"`, `\`, "\x01", "\x7f", "é", "\u2028", "<"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	times := []int64{0, 1, 9, 10, 1767225600000, 999999999999999, 1000000000000000, 1 << 53, -1}
	states := []TerminalState{Completed, Cancelled, Error, Interrupted}
	for range 20000 {
		at := times[rng.IntN(len(times))]
		if rng.IntN(2) == 0 {
			at = rng.Int64N(1e15)
		}
		var r Record
		if rng.IntN(2) == 0 {
			r = InFlight(str(), at, str())
		} else {
			r = Terminal(str(), states[rng.IntN(4)], str(), str(), at)
			r.HasCode = rng.IntN(2) == 0
			r.HasStopReason = rng.IntN(2) == 0
			if !r.HasCode {
				r.Code = ""
			}
			if !r.HasStopReason {
				r.StopReason = ""
			}
		}
		line := Encode(r)
		if checkCanonical(t, line) {
			accepted++
		} else if plainRecord(r) {
			t.Fatalf("fast path refused the canonical line %s", line)
		}
	}
	if accepted < 1000 {
		t.Fatalf("fast path took only %d lines", accepted)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	for _, l := range benchLines {
		f.Add([]byte(l.line))
	}
	for _, l := range trickyLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if checkCanonical(t, line) {
			return
		}
		// A line the fast path refused must not be one it should take.
		if r, err := decodeGeneral(line); err == nil && plainRecord(r) && string(Encode(r)) == string(line) {
			t.Fatalf("fast path refused the canonical line %s", line)
		}
	})
}
