package guards

import (
	"strings"
)

// Veto is a guard's refusal: which guard, and why, in words a human reads.
// It is the one veto type: decisions, the published decision JSON and
// replay all carry it.
type Veto struct {
	Guard  string `json:"guard"`
	Reason string `json:"reason"`
}

func (v Veto) String() string { return v.Guard + ": " + v.Reason }

// Guard checks evidence of type E. Check returns nil to allow, or the vetoes
// that refuse. A guard is a value that prints itself (String) in a canonical
// form, so a trace shows exactly which rule ran.
//
// Guards are pure: they read the evidence they are given and nothing else —
// no file, no clock, no goroutine.
type Guard[E any] interface {
	Name() string
	Check(E) []Veto
	String() string
}

// Func adapts a function to a Guard. The reason function returns "" to allow.
func Func[E any](name string, check func(E) string) Guard[E] {
	return funcGuard[E]{name: name, check: check}
}

type funcGuard[E any] struct {
	name  string
	check func(E) string
}

func (g funcGuard[E]) Name() string   { return g.name }
func (g funcGuard[E]) String() string { return g.name }
func (g funcGuard[E]) Check(e E) []Veto {
	if r := g.check(e); r != "" {
		return []Veto{{Guard: g.name, Reason: r}}
	}
	return nil
}

// All allows when every guard allows; otherwise it returns every veto, so an
// operator sees all the reasons at once, not just the first.
func All[E any](gs ...Guard[E]) Guard[E] { return all[E](gs) }

type all[E any] []Guard[E]

func (a all[E]) Name() string   { return "all" }
func (a all[E]) String() string { return printList("all", a) }
func (a all[E]) Check(e E) []Veto {
	var out []Veto
	for _, g := range a {
		out = append(out, g.Check(e)...)
	}
	return out
}

// Any allows when at least one guard allows. When all refuse it returns every
// veto. Any() with no guards refuses.
func Any[E any](gs ...Guard[E]) Guard[E] { return anyOf[E](gs) }

type anyOf[E any] []Guard[E]

func (a anyOf[E]) Name() string   { return "any" }
func (a anyOf[E]) String() string { return printList("any", a) }
func (a anyOf[E]) Check(e E) []Veto {
	if len(a) == 0 {
		return []Veto{{Guard: "any()", Reason: "no alternative allows"}}
	}
	var out []Veto
	for _, g := range a {
		v := g.Check(e)
		if len(v) == 0 {
			return nil
		}
		out = append(out, v...)
	}
	return out
}

// Not inverts g: it vetoes when g allows, naming why (the negated guard's
// name), and allows when g vetoes.
func Not[E any](g Guard[E]) Guard[E] { return not[E]{g} }

type not[E any] struct{ g Guard[E] }

func (n not[E]) Name() string   { return "not(" + n.g.Name() + ")" }
func (n not[E]) String() string { return "not(" + n.g.String() + ")" }
func (n not[E]) Check(e E) []Veto {
	if len(n.g.Check(e)) == 0 {
		return []Veto{{Guard: n.String(), Reason: n.g.String() + " allowed"}}
	}
	return nil
}

func printList[E any](op string, gs []Guard[E]) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return op + "(" + strings.Join(parts, ", ") + ")"
}

// Describe prints vetoes one per line, in order, for traces and errors.
func Describe(vs []Veto) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// Members lists the guards a composite checks in order: the children of an
// All, flattened through nested Alls, or g itself for any other guard (an Any
// or a Not is one decision). Tools that explain a decision guard by guard
// (replay) read the composition from here instead of keeping a copy.
func Members[E any](g Guard[E]) []Guard[E] {
	if g == nil {
		return nil
	}
	a, ok := g.(all[E])
	if !ok {
		return []Guard[E]{g}
	}
	var out []Guard[E]
	for _, c := range a {
		out = append(out, Members(c)...)
	}
	return out
}
