package main

import (
	"context"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRouteHarness: every spelling of --harness routes; qwen (or none)
// leaves the Qwen command its arguments, minus the flag and with --file
// read as --transcript; flags end at "--".
func TestRouteHarness(t *testing.T) {
	other := func(context.Context, []string, io.Writer, io.Writer) int { return 42 }
	for _, c := range []struct {
		args []string
		done bool
		rest []string
	}{
		{[]string{"--transcript", "t"}, false, []string{"--transcript", "t"}},
		{[]string{"--harness", "codex", "--file", "f"}, true, nil},
		{[]string{"--harness=claude"}, true, nil},
		{[]string{"-harness", "dsh"}, true, nil},
		{[]string{"--harness", "gemini"}, true, nil},
		{[]string{"--harness"}, true, nil},
		{[]string{"--harness", "qwen", "--file", "f", "--json"}, false, []string{"--transcript", "f", "--json"}},
		{[]string{"--harness=qwen", "--file=f"}, false, []string{"--transcript=f"}},
		{[]string{"--json", "--", "--harness", "codex"}, false, []string{"--json", "--", "--harness", "codex"}},
		{[]string{"--harness", "codex", "--harness", "qwen", "--file", "f"}, false, []string{"--transcript", "f"}},
	} {
		code, rest, done := routeHarness(context.Background(), c.args, io.Discard, io.Discard, other)
		if done != c.done || (done && code != 42) {
			t.Errorf("%q: done %v code %d, want done %v", c.args, done, code, c.done)
			continue
		}
		if !done {
			if d := cmp.Diff(c.rest, rest); d != "" {
				t.Errorf("%q: rest (-want +got):\n%s", c.args, d)
			}
		}
	}
}
