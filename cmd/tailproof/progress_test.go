package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/vfs/vfstest"
	"github.com/tailproof/tailproof/cmd/tailproof/internal/cli"
)

// Long commands draw progress on stderr when it is a terminal, and not a
// byte of it otherwise: replay (its steps, --dir, --crash-at all),
// simulate, loadtest and conformance (when node and Qwen Code 0.24.4 are
// installed; exit 5 skips it).
func TestProgressOnlyWhenStderrIsATerminal(t *testing.T) {
	for _, c := range []struct {
		args  []string
		label string
	}{
		{[]string{"replay", "--dir", replayRuntime}, "sessions ["},
		{append([]string{"replay", "--crash-at", "all"}, sessionArgs(sessCompleted)...), "crash points ["},
		{append([]string{"replay"}, sessionArgs(sessCompleted)...), "replay ["},
		{[]string{"simulate", "--runs", "200", "--workers", "1"}, "scenarios ["},
		{[]string{"loadtest", "--transport", "inprocess", "--sessions", "20", "--events", "2"}, "inprocess ["},
		{[]string{"conformance", "--runs", "1"}, "scenarios ["},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if c.args[0] == "conformance" && code == cli.Unavailable {
			t.Logf("conformance not checked: %s", errb.String())
			continue
		}
		if code != 0 || errb.Len() != 0 {
			t.Fatalf("%v off a terminal: exit %d, stderr %q", c.args, code, errb.String())
		}
		master, slave := vfstest.PTY(t)
		out.Reset()
		if code := run(context.Background(), c.args, &out, slave); code != 0 {
			t.Fatalf("%v on a terminal: exit %d", c.args, code)
		}
		if got := vfstest.ReadPTY(t, master, "\033[K"); !strings.Contains(got, c.label) || !strings.Contains(got, "100%") {
			t.Fatalf("%v: the terminal showed %q", c.args, got)
		}
		if strings.Contains(out.String(), "\r") {
			t.Fatalf("%v: progress leaked into stdout", c.args)
		}
	}
}
