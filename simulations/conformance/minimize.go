package conformance

import (
	"context"
	"strings"
)

// signature is what a minimized scenario must keep: the same kind of
// failure with the same outcome on each side.
func signature(o *Outcome) string {
	if !o.Failed() && o.Known == "" {
		return ""
	}
	js := "nothing"
	if o.JS.Appended != nil {
		js = normalizeAt(o.JS.Line)
	}
	ref := "nothing"
	if o.Ref.Appended != nil {
		ref = normalizeAt(string(o.Ref.Line))
	}
	kind := "ref:" + o.Known
	if o.RefMismatch == "" {
		kind = "def:" + string(o.Def.Verdict)
	}
	return kind + "|" + js + "|" + ref
}

// splitKeep splits s into lines, each keeping its terminator, so removing
// one leaves the others byte-identical.
func splitKeep(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func without(lines []string, i int) string {
	return strings.Join(lines[:i], "") + strings.Join(lines[i+1:], "")
}

// Minimize shrinks a failing (or known-bug) scenario by deleting transcript
// and ledger lines one at a time while the failure keeps its signature.
// Each round sends every one-line deletion to node as one batch.
func Minimize(ctx context.Context, node *Node, scratch string, o *Outcome) (*Outcome, error) {
	want := signature(o)
	if want == "" {
		return o, nil
	}
	best := o
	for round := 0; round < 200; round++ {
		var cands []Scenario
		s := best.Scenario
		if s.Transcript != nil {
			tl := splitKeep(*s.Transcript)
			for i := range tl {
				c := s
				t := without(tl, i)
				c.Transcript = &t
				c.ID = s.ID
				cands = append(cands, c)
			}
		}
		ll := splitKeep(s.Ledger)
		for i := range ll {
			c := s
			c.Ledger = without(ll, i)
			cands = append(cands, c)
		}
		if len(cands) == 0 {
			break
		}
		js, err := node.Run(cands)
		if err != nil {
			return best, err
		}
		improved := false
		for i, c := range cands {
			co := Compare(ctx, scratch, c, js[i])
			if signature(co) == want {
				best, improved = co, true
				break
			}
		}
		if !improved {
			break
		}
	}
	return best, nil
}
