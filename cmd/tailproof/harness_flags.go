package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/vfs"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
)

// Harness names the --harness flag takes (ADR 0028). qwen is the default
// and keeps Qwen's own flags and outputs.
const (
	harnessQwen   = "qwen"
	harnessDSH    = "dsh"
	harnessCodex  = "codex"
	harnessClaude = "claude"
)

const harnessNames = "qwen, dsh, codex or claude"

// routeHarness looks for --harness in a Qwen command's arguments. Without
// it, or with --harness qwen, the command runs as before: the flag is
// removed and --file becomes --transcript (done false, rest the arguments
// for the Qwen command). Any other value runs the harness command instead
// (done true, code its exit code); an unknown name is a usage error there.
func routeHarness(ctx context.Context, args []string, stdout, stderr io.Writer,
	other func(ctx context.Context, args []string, stdout, stderr io.Writer) int) (code int, rest []string, done bool) {
	name, given := harnessArg(args)
	if !given {
		return 0, args, false
	}
	if name != harnessQwen {
		return other(ctx, args, stdout, stderr), nil, true
	}
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		switch flagName(a) {
		case "harness":
			if !strings.Contains(a, "=") {
				i++
			}
			continue
		case "file":
			a = strings.Replace(a, "file", "transcript", 1)
		}
		rest = append(rest, a)
	}
	return 0, rest, false
}

// harnessArg returns the value of the last --harness flag among args (flags
// end at "--"). A --harness with no value reads as the empty name, which
// the harness command refuses.
func harnessArg(args []string) (string, bool) {
	name, given := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if flagName(a) != "harness" {
			continue
		}
		given = true
		if _, v, ok := strings.Cut(a, "="); ok {
			name = v
		} else if i+1 < len(args) {
			name = args[i+1]
			i++
		} else {
			name = ""
		}
	}
	return name, given
}

// flagName is the name of a flag argument ("-x", "--x", "--x=v"), or "".
func flagName(a string) string {
	if !strings.HasPrefix(a, "-") {
		return ""
	}
	n := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	n, _, _ = strings.Cut(n, "=")
	return n
}

// harnessFlags name one harness session: a file, or a session id found in
// the harness's own layout.
type harnessFlags struct {
	name, file, session, cwd, home string
}

func (h *harnessFlags) register(fs *cli.FlagSet) {
	fs.StringVar(&h.name, "harness", harnessQwen, "the harness that wrote the session: "+harnessNames)
	fs.StringVar(&h.file, "file", "", "the session file (`PATH`)")
	fs.StringVar(&h.session, "session", "", "the session `ID`, found under --home (codex, claude, dsh)")
	fs.StringVar(&h.cwd, "cwd", "", "with --session: only the sessions of `WORKSPACE`")
	fs.StringVar(&h.home, "home", "", "the harness's `DIR`: Codex's $CODEX_HOME (default ~/.codex), Claude Code's $CLAUDE_CONFIG_DIR (default ~/.claude), dsh's sessions root (required)")
}

// harnessSession is a session file opened under the CLI's file policy: every
// read and write goes through fsys, confined to the directories named.
type harnessSession struct {
	Name    string
	Harness turn.Harness
	Path    string
	// Skipped lists the links discovery did not follow.
	Skipped []string
	fsys    *vfs.Rooted
	// v0 is a dsh v0 log's checked header and counts (harness_dsh.go),
	// nil for every other session.
	v0 *dshV0Source
	// unrootedPIDs is Claude Code's pid directory (<config>/sessions) when
	// the transcript, named by --file, sits in Claude Code's layout but that
	// directory was no real directory at open: the live-writer check then
	// looks at it itself (absentPIDs).
	unrootedPIDs string
}

func (s *harnessSession) Close() error { return s.fsys.Close() }

