package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stepAll steps every event of s, with or without the incremental folds.
func stepAll(s *session, incremental bool) ([]step, bool) {
	st := newStepper(s)
	if !incremental {
		st.inc = nil
	}
	out := make([]step, 0, s.ev.Len())
	for range s.ev.Len() {
		out = append(out, st.next())
	}
	return out, st.inc != nil
}

// The incremental folds print, at every step, what recomputing the chain
// from the bytes of the cut prints: on every golden session, on linear
// sessions, and on sessions that turn non-linear midway (a rewind, a second
// root, a reused uuid, a line that does not decode), where the stepper falls
// back from that step on.
func TestIncrementalStepsMatchRecomputing(t *testing.T) {
	type tc struct {
		name   string
		ledger []byte
		trans  []byte
		linear bool // the incremental folds last to the end
		check  bool // linear is known
	}
	var cases []tc
	for _, g := range goldenSessions(t) {
		cases = append(cases, tc{name: g.id, ledger: g.ledger, trans: g.transcript})
	}
	rec := func(uuid, parent string, ms int) string {
		return fmt.Sprintf(`{"uuid":%q,"parentUuid":%s,"sessionId":"s","timestamp":"2023-11-14T22:13:%02d.%03dZ","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"t%d"}]}}`+"\n",
			uuid, parent, ms/1000%60, ms%1000, ms)
	}
	build := func(parents []string) ([]byte, []byte) {
		var l, tr strings.Builder
		for i, p := range parents {
			fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","state":"in_flight","at":%d}`+"\n", i, 1_700_000_000_000+int64(i)*10)
			tr.WriteString(rec(fmt.Sprintf("u%d", i), p, i*10+5))
			if i%2 == 0 {
				fmt.Fprintf(&l, `{"v":1,"promptId":"p%d","terminal":"completed","at":%d}`+"\n", i, 1_700_000_000_000+int64(i)*10+7)
			}
		}
		return []byte(l.String()), []byte(tr.String())
	}
	for _, c := range []struct {
		name    string
		parents []string
		linear  bool
	}{
		{"linear", []string{"null", `"u0"`, `"u1"`, `"u2"`, `"u3"`}, true},
		{"rewind", []string{"null", `"u0"`, `"u1"`, `"u1"`, `"u3"`}, false},
		{"second root", []string{"null", `"u0"`, "null", `"u2"`}, false},
		{"gap", []string{"null", `"u0"`, `"zz"`, `"u2"`}, false},
	} {
		l, tr := build(c.parents)
		cases = append(cases, tc{name: c.name, ledger: l, trans: tr, linear: c.linear, check: true})
	}
	l, tr := build([]string{"null", `"u0"`, `"u1"`})
	cases = append(cases,
		tc{name: "reused uuid", ledger: l, trans: append(append([]byte{}, tr...), rec("u1", `"u2"`, 99)...), check: true},
		tc{name: "bad line", ledger: l, trans: append(append([]byte{}, tr...), "{not json\n"...), check: true})
	for _, c := range cases {
		s, err := newQwenSession(c.name, [2][]byte{c.ledger, c.trans}, [2]bool{true, true})
		if err != nil {
			t.Fatal(err)
		}
		got, lasted := stepAll(s, true)
		if !c.check {
			t.Logf("%s: incremental to the end: %v", c.name, lasted)
		}
		want, _ := stepAll(s, false)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: incremental steps differ (-recomputed +incremental):\n%s", c.name, diff)
		}
		if c.check && lasted != c.linear {
			t.Fatalf("%s: incremental to the end %v, want %v", c.name, lasted, c.linear)
		}
	}
}
