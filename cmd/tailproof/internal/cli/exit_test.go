package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func TestCodeClassifiesEveryKnownFailure(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("tailproof: append terminal for p1: %w", err) }
	for want, errs := range map[int][]error{
		OK:          {nil},
		Usage:       {Usagef("--runs must be at least 1"), wrap(adapters.ErrInvalidSessionID)},
		Input:       {wrap(fs.ErrNotExist), wrap(vfs.ErrNotRegular), wrap(vfs.ErrOutsideRoot), wrap(fs.ErrPermission), wrap(adapters.ErrNotFound), fmt.Errorf("tailproof: %w: x", tailproof.ErrUnreadableLedger), fmt.Errorf("%w: y", tailproof.ErrNoTranscript)},
		Write:       {wrap(fmt.Errorf("write: %w (%w)", syscall.ENOSPC, jsonl.ErrNotAppended)), WithCode(Write, errors.New("x"))},
		Interrupted: {wrap(context.Canceled)},
		CheckFailed: {Exit(CheckFailed)},
		Internal:    {errors.New("something unforeseen")},
	} {
		for _, err := range errs {
			if got := Code(err, Internal); got != want {
				t.Errorf("Code(%v) = %d, want %d", err, got, want)
			}
		}
	}
	// An explicit code wins over the sentinel inside it.
	if got := Code(WithCode(Write, wrap(fs.ErrNotExist)), Internal); got != Write {
		t.Errorf("explicit code lost: %d", got)
	}
}

func TestMainPrintsOneLineAndTheCode(t *testing.T) {
	var errb bytes.Buffer
	if code := Main(&errb, "x", func() error { return Inputf("--ledger l does not exist") }); code != Input || errb.String() != "tailproof x: --ledger l does not exist\n" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := Main(&errb, "x", func() error { return Exit(CheckFailed) }); code != CheckFailed || errb.Len() != 0 {
		t.Fatalf("a command that printed its own message: exit %d, stderr %q", code, errb.String())
	}
	if code := Main(&errb, "x", func() error { return errHelp }); code != OK {
		t.Fatalf("help: exit %d", code)
	}
	if Exit(OK) != nil {
		t.Fatal("Exit(OK) is an error")
	}
	seen := map[int]bool{}
	for _, c := range Codes {
		if seen[c.Code] || c.Meaning == "" {
			t.Fatalf("code %d listed twice or unexplained", c.Code)
		}
		seen[c.Code] = true
	}
}