// Open reads the session file from its first byte (a dsh v0 log: its
// logical form).
func (s *harnessSession) Open(context.Context) (io.ReadCloser, error) {
	if s.v0 != nil {
		return s.openDSHV0()
	}
	f, err := vfs.OpenRegular(s.fsys, s.Path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

var _ tailproof.OpenSession = (*harnessSession)(nil).Open

// WriterLive is the live-writer check reconcile and repair run before they
// write: Claude Code's pid files (harnessfs.WriterCheck). Evidence of a live
// writer is exit 5, "unavailable": the session is not there to be decided
// yet.
func (s *harnessSession) WriterLive(context.Context) error {
	if s.unrootedPIDs != "" {
		return absentPIDs(s.unrootedPIDs)
	}
	err := harnessfs.WriterCheck(s.fsys, s.Name, s.Path, harnessfs.Alive)
	switch {
	case errors.Is(err, harnessfs.ErrWriterLive):
		return cli.WithCode(cli.Unavailable, fmt.Errorf("%w; nothing was written: let the session end (or stop its process), then run this again", err))
	case err != nil:
		return cli.WithCode(cli.Input, fmt.Errorf("checking for a live writer: %w", err))
	}
	return nil
}

// absentPIDs is the live-writer check when Claude Code's pid directory is
// not a directory tailproof reads: none at all means no Claude Code process
// ever registered under this configuration directory (a config restored
// from a backup, or a version before pid files), so no pid file names the
// session; anything else — a link, which is not followed, or a file — leaves
// the question open, and nothing is decided as if the writer had died.
func absentPIDs(dir string) error {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return cli.WithCode(cli.Input, fmt.Errorf("checking for a live writer: %w", err))
	}
	return cli.Inputf("checking for a live writer: Claude Code's pid directory %s is %s, not a directory tailproof reads (a link is not followed), so whether the session's writer still runs cannot be checked; nothing was written", dir, vfs.Describe(st.Mode()))
}

// turnHarness is the codec and mapper of a harness name.
func turnHarness(name string) (turn.Harness, error) {
	switch name {
	case harnessCodex:
		return codex.Harness(), nil
	case harnessClaude:
		return claude.Harness(), nil
	case harnessDSH:
		return dshHarness(), nil
	case harnessQwen:
		return turn.Harness{}, cli.Usagef("--harness qwen takes Qwen's own flags (--transcript, --ledger, --cwd/--session)")
	}
	return turn.Harness{}, cli.Usagef("unknown harness %q: want %s", name, harnessNames)
}

// open checks the flags and opens the session they name.
func (h *harnessFlags) open() (*harnessSession, error) {
	th, err := turnHarness(h.name)
	if err != nil {
		return nil, err
	}
	switch {
	case h.file != "" && (h.session != "" || h.cwd != "" || h.home != ""):
		return nil, cli.Usagef("give either --file PATH or --session ID [--cwd WORKSPACE] [--home DIR], not both")
	case h.file != "":
		return openHarnessFile(h.name, th, h.file)
	case h.session != "":
		if h.name == harnessDSH && h.home == "" {
			return nil, cli.Usagef("--session with --harness dsh needs --home DIR: the sessions root dsh's persistence was configured with (dsh has no default)")
		}
		return h.discover(th)
	case h.cwd != "" || h.home != "":
		return nil, cli.Usagef("--cwd and --home need --session ID")
	}
	return nil, cli.Usagef("name the session: --file PATH, or --session ID [--cwd WORKSPACE] [--home DIR]")
}

func openHarnessFile(name string, th turn.Harness, file string) (*harnessSession, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, cli.WithCode(cli.Input, fmt.Errorf("--file %s: %w", file, err))
	}
	roots := []string{abs}
	var unrooted string
	if name == harnessClaude {
		// A transcript in Claude Code's layout: its pid files, read by the
		// live-writer check, sit in <config>/sessions — a root of their own
		// when it is a real directory (a link there is not followed).
		if cfg, ok := harnessfs.ClaudeConfigOf(abs); ok {
			pids := filepath.Join(cfg, "sessions")
			if st, err := os.Lstat(pids); err == nil && st.IsDir() {
				roots = append(roots, filepath.Join(pids, "x")) // cli.Within roots a file's directory
			} else {
				unrooted = pids
			}
		}
	}
	fsys, err := cli.Within(roots...)
	if err != nil {
		return nil, err
	}
	if err := cli.CheckNamed(fsys, "--file", abs); err != nil {
		fsys.Close()
		return nil, relabel(err, abs, file)
	}
	s := &harnessSession{Name: name, Harness: th, Path: abs, fsys: fsys, unrootedPIDs: unrooted}
	if name == harnessDSH {
		if err := s.pickDSHFormat(); err != nil {
			fsys.Close()
			return nil, relabel(err, abs, file)
		}
	}
	return s, nil
}

