package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/term"
)

// batchSession is one session found under a batch directory.
type batchSession struct {
	id                 string
	ledger, transcript string // paths; "" when that file is absent
}

type unreadable struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

type batchResult struct {
	Session  string   `json:"session"`
	Verdict  string   `json:"verdict"`
	Target   string   `json:"target,omitempty"`
	Dangling int      `json:"dangling"`
	VetoedBy []string `json:"vetoedBy"`
	BadLines int      `json:"badLines"`
}

type batchSummary struct {
	Sessions   int            `json:"sessions"`
	Dangling   int            `json:"danglingPrompts"`
	Verdicts   map[string]int `json:"verdicts"`
	Vetoes     map[string]int `json:"vetoesByGuard"`
	Unreadable []unreadable   `json:"unreadable"`
	Results    []batchResult  `json:"results"`
}

// discoverSessions finds sessions in Qwen's runtime layout
// (DIR/projects/<workspace>/chats/) or, failing that, <id>.jsonl and
// <id>.ledger.jsonl pairs directly in DIR.
func discoverSessions(dir string) ([]batchSession, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	dirs := []string{dir}
	if chats, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "chats")); len(chats) > 0 {
		dirs = chats
	}
	var out []batchSession
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		byID := map[string]*batchSession{}
		var ids []string
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			id, isLedger := strings.TrimSuffix(name, ".jsonl"), false
			if strings.HasSuffix(id, ".ledger") {
				id, isLedger = strings.TrimSuffix(id, ".ledger"), true
			}
			s, ok := byID[id]
			if !ok {
				s = &batchSession{id: id}
				byID[id] = s
				ids = append(ids, id)
			}
			if isLedger {
				s.ledger = filepath.Join(d, name)
			} else {
				s.transcript = filepath.Join(d, name)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			out = append(out, *byID[id])
		}
	}
	return out, nil
}

func readOptional(path string) ([]byte, bool, error) {
	if path == "" {
		return nil, false, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

func runReplayBatch(ctx context.Context, f replayFlags, stdout, stderr io.Writer) int {
	sessions, err := discoverSessions(f.dir)
	if err != nil {
		fmt.Fprintf(stderr, "tailproof replay: %v\n", err)
		return 2
	}
	bar := newProgress(stderr, len(sessions))
	sum := batchSummary{Verdicts: map[string]int{}, Vetoes: map[string]int{}, Unreadable: []unreadable{}, Results: []batchResult{}}
	for i, bs := range sessions {
		if ctx.Err() != nil {
			break
		}
		bar.show(i, bs.id)
		sum.add(ctx, bs, f)
	}
	bar.done()
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "tailproof replay: interrupted")
		return 1
	}
	w := &replayWriter{w: stdout, json: f.asJSON}
	if f.asJSON {
		w.encode(sum)
	} else {
		printBatch(w, sum)
	}
	if w.err != nil {
		fmt.Fprintf(stderr, "tailproof replay: %v\n", w.err)
		return 1
	}
	return 0
}

func (sum *batchSummary) add(ctx context.Context, bs batchSession, f replayFlags) {
	sum.Sessions++
	var data [2][]byte
	var exists [2]bool
	for i, p := range []string{bs.ledger, bs.transcript} {
		b, ok, err := readOptional(p)
		if err != nil {
			sum.Unreadable = append(sum.Unreadable, unreadable{p, err.Error()})
			sum.Verdicts["unreadable"]++
			return
		}
		data[i], exists[i] = b, ok
	}
	s, err := newQwenSession(bs.id, data, exists)
	if err != nil {
		sum.Unreadable = append(sum.Unreadable, unreadable{bs.transcript, err.Error()})
		sum.Verdicts["unreadable"]++
		return
	}
	o := decide(ctx, s, s.ev.Len(), f.reference, f.now)
	res := batchResult{Session: bs.id, Verdict: o.Verdict, Target: o.Target, Dangling: len(o.Dangling), VetoedBy: []string{},
		BadLines: len(s.ev.Sources[0].Bad) + len(s.ev.Sources[1].Bad)}
	if o.Error != "" {
		// Reconcile fails only on a ledger it cannot read.
		file := bs.ledger
		if file == "" {
			file = bs.transcript
		}
		sum.Unreadable = append(sum.Unreadable, unreadable{file, o.Error})
		res.Verdict = "unreadable"
	}
	for _, v := range o.Vetoes {
		res.VetoedBy = append(res.VetoedBy, v.Guard)
		sum.Vetoes[v.Guard]++
	}
	sum.Dangling += res.Dangling
	sum.Verdicts[res.Verdict]++
	sum.Results = append(sum.Results, res)
}

func printBatch(w *replayWriter, sum batchSummary) {
	w.printf("%-38s  %-12s  %-8s  %s\n", "session", "verdict", "dangling", "vetoed by")
	for _, r := range sum.Results {
		w.printf("%-38s  %-12s  %8d  %s\n", r.Session, r.Verdict, r.Dangling, strings.Join(r.VetoedBy, ", "))
	}
	w.printf("\nsessions:         %d\n", sum.Sessions)
	w.printf("dangling prompts: %d\n", sum.Dangling)
	w.printf("verdicts:        ")
	for _, k := range sortedKeys(sum.Verdicts) {
		w.printf(" %s %d", k, sum.Verdicts[k])
	}
	w.printf("\nvetoes by guard: ")
	if len(sum.Vetoes) == 0 {
		w.printf(" none")
	}
	for _, k := range sortedKeys(sum.Vetoes) {
		w.printf(" %s %d", k, sum.Vetoes[k])
	}
	w.printf("\nunreadable files: %d\n", len(sum.Unreadable))
	for _, u := range sum.Unreadable {
		w.printf("  %s: %s\n", u.File, u.Reason)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// progress draws a bar on stderr, only when stderr is a terminal: a bar in
// a log file or a pipe is noise.
type progress struct {
	w     io.Writer
	total int
	on    bool
}

func newProgress(w io.Writer, total int) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, total: total, on: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progress) show(done int, label string) {
	if !p.on || p.total == 0 {
		return
	}
	const width = 30
	fill := done * width / p.total
	if len(label) > 36 {
		label = label[:36]
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %-36s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, p.total, label)
}

func (p *progress) done() {
	if p.on && p.total > 0 {
		p.show(p.total, "")
		fmt.Fprintln(p.w)
	}
}
