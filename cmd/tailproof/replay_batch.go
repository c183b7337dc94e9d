package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events"
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
	// Seconds is the wall time of the deciding, PerSecond sessions per
	// second of it (all workers together).
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"sessionsPerSecond"`
}

// discoverSessions finds sessions in Qwen's runtime layout
// (DIR/projects/<workspace>/chats/) or, failing that, <id>.jsonl and
// <id>.ledger.jsonl pairs directly in DIR. It looks through fsys, confined
// to DIR, so a link out of it is never followed.
func discoverSessions(fsys vfs.FS, dir string) ([]batchSession, error) {
	dirs := []string{dir}
	if projects, err := fsys.ReadDir(filepath.Join(dir, "projects")); err == nil {
		var chats []string
		for _, p := range projects {
			if c := filepath.Join(dir, "projects", p.Name(), "chats"); p.IsDir() && isDir(fsys, c) {
				chats = append(chats, c)
			}
		}
		if len(chats) > 0 {
			dirs = chats
		}
	}
	var out []batchSession
	for _, d := range dirs {
		entries, err := fsys.ReadDir(d)
		if err != nil {
			return nil, cli.WithCode(cli.Input, err)
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

func isDir(fsys vfs.FS, p string) bool {
	st, err := fsys.Stat(p)
	return err == nil && st.IsDir()
}

// readOptional reads a session file found in the batch directory: absent is
// no file; a FIFO, a device or a link out of the directory is unreadable.
func readOptional(fsys vfs.FS, path string, stream events.Stream) ([]byte, bool, error) {
	if path == "" {
		return nil, false, nil
	}
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := readLines(f, stream, 0)
	return b, err == nil, err
}

func runReplayBatch(ctx context.Context, f replayFlags, stdout, stderr io.Writer) error {
	switch st, err := os.Stat(f.dir); {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Inputf("--dir %s does not exist", f.dir)
	case err != nil:
		return cli.WithCode(cli.Input, fmt.Errorf("--dir %s: %w", f.dir, err))
	case !st.IsDir():
		return cli.Inputf("--dir %s is %s, not a directory", f.dir, vfs.Describe(st.Mode()))
	}
	fsys, err := vfs.Within(f.dir)
	if err != nil {
		return cli.WithCode(cli.Input, fmt.Errorf("--dir %s: %w", f.dir, err))
	}
	defer fsys.Close()
	sessions, err := discoverSessions(fsys, f.dir)
	if err != nil {
		return err
	}
	bar := cli.NewProgress(stderr, "sessions", len(sessions))
	start := time.Now()
	outs := decideAll(ctx, fsys, sessions, f, runtime.GOMAXPROCS(0), func(done int, id string) { bar.Set(done, id) })
	bar.Done()
	if ctx.Err() != nil {
		return cli.WithCode(cli.Interrupted, errors.New("interrupted"))
	}
	sum := batchSummary{Verdicts: map[string]int{}, Vetoes: map[string]int{}, Unreadable: []unreadable{}, Results: []batchResult{}}
	for _, o := range outs {
		sum.merge(o)
	}
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.PerSecond = float64(sum.Sessions) / sum.Seconds
	}
	if bar != nil { // on a terminal only: the text report stays reproducible
		fmt.Fprintf(stderr, "%d sessions in %.2f s: %.0f sessions per second on %d workers\n", sum.Sessions, sum.Seconds, sum.PerSecond, runtime.GOMAXPROCS(0))
	}
	w := &replayWriter{w: stdout, json: f.asJSON}
	if f.asJSON {
		w.encode(sum)
	} else {
		printBatch(w, sum)
	}
	if w.err != nil {
		return cli.WithCode(cli.Write, w.err)
	}
	return nil
}

// batchOutcome is what one session contributed to the summary.
type batchOutcome struct {
	unreadable []unreadable
	res        *batchResult // nil when the session's files could not be read
}

// decideAll decides every session on up to workers goroutines (each holds
// one session in memory at a time) and returns the outcomes in session
// order, so the summary is the same whatever the parallelism. progress is
// called from the calling goroutine only.
func decideAll(ctx context.Context, fsys vfs.FS, sessions []batchSession, f replayFlags, workers int, progress func(done int, id string)) []batchOutcome {
	outs := make([]batchOutcome, len(sessions))
	next := make(chan int)
	done := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(sessions))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outs[i] = decideOne(ctx, fsys, sessions[i], f)
				done <- i
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range sessions {
			if ctx.Err() != nil {
				return
			}
			next <- i
		}
	}()
	go func() { wg.Wait(); close(done) }()
	n := 0
	for i := range done {
		n++
		progress(n, sessions[i].id)
	}
	return outs
}

// decideOne reads one session and decides it as recovery would now (a dry
// run over the whole session).
func decideOne(ctx context.Context, fsys vfs.FS, bs batchSession, f replayFlags) batchOutcome {
	var data [2][]byte
	var exists [2]bool
	for i, p := range []string{bs.ledger, bs.transcript} {
		b, ok, err := readOptional(fsys, p, [2]events.Stream{events.StreamLedger, events.StreamTranscript}[i])
		if err != nil {
			return batchOutcome{unreadable: []unreadable{{p, err.Error()}}}
		}
		data[i], exists[i] = b, ok
	}
	s, err := newQwenSession(bs.id, data, exists)
	if err != nil {
		return batchOutcome{unreadable: []unreadable{{bs.transcript, err.Error()}}}
	}
	o := decide(ctx, s, s.ev.Len(), f.reference, f.now)
	res := &batchResult{Session: bs.id, Verdict: o.Verdict, Target: o.Target, Dangling: len(o.Dangling), VetoedBy: []string{},
		BadLines: len(s.ev.Sources[0].Bad) + len(s.ev.Sources[1].Bad)}
	var out batchOutcome
	if o.Error != "" {
		// Reconcile fails only on a ledger it cannot read.
		file := bs.ledger
		if file == "" {
			file = bs.transcript
		}
		out.unreadable = append(out.unreadable, unreadable{file, o.Error})
		res.Verdict = "unreadable"
	}
	for _, v := range o.Vetoes {
		res.VetoedBy = append(res.VetoedBy, v.Guard)
	}
	out.res = res
	return out
}

func (sum *batchSummary) merge(o batchOutcome) {
	sum.Sessions++
	sum.Unreadable = append(sum.Unreadable, o.unreadable...)
	if o.res == nil {
		sum.Verdicts["unreadable"]++
		return
	}
	for _, g := range o.res.VetoedBy {
		sum.Vetoes[g]++
	}
	sum.Dangling += o.res.Dangling
	sum.Verdicts[o.res.Verdict]++
	sum.Results = append(sum.Results, *o.res)
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
