package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tailproof/tailproof"
)

// Config bounds a conformance run.
type Config struct {
	Runs  int    // scenarios to generate
	Seed  uint64 // the run's seed; scenario i of seed S is Generate(S, i)
	Batch int    // scenarios per node round trip (<= 0: 250)
	// Scratch is where tailproof's copies of the files go (default: a new
	// temporary directory, removed afterwards).
	Scratch string
	// MaxFailures stops the run early after this many failures (<= 0: 20).
	MaxFailures int
	// SaveDir, when set, receives each failure and the first scenario of
	// each known bug, minimized, as files (see Outcome.Save).
	SaveDir string
	// Progress, when set, is called after each scenario is judged with the
	// number judged and Runs.
	Progress func(done, total int)
}

// Report is a run's tally.
type Report struct {
	Seed    uint64 `json:"seed"`
	Runs    int    `json:"runs"`
	Version string `json:"referenceVersion"`
	Package string `json:"referencePackage"`

	// Reference verdicts: what the real implementation did.
	JSAppended map[string]int `json:"referenceAppended"` // completed | interrupted | nothing

	RefAgree    int            `json:"referenceModeAgree"`
	RefKnown    map[string]int `json:"referenceModeKnownBugs"`
	RefMismatch int            `json:"referenceModeMismatch"`

	DefAgree     int            `json:"defaultModeAgree"`
	PerCategory  map[string]int `json:"defaultModeDifferences"`
	Unclassified int            `json:"defaultModeUnclassified"`

	Features map[string]int `json:"features"`
	Elapsed  time.Duration  `json:"elapsedNs"`
	Failures []*Outcome     `json:"-"`
	// Saved lists the directories Config.SaveDir received.
	Saved []string `json:"saved,omitempty"`
	// Examples keeps the first scenario id of each category.
	Examples map[string]string `json:"examples"`
}

