package main

import (
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// sessionFlags are the input flags reconcile, status and replay share: two
// explicit files, or Qwen Code's runtime layout.
type sessionFlags struct {
	ledger, transcript    string
	runtime, cwd, session string
}

func (s *sessionFlags) register(fs *cli.FlagSet) {
	fs.StringVar(&s.ledger, "ledger", "", "the prompt terminal ledger (`FILE`)")
	fs.StringVar(&s.transcript, "transcript", "", "the session transcript (`FILE`)")
	fs.StringVar(&s.runtime, "qwen-runtime", "", "Qwen Code's runtime `DIR` (default: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen)")
	fs.StringVar(&s.cwd, "cwd", "", "the session's `WORKSPACE` directory (with --session)")
	fs.StringVar(&s.session, "session", "", "the session `ID` in Qwen Code's layout")
}

// explicit reports whether the flags name files rather than a session.
func (s *sessionFlags) explicit() bool { return s.ledger != "" || s.transcript != "" }

// open checks the flags and opens the session they name under the CLI's
// file policy. --transcript alone is enough for every command (issue #15
// item 7: `--harness qwen --file PATH`): with no --ledger, no ledger is read
// and none can be written (cli.OpenFiles).
func (s *sessionFlags) open() (*cli.Session, error) {
	switch {
	case s.explicit():
		if s.session != "" || s.cwd != "" || s.runtime != "" {
			return nil, cli.Usagef("give either --ledger/--transcript or --cwd/--session, not both")
		}
		if s.transcript == "" {
			return nil, cli.Usagef("--ledger needs --transcript")
		}
		return cli.OpenFiles(s.ledger, s.transcript)
	case s.session != "":
		if s.cwd == "" {
			return nil, cli.Usagef("--session needs --cwd (the workspace the session ran in)")
		}
		dir, err := cli.RuntimeDir(s.runtime)
		if err != nil {
			return nil, err
		}
		return cli.OpenQwen(dir, s.cwd, s.session)
	case s.cwd != "" || s.runtime != "":
		return nil, cli.Usagef("--cwd and --qwen-runtime need --session ID")
	}
	return nil, cli.Usagef("name the session: --transcript FILE [--ledger FILE], or --cwd WORKSPACE --session ID [--qwen-runtime DIR]")
}