// relabel puts the path the user typed back into a message about its
// absolute form.
func relabel(err error, abs, typed string) error {
	if abs == typed {
		return err
	}
	var e *cli.Error
	if errors.As(err, &e) {
		return &cli.Error{Code: e.Code, Err: errors.New(strings.ReplaceAll(e.Error(), abs, typed))}
	}
	return err
}

// discover finds --session under the harness's root, never following a
// link below it (harnessfs lists links as skipped), and opens it confined
// to that root.
func (h *harnessFlags) discover(th turn.Harness) (*harnessSession, error) {
	home, _ := os.UserHomeDir()
	var root string
	switch h.name {
	case harnessCodex:
		c := harnessfs.CodexHome(os.Getenv, home)
		if h.home != "" {
			c.Home = h.home
		}
		root = c.Home
	case harnessDSH:
		root = h.home
	default:
		c := harnessfs.ClaudeConfigDir(os.Getenv, home)
		if h.home != "" {
			c = harnessfs.Claude{ConfigDir: h.home}
		}
		root = c.ConfigDir
	}
	if h.name == harnessDSH {
		// dsh ids are any string its EncodeSegment maps onto one segment.
		if _, err := harnessfs.DSHSegment(h.session); err != nil {
			return nil, cli.Usagef("--session %q is not a dsh session id (non-empty UTF-8, at most %d bytes once encoded as one path segment)", h.session, harnessfs.MaxDSHSegment)
		}
	} else if err := harnessfs.CheckID(h.session); err != nil {
		return nil, cli.Usagef("--session %q is not a session id (letters, digits, '-' and '_', at most 128 bytes)", h.session)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, cli.WithCode(cli.Input, err)
	}
	if st, err := os.Lstat(root); err != nil || !st.IsDir() {
		what := "does not exist"
		if err == nil {
			what = "is " + vfs.Describe(st.Mode()) + ", not a directory"
		}
		return nil, cli.Inputf("the %s directory %s %s (--home, else %s)", h.name, root, what, rootEnv(h.name))
	}
	fsys, err := vfs.Within(root)
	if err != nil {
		return nil, cli.WithCode(cli.Input, err)
	}
	fail := func(err error) (*harnessSession, error) { fsys.Close(); return nil, err }
	var l harnessfs.Listing
	switch h.name {
	case harnessCodex:
		c := harnessfs.Codex{Home: root}
		if h.cwd != "" {
			l, err = c.ByWorkspace(fsys, h.cwd)
		} else {
			l, err = c.Sessions(fsys)
		}
	case harnessDSH:
		d := harnessfs.DSH{Root: root}
		if h.cwd != "" {
			l, err = d.ByWorkspace(fsys, h.cwd, h.session)
		} else {
			l, err = d.ByID(fsys, h.session)
		}
	default:
		c := harnessfs.Claude{ConfigDir: root}
		if h.cwd != "" {
			l, err = c.ByWorkspace(fsys, h.cwd)
		} else {
			l, err = c.Sessions(fsys)
		}
	}
	if err != nil {
		return fail(cli.WithCode(cli.Input, err))
	}
	var match []harnessfs.Session
	for _, s := range l.Sessions {
		if s.ID == h.session {
			match = append(match, s)
		}
	}
	where := root
	if h.cwd != "" {
		where += " for workspace " + h.cwd
	}
	switch len(match) {
	case 0:
		msg := fmt.Sprintf("no %s session %s under %s", h.name, h.session, where)
		if len(l.Skipped) > 0 {
			msg += " (not followed: " + strings.Join(l.Skipped, ", ") + ")"
		}
		return fail(cli.Inputf("%s", msg))
	case 1:
	default:
		var paths []string
		for _, m := range match {
			paths = append(paths, m.Path)
		}
		return fail(cli.Inputf("%s session %s is ambiguous under %s: %s; name one with --file", h.name, h.session, where, strings.Join(paths, ", ")))
	}
	if err := cli.CheckNamed(fsys, "session file", match[0].Path); err != nil {
		return fail(err)
	}
	s := &harnessSession{Name: h.name, Harness: th, Path: match[0].Path, Skipped: l.Skipped, fsys: fsys}
	if h.name == harnessDSH {
		if err := s.pickDSHFormat(); err != nil {
			return fail(err)
		}
	}
	return s, nil
}

func rootEnv(name string) string {
	switch name {
	case harnessCodex:
		return "$CODEX_HOME or ~/.codex"
	case harnessDSH:
		return "dsh has no default root"
	}
	return "$CLAUDE_CONFIG_DIR or ~/.claude"
}