// ScratchBase is where scratch directories go: $TAILPROOF_SCRATCH, else
// /dev/shm when it exists (the durable store fsyncs every append, which a
// disk makes the slowest part of a run), else the system temp dir.
func ScratchBase() string {
	if d := os.Getenv("TAILPROOF_SCRATCH"); d != "" {
		return d
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "tailproof-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// OK reports whether the run found no failure.
func (r *Report) OK() bool { return r.RefMismatch == 0 && r.Unclassified == 0 }

// Run generates cfg.Runs scenarios, runs each through the reference (one
// node process) and both tailproof modes, and tallies the outcomes.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Batch <= 0 {
		cfg.Batch = 250
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 20
	}
	scratch := cfg.Scratch
	if scratch == "" {
		d, err := os.MkdirTemp(ScratchBase(), "tailproof-conformance-")
		if err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
		defer os.RemoveAll(d)
		scratch = d
	}
	node, err := StartNode(ctx, scratch)
	if err != nil {
		return nil, err
	}
	defer node.Close()

	rep := &Report{Seed: cfg.Seed, Version: node.Version, Package: node.Package, JSAppended: map[string]int{}, RefKnown: map[string]int{}, PerCategory: map[string]int{},
		Features: map[string]int{}, Examples: map[string]string{}}
	for _, c := range Categories {
		rep.PerCategory[c] = 0
	}

	type batchResult struct {
		scen []Scenario
		js   []JSResult
		err  error
	}
	// Node works on batch k+1 while tailproof judges batch k.
	results := make(chan batchResult, 1)
	gctx, stopGen := context.WithCancel(ctx)
	defer stopGen()
	go func() {
		defer close(results)
		for lo := 0; lo < cfg.Runs && gctx.Err() == nil; lo += cfg.Batch {
			hi := min(lo+cfg.Batch, cfg.Runs)
			scen := make([]Scenario, 0, hi-lo)
			for i := lo; i < hi; i++ {
				scen = append(scen, Generate(cfg.Seed, i))
			}
			js, err := node.Run(scen)
			select {
			case results <- batchResult{scen, js, err}:
			case <-gctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var toSave []*Outcome
	knownSaved := map[string]bool{}
run:
	for b := range results {
		if b.err != nil {
			return rep, b.err
		}
		for i, s := range b.scen {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			o := Compare(ctx, scratch, s, b.js[i])
			rep.add(o)
			if cfg.Progress != nil {
				cfg.Progress(rep.Runs, cfg.Runs)
			}
			if o.Failed() || (o.Known != "" && !knownSaved[o.Known]) {
				knownSaved[o.Known] = true
				toSave = append(toSave, o)
			}
			if len(rep.Failures) >= cfg.MaxFailures {
				break run
			}
		}
	}
	// Stop and drain the generator so node is idle before minimizing.
	stopGen()
	for range results {
	}
	if cfg.SaveDir != "" {
		for _, o := range toSave {
			m, err := Minimize(ctx, node, scratch, o)
			if err != nil {
				return rep, err
			}
			d, err := m.Save(cfg.SaveDir)
			if err != nil {
				return rep, err
			}
			rep.Saved = append(rep.Saved, d)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func (r *Report) add(o *Outcome) {
	r.Runs++
	for _, f := range o.Scenario.Features {
		r.Features[f]++
	}
	switch {
	case o.JS.Appended == nil:
		r.JSAppended["nothing"]++
	default:
		r.JSAppended[fmt.Sprint(o.JS.Appended["terminal"])]++
	}
	switch {
	case o.RefMismatch == "":
		r.RefAgree++
	case o.Known != "":
		r.RefKnown[o.Known]++
		if _, ok := r.Examples[o.Known]; !ok {
			r.Examples[o.Known] = o.Scenario.ID
		}
	default:
		r.RefMismatch++
	}
	switch {
	case o.DefAgrees:
		r.DefAgree++
	case o.Category != "":
		r.PerCategory[o.Category]++
		if _, ok := r.Examples[o.Category]; !ok {
			r.Examples[o.Category] = o.Scenario.ID
		}
	default:
		r.Unclassified++
	}
	if o.Failed() {
		r.Failures = append(r.Failures, o)
	}
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "conformance against @qwen-code/qwen-code@%s: %d scenarios, seed %d, %s\n", r.Version, r.Runs, r.Seed, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "reference package: %s\n", r.Package)
	fmt.Fprintf(w, "reference appended: %s\n", tally(r.JSAppended))
	fmt.Fprintf(w, "reference mode: %d agree, %d known bugs, %d new disagreements\n", r.RefAgree, sum(r.RefKnown), r.RefMismatch)
	for _, k := range sortedKeys(r.RefKnown) {
		fmt.Fprintf(w, "  %-24s %d (e.g. %s)\n", k, r.RefKnown[k], r.Examples[k])
	}
	fmt.Fprintf(w, "default mode:   %d agree, %d deliberate differences, %d unclassified\n", r.DefAgree, sum(r.PerCategory), r.Unclassified)
	for _, c := range Categories {
		ex := ""
		if id, ok := r.Examples[c]; ok {
			ex = " (e.g. " + id + ")"
		}
		fmt.Fprintf(w, "  %-24s %d%s\n", c, r.PerCategory[c], ex)
	}
	for _, o := range r.Failures {
		fmt.Fprintln(w)
		fmt.Fprint(w, o.Describe())
	}
}

// JSON writes the report as one JSON object.
func (r *Report) JSON(w io.Writer) error {
	type failure struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Mismatch string `json:"detail"`
	}
	out := struct {
		*Report
		OK       bool      `json:"ok"`
		Failures []failure `json:"failures"`
	}{Report: r, OK: r.OK(), Failures: []failure{}}
	for _, o := range r.Failures {
		f := failure{ID: o.Scenario.ID, Kind: "reference-mode", Mismatch: o.RefMismatch}
		if o.RefMismatch == "" {
			f.Kind, f.Mismatch = "default-mode-unclassified", o.Why
		}
		out.Failures = append(out.Failures, f)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func tally(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Describe prints an outcome with both files, so a failure can be turned
// into a scenario test.
func (o *Outcome) Describe() string {
	var b strings.Builder
	s := o.Scenario
	fmt.Fprintf(&b, "scenario %s (session %s, cwd %s) [%s]\n", s.ID, s.SessionID, s.Cwd, strings.Join(s.Features, " "))
	if o.RefMismatch != "" {
		fmt.Fprintf(&b, "REFERENCE MODE DISAGREES%s: %s\n", map[bool]string{true: " (known " + o.Known + ")", false: ""}[o.Known != ""], o.RefMismatch)
	} else if !o.DefAgrees {
		fmt.Fprintf(&b, "default mode: %s — %s\n", orText(o.Category, "UNCLASSIFIED"), o.Why)
	}
	js := "nothing"
	if o.JS.Appended != nil {
		js = o.JS.Line
	}
	fmt.Fprintf(&b, "reference appended: %s\n", js)
	for _, m := range []struct {
		name string
		d    decisionView
	}{{"reference mode", view(o.Ref)}, {"default mode", view(o.Def)}} {
		fmt.Fprintf(&b, "%s: %s %s vetoes [%s]\n", m.name, m.d.verdict, m.d.line, m.d.vetoes)
		for _, t := range m.d.trace {
			fmt.Fprintf(&b, "    %s\n", t)
		}
	}
	fmt.Fprintf(&b, "--- ledger\n%s", s.Ledger)
	if !strings.HasSuffix(s.Ledger, "\n") {
		b.WriteString("⏎ (no final newline)\n")
	}
	if s.Transcript == nil {
		b.WriteString("--- transcript: missing\n")
	} else {
		fmt.Fprintf(&b, "--- transcript\n%s", *s.Transcript)
		if !strings.HasSuffix(*s.Transcript, "\n") {
			b.WriteString("⏎ (no final newline)\n")
		}
	}
	return b.String()
}

type decisionView struct {
	verdict, line, vetoes string
	trace                 []string
}

func view(d tailproof.Decision) decisionView {
	v := decisionView{verdict: string(d.Verdict), line: string(d.Line), trace: d.Trace}
	var vs []string
	for _, x := range d.Vetoes {
		vs = append(vs, x.String())
	}
	v.vetoes = strings.Join(vs, "; ")
	return v
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Save writes the outcome's scenario under dir/<id>/ as files: ledger.jsonl,
// transcript.jsonl (absent when the scenario has none), scenario.json (the
// session id, cwd and known-bug id) and outcome.txt (what each side did).
func (o *Outcome) Save(dir string) (string, error) {
	d := filepath.Join(dir, o.Scenario.ID)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("conformance: %w", err)
	}
	m := map[string]string{"id": o.Scenario.ID, "sessionId": o.Scenario.SessionID, "cwd": o.Scenario.Cwd}
	if o.Known != "" {
		m["known"] = o.Known
	}
	meta, _ := json.MarshalIndent(m, "", "  ")
	files := map[string]string{
		"ledger.jsonl":  o.Scenario.Ledger,
		"scenario.json": string(meta) + "\n",
		"outcome.txt":   o.Describe(),
	}
	if o.Scenario.Transcript != nil {
		files["transcript.jsonl"] = *o.Scenario.Transcript
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(data), 0o644); err != nil {
			return "", fmt.Errorf("conformance: %w", err)
		}
	}
	return d, nil
}

// LoadSaved reads a scenario written by Save.
func LoadSaved(dir string) (Scenario, error) {
	var s Scenario
	meta, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		return s, fmt.Errorf("conformance: %w", err)
	}
	if err := json.Unmarshal(meta, &s); err != nil {
		return s, fmt.Errorf("conformance: %s: %w", dir, err)
	}
	l, err := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		return s, fmt.Errorf("conformance: %w", err)
	}
	s.Ledger = string(l)
	if t, err := os.ReadFile(filepath.Join(dir, "transcript.jsonl")); err == nil {
		ts := string(t)
		s.Transcript = &ts
	}
	return s, nil
}
