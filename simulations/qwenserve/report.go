package qwenserve

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Tally counts dangling prompts by outcome.
type Tally struct {
	Dangling int `json:"dangling"`
	Correct  int `json:"correct"`
	Unknown  int `json:"unknown"`
	Wrong    int `json:"wrong"`
	// Lost: interrupted on a completed prompt whose answer the crash lost
	// (counted in Correct).
	Lost int `json:"lostCompletion,omitempty"`
}

func (t *Tally) add(o Outcome, lost bool) {
	t.Dangling++
	switch o {
	case Correct:
		t.Correct++
		if lost {
			t.Lost++
		}
	case Wrong:
		t.Wrong++
	default:
		t.Unknown++
	}
}

// Pair is tailproof's and Qwen's tallies over the same prompts.
type Pair struct {
	Tailproof Tally `json:"tailproof"`
	Qwen      Tally `json:"qwen"`
}

// Report adds up scenario results.
type Report struct {
	Seed      uint64 `json:"seed"`
	Scenarios int    `json:"scenarios"`
	Crashes   int    `json:"crashes"`
	// Missed counts crashes whose scripted moment never came (they crashed
	// at the timeout and are scored all the same).
	Missed int `json:"missed"`
	// Final is the comparison at every scenario's last crash: tailproof
	// (dry run) and Qwen's restart + load on the same files.
	Final Pair `json:"final"`
	// Intermediate is tailproof at the crashes a restart + resume followed
	// (Qwen does not reconcile there; those prompts are scored again at the
	// final crash).
	Intermediate Tally            `json:"intermediate"`
	ByKill       map[string]*Pair `json:"byKill"`
	ByShape      map[string]*Pair `json:"byShape"`
	ByTruth      map[string]*Pair `json:"byTruth"`
	UnknownBy    map[string]int   `json:"tailproofUnknownBy"`
	// UnknownByShape counts tailproof\'s unknowns by "shape / truth / guard".
	UnknownByShape map[string]int   `json:"tailproofUnknownByShape"`
	StatusErrs     map[string]int   `json:"statusErrors,omitempty"`
	QwenLoad       map[string]int   `json:"qwenLoad,omitempty"`
	Wrong          []string         `json:"wrong,omitempty"`
	Errors         []string         `json:"errors,omitempty"`
	Shapes         map[string]int   `json:"shapes"`
	Results        []ScenarioResult `json:"results,omitempty"`
}

// NewReport starts an empty report.
func NewReport(seed uint64) *Report {
	return &Report{Seed: seed, ByKill: map[string]*Pair{}, ByShape: map[string]*Pair{}, ByTruth: map[string]*Pair{},
		UnknownBy: map[string]int{}, UnknownByShape: map[string]int{}, StatusErrs: map[string]int{}, QwenLoad: map[string]int{}, Shapes: map[string]int{}}
}

func bucket(m map[string]*Pair, k string) *Pair {
	p := m[k]
	if p == nil {
		p = &Pair{}
		m[k] = p
	}
	return p
}

// Add folds one scenario's result in.
func (r *Report) Add(res ScenarioResult) {
	r.Scenarios++
	for _, c := range res.Crashes {
		r.Crashes++
		kill := string(c.Kill)
		if c.Missed != "" {
			r.Missed++
			kill += " (missed)"
		}
		if c.StatusErr != "" {
			r.StatusErrs[c.StatusErr]++
		}
		if c.QwenLoad != "" {
			r.QwenLoad[c.QwenLoad]++
		}
		for _, s := range c.Shapes {
			r.Shapes[s]++
		}
		for _, p := range c.Prompts {
			if p.TailproofOutcome == Unknown {
				r.UnknownBy[p.Guard]++
				r.UnknownByShape[fmt.Sprintf("%s / %s / %s", res.Scenario.Shape, p.Truth, p.Guard)]++
			}
			if p.TailproofOutcome == Wrong {
				r.Wrong = append(r.Wrong, fmt.Sprintf("%s: crash %d (%s): %s truth %s, tailproof %s", res.Scenario, c.Epoch, c.Kill, p.Name, p.Truth, p.Tailproof))
			}
			if !c.Final {
				r.Intermediate.add(p.TailproofOutcome, p.Lost)
				continue
			}
			for _, pr := range []*Pair{&r.Final, bucket(r.ByKill, kill), bucket(r.ByShape, string(res.Scenario.Shape)), bucket(r.ByTruth, string(p.Truth))} {
				pr.Tailproof.add(p.TailproofOutcome, p.Lost)
				pr.Qwen.add(p.QwenOutcome, p.Lost)
			}
		}
	}
	r.Results = append(r.Results, res)
}

