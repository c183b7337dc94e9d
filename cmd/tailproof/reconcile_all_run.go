package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/guards"
)

// foundSession is one session of the runtime directory: an id with a ledger
// (<id>.ledger.jsonl) or a transcript Qwen's scan would list, in one
// project's active chats directory. problem is set when the session cannot
// be reconciled at all (a hostile file name, an unreadable project).
type foundSession struct {
	project, chats, id string
	store              adapters.Store // shared by the project's sessions under --cwd; nil otherwise
	problem            error
}

// findSessions lists the sessions of every project under DIR/projects — or,
// with a workspace, of that workspace's project only — in project then id
// order, through fsys (confined to dir: a link out of it is never
// followed). Only the active chats directory is read: an archived session
// is reconciled when it is unarchived, as Qwen does on load. The error is
// for a directory that is not a runtime directory at all; everything that
// goes wrong below it is a foundSession with a problem.
func findSessions(fsys vfs.FS, dir, workspace string) ([]foundSession, error) {
	projects := filepath.Join(dir, "projects")
	var names []string
	if workspace != "" {
		layout := jsonl.NewQwenLayout(dir, workspace)
		if st, err := fsys.Stat(layout.ChatsDir(jsonl.Active)); err != nil || !st.IsDir() {
			return nil, cli.Inputf("workspace %s has no sessions under %s (no directory %s)", workspace, dir, layout.ChatsDir(jsonl.Active))
		}
		names = []string{filepath.Base(layout.ProjectDir())}
	} else {
		entries, err := fsys.ReadDir(projects)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, cli.Inputf("%s has no projects directory: not a Qwen runtime directory, or no session was ever recorded in it", dir)
		case err != nil:
			return nil, cli.WithCode(cli.Input, fmt.Errorf("%s: %w", projects, err))
		}
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	var out []foundSession
	for _, name := range names {
		pdir := filepath.Join(projects, name)
		st, err := fsys.Stat(pdir)
		switch {
		case err != nil:
			out = append(out, foundSession{project: name, problem: projectProblem(pdir, dir, err)})
			continue
		case !st.IsDir():
			continue // not a project folder
		}
		chats := filepath.Join(pdir, "chats")
		entries, err := fsys.ReadDir(chats)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // a project folder without sessions
		case err != nil:
			out = append(out, foundSession{project: name, problem: projectProblem(chats, dir, err)})
			continue
		}
		var store adapters.Store
		if workspace != "" {
			store = jsonl.NewQwenStore(fsys, jsonl.NewQwenLayout(dir, workspace))
		}
		out = append(out, sessionsIn(name, chats, entries, store)...)
	}
	return out, nil
}

func projectProblem(p, root string, err error) error {
	if errors.Is(err, vfs.ErrOutsideRoot) {
		return cli.Inputf("%s is a symbolic link leading out of the runtime directory %s: tailproof reads and writes only inside it", p, root)
	}
	return cli.WithCode(cli.Input, fmt.Errorf("%s: %w", p, err))
}

// sessionsIn groups a chats directory's entries into sessions, sorted by id.
// A ledger's id must pass jsonl.CheckSessionID (a name with a control
// character, or one ending in .ledger.ledger.jsonl, is reported, not
// reconciled); a transcript counts only under Qwen's SESSION_FILE_PATTERN,
// so sidecars and stray .jsonl files are not sessions. Entries of any type
// are taken, so that a directory or a FIFO where a ledger should be is
// reported by the same checks a single reconcile makes.
func sessionsIn(project, chats string, entries []fs.DirEntry, store adapters.Store) []foundSession {
	ids := map[string]error{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".ledger.jsonl"):
			id := strings.TrimSuffix(name, ".ledger.jsonl")
			if err := jsonl.CheckSessionID(id); err != nil {
				ids[name] = cli.Inputf("ledger %q in %s: %w", name, chats, err)
				continue
			}
			if !seen(ids, id) {
				ids[id] = nil
			}
		case jsonl.IsTranscriptName(name):
			if id := strings.TrimSuffix(name, ".jsonl"); !seen(ids, id) {
				ids[id] = nil
			}
		}
	}
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]foundSession, 0, len(keys))
	for _, id := range keys {
		out = append(out, foundSession{project: project, chats: chats, id: id, store: store, problem: ids[id]})
	}
	return out
}

