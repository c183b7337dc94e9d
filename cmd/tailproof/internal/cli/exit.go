package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// Exit codes, the same in every command (ADR 0021, README).
const (
	// OK: the command gave its answer — a decision (completed, interrupted,
	// unknown or none), a status, a replay, a passing check — or --help.
	OK = 0
	// CheckFailed: the command ran and its check failed: a simulation broke
	// an invariant, conformance disagreed with the reference, reconcile
	// --all left a prompt unknown (ADR 0036).
	CheckFailed = 1
	// Usage: a flag, a flag value or an argument is wrong; nothing was read.
	Usage = 2
	// Input: an input the user named is missing, is not a regular file, lies
	// through a symbolic link outside the directories named, cannot be read,
	// or cannot be used at all (no such session, an unloadable log); nothing
	// was written.
	Input = 3
	// Write: a write failed — a ledger append (rolled back when it could be,
	// and the message says which), an output file, stdout.
	Write = 4
	// Unavailable: something the command needs from outside is not there:
	// node or Qwen Code's package (conformance), a NATS server — or not
	// yet: a harness session whose writer may still be running (ADR 0028).
	Unavailable = 5
	// Internal: a bug in tailproof (a panic among them); please report it.
	Internal = 70
	// Interrupted: SIGINT arrived before the command finished (128+2, as a
	// shell reports it).
	Interrupted = 130
)

// Codes lists every exit code with its one-line meaning, in order, for the
// usage text and the README table.
var Codes = []struct {
	Code    int
	Meaning string
}{
	{OK, "an answer: a decision (unknown and none included), a status, a replay, a passing check; --help"},
	{CheckFailed, "the command's check failed: a simulation invariant broken, conformance disagreeing, a prompt reconcile --all left unknown"},
	{Usage, "a wrong flag, flag value or argument, or a hostile session id; nothing was read"},
	{Input, "a named input is missing, not a regular file, behind a symlink out of its directory, unreadable or unusable (no such session)"},
	{Write, "a write failed: a ledger append (rolled back when possible), an output file, stdout"},
	{Unavailable, "a program or service the command needs is missing (node, Qwen Code's package, a NATS server), or the session's writer may still be running (Claude Code's pid files); nothing was written"},
	{Internal, "a bug in tailproof"},
	{Interrupted, "interrupted (SIGINT)"},
}

// Error carries the exit code an error calls for.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// WithCode attaches an exit code to err (nil stays nil).
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Usagef is a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Inputf is an input error (exit 3).
func Inputf(format string, args ...any) error {
	return &Error{Code: Input, Err: fmt.Errorf(format, args...)}
}

// Code is the exit code err calls for: the code of the first *Error in its
// chain, else the class of a known sentinel, else fallback.
func Code(err error, fallback int) int {
	var e *Error
	switch {
	case err == nil:
		return OK
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, context.Canceled):
		return Interrupted
	case errors.Is(err, adapters.ErrInvalidSessionID), errors.Is(err, tailproof.ErrInvalidClock):
		return Usage
	case errors.Is(err, jsonl.ErrNotAppended):
		return Write
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, adapters.ErrNotFound), errors.Is(err, fs.ErrPermission),
		errors.Is(err, vfs.ErrNotRegular), errors.Is(err, vfs.ErrOutsideRoot),
		errors.Is(err, tailproof.ErrUnreadableLedger), errors.Is(err, tailproof.ErrNoTranscript):
		return Input
	}
	return fallback
}

// errHelp is what Parse returns after printing --help; Main exits 0 on it.
var errHelp = errors.New("help printed")

// Main runs a command body and turns its error into the exit code, printing
// "tailproof <cmd>: <error>" on stderr. An error that is not classified is
// an internal one (exit 70).
func Main(stderr io.Writer, cmd string, body func() error) int {
	err := body()
	if err == nil || errors.Is(err, errHelp) {
		return OK
	}
	var s silent
	if !errors.As(err, &s) {
		fmt.Fprintf(stderr, "tailproof %s: %v\n", cmd, err)
	}
	return Code(err, Internal)
}

// silent is an exit code whose message the command has already printed.
type silent struct{ code int }

func (s silent) Error() string { return fmt.Sprintf("exit %d", s.code) }

// Exit ends a command with code after it has printed its own message.
func Exit(code int) error {
	if code == OK {
		return nil
	}
	return &Error{Code: code, Err: silent{code}}
}