// Fail records a scenario that could not run.
func (r *Report) Fail(sc Scenario, err error) {
	r.Errors = append(r.Errors, fmt.Sprintf("%s: %v", sc, err))
}

// WriteTable prints the report as text tables.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "seed %d: %d scenarios, %d crashes (%d missed their moment), %d errors\n\n", r.Seed, r.Scenarios, r.Crashes, r.Missed, len(r.Errors))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, t Tally) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, t.Dangling, t.Correct, t.Unknown, t.Wrong, t.Lost, pct(t))
	}
	fmt.Fprintln(tw, "at the final crash\tdangling\tcorrect\tunknown\twrong\tlost compl.\tresolved\t")
	row("tailproof (dry run)", r.Final.Tailproof)
	row("Qwen 0.24.4 restart + /load", r.Final.Qwen)
	row("tailproof at intermediate crashes", r.Intermediate)
	_ = tw.Flush()
	for _, g := range []struct {
		name string
		m    map[string]*Pair
	}{{"kill point", r.ByKill}, {"shape", r.ByShape}, {"truth", r.ByTruth}} {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tdangling\ttailproof c/u/w\tQwen c/u/w\t\n", g.name)
		for _, k := range sortedKeys(g.m) {
			p := g.m[k]
			fmt.Fprintf(tw, "%s\t%d\t%d/%d/%d\t%d/%d/%d\t\n", k, p.Tailproof.Dangling, p.Tailproof.Correct, p.Tailproof.Unknown, p.Tailproof.Wrong,
				p.Qwen.Correct, p.Qwen.Unknown, p.Qwen.Wrong)
		}
		_ = tw.Flush()
	}
	if len(r.UnknownBy) > 0 {
		fmt.Fprintln(w, "\ntailproof unknown, by guard (all crashes):")
		for _, k := range sortedKeys(r.UnknownBy) {
			fmt.Fprintf(w, "  %4d  %s\n", r.UnknownBy[k], k)
		}
	}
	for _, m := range []struct {
		name string
		m    map[string]int
	}{{"tailproof unknown, by shape / truth / guard", r.UnknownByShape}, {"tailproof.Status errors", r.StatusErrs}, {"Qwen /load answers", r.QwenLoad}} {
		if len(m.m) > 0 {
			fmt.Fprintf(w, "\n%s:\n", m.name)
			for _, k := range sortedKeys(m.m) {
				fmt.Fprintf(w, "  %4d  %s\n", m.m[k], k)
			}
		}
	}
	for _, s := range r.Wrong {
		fmt.Fprintln(w, "WRONG:", s)
	}
	for _, s := range r.Errors {
		fmt.Fprintln(w, "ERROR:", s)
	}
}

func pct(t Tally) string {
	if t.Dangling == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(t.Correct)/float64(t.Dangling))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// ShapeList is the report's record shapes, sorted.
func (r *Report) ShapeList() []string {
	out := sortedKeys(r.Shapes)
	return slices.DeleteFunc(out, func(s string) bool { return strings.TrimSpace(s) == "" })
}

// WriteScenario prints one scenario's crashes and scores.
func WriteScenario(w io.Writer, res ScenarioResult) {
	fmt.Fprintln(w, res.Scenario)
	if res.ResumeRefused != "" {
		fmt.Fprintf(w, "  resume refused: %s\n", res.ResumeRefused)
	}
	for _, c := range res.Crashes {
		fmt.Fprintf(w, "  crash %d at %s", c.Epoch, c.Kill)
		if c.Missed != "" {
			fmt.Fprintf(w, " (missed: %s)", c.Missed)
		}
		if c.QwenLoad != "" {
			fmt.Fprintf(w, " load: %s", c.QwenLoad)
		}
		fmt.Fprintln(w)
		for _, p := range c.Prompts {
			fmt.Fprintf(w, "    %s truth %s lost=%v: tailproof %q %s %s", p.Name, p.Truth, p.Lost, p.Tailproof, p.TailproofOutcome, p.Guard)
			if c.Final {
				fmt.Fprintf(w, "; qwen %q %s", p.Qwen, p.QwenOutcome)
			}
			fmt.Fprintln(w)
		}
	}
}