func seen(ids map[string]error, id string) bool { _, ok := ids[id]; return ok }

// sessionOutcome is what reconciling one session came to.
//
// It keeps the published reconciliation as its JSON bytes and the few
// fields the report reads, not the Result: a Result holds each decision's
// evidence and steps, and 10,000 of them held until the end were most of
// the command's memory.
type sessionOutcome struct {
	doc       json.RawMessage // the reconciliation as published; nil when nothing was decided
	dangling  int
	decisions []decisionBrief
	err       error    // the session failed (doc may hold what was appended before)
	warnings  []string // the ledger's undecodable lines, as reconcile --session warns of them
}

type decisionBrief struct {
	target, verdict string
	line            bool // a terminal was appended (with a dry run: would have been)
	vetoes          []guards.Veto
}

func sessionOutcomeOf(res tailproof.Result, err error, warnings []string) sessionOutcome {
	doc, merr := json.Marshal(res)
	if merr != nil {
		return sessionOutcome{err: cli.WithCode(cli.Internal, fmt.Errorf("encode the reconciliation: %w", merr))}
	}
	o := sessionOutcome{doc: doc, dangling: len(res.Dangling), err: err, warnings: warnings}
	for _, d := range res.Decisions {
		o.decisions = append(o.decisions, decisionBrief{target: d.Target, verdict: string(d.Verdict), line: d.Line != nil, vetoes: d.Vetoes})
	}
	return o
}

// reconcileSession reconciles one session exactly as `reconcile --session`
// does — the same file checks, the same façade, store, lock and fsync —
// and never panics the batch: a panic is reported as that session's
// internal error.
func reconcileSession(ctx context.Context, fsys vfs.FS, root string, s foundSession, opts tailproof.Options) (o sessionOutcome) {
	if s.problem != nil {
		return sessionOutcome{err: s.problem}
	}
	defer func() {
		if p := recover(); p != nil {
			o = sessionOutcome{err: cli.WithCode(cli.Internal, fmt.Errorf("internal error (a bug; please report it): %v", p))}
		}
	}()
	lp := filepath.Join(s.chats, s.id+".ledger.jsonl")
	tp := filepath.Join(s.chats, s.id+".jsonl")
	var ledger cli.FileReport
	for _, f := range [][2]string{{"transcript", tp}, {"ledger", lp}} {
		rep, err := cli.CheckSessionFile(fsys, root, f[0], f[1])
		if err != nil {
			return sessionOutcome{err: err}
		}
		ledger = rep
	}
	store := s.store
	if store == nil {
		// The workspace is not known (project folder names are lossy), so
		// the session is reconciled as `--ledger --transcript` would: the
		// same writer and lock file, no membership check (ADR 0036).
		store = jsonl.NewFilesStore(fsys, lp, tp)
	}
	var warnings []string
	if ledger.Present {
		// The ledger is read twice, as reconcile --session reads it: once
		// for the report, once by the façade.
		rc, err := store.OpenLedger(ctx, s.id)
		if err != nil {
			return sessionOutcome{err: cli.WithCode(cli.Input, err)}
		}
		rep, err := cli.ScanLedger(rc)
		rc.Close()
		if err != nil {
			return sessionOutcome{err: cli.WithCode(cli.Input, fmt.Errorf("ledger %s: %w", lp, err))}
		}
		rep.Path = lp
		warnings = rep.Warnings("ledger")
	}
	res, err := tailproof.Reconcile(ctx, store, s.id, opts)
	return sessionOutcomeOf(res, err, warnings)
}

// forEach runs do(i) for every i < n on up to workers goroutines and calls
// progress, from the calling goroutine only, as each finishes. Once ctx is
// done no further item starts.
func forEach(ctx context.Context, n, workers int, do func(i int), progress func(done, i int)) {
	next, finished := make(chan int), make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				do(i)
				finished <- i
			}
		})
	}
	go func() {
		defer close(next)
		for i := range n {
			if ctx.Err() != nil { // select picks at random when both are ready
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(finished) }()
	done := 0
	for i := range finished {
		done++
		progress(done, i)
	}
}
