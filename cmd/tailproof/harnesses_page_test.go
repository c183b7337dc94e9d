package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestHarnessesPageCommands runs the `go run ./cmd/tailproof …` lines of
// docs/harnesses.md's "The same replays from the command line" from the
// repository root and holds the page to what they print: each exits 0, its
// `line N <acts>` rows are the `→ N <acts>` rows of the page's replay block
// for that harness (the library's replay, TestHarnessesPageReplaysTheSessions),
// and its `decided turn …` rows, vetoes included, are the page's
// cli:decided block. TAILPROOF_UPDATE_DOCS=1 rewrites that block.
func TestHarnessesPageCommands(t *testing.T) {
	t.Chdir("../..")
	page, err := os.ReadFile("docs/harnesses.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(page), "## The same replays from the command line")
	if !ok {
		t.Fatal("docs/harnesses.md has no command-line section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var decided strings.Builder
	ran := 0
	for _, line := range strings.Split(sec, "\n") {
		rest, ok := strings.CutPrefix(line, "go run ./cmd/tailproof ")
		if !ok {
			continue
		}
		args := strings.Fields(rest)
		if len(args) < 3 || args[0] != "replay" || args[1] != "--harness" {
			t.Fatalf("%s: not a replay --harness command", line)
		}
		name := args[2]
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", line, code, errb.String())
		}
		ran++
		var acts []string
		fmt.Fprintf(&decided, "%s:\n", name)
		veto := false
		for _, l := range strings.Split(out.String(), "\n") {
			switch {
			case actRow.MatchString(l):
				acts = append(acts, strings.TrimPrefix(l, "line "))
			case strings.HasPrefix(l, "  decided turn "):
				decided.WriteString(l + "\n")
				veto = true
			case veto && strings.HasPrefix(l, "    veto"):
				decided.WriteString(l + "\n")
			default:
				veto = false
			}
		}
		// The page's next claim: without --writer-stopped the last turn is
		// unknown, vetoed by turn-over.
		var live, liveErr bytes.Buffer
		if code := run(context.Background(), slicesDelete(args, "--writer-stopped"), &live, &liveErr); code != 0 {
			t.Fatalf("%s without --writer-stopped: exit %d: %s", line, code, liveErr.String())
		}
		lastDecided := live.String()[strings.LastIndex(live.String(), "  decided turn "):]
		if !strings.Contains(strings.SplitN(lastDecided, "\n", 2)[0], ": unknown") || !strings.Contains(lastDecided, "veto: turn-over: ") {
			t.Errorf("%s without --writer-stopped: the last turn reads\n%s\nwant unknown with the turn-over veto, as the page says", line, lastDecided)
		}
		if want := pageActs(t, string(page), name); strings.Join(acts, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the command's acts\n%s\nare not the page's %s replay's\n%s", line, strings.Join(acts, "\n"), name, strings.Join(want, "\n"))
		}
	}
	if ran != 2 {
		t.Fatalf("ran %d commands of the page, want its 2", ran)
	}
	const open, close = "<!-- cli:decided -->\n", "<!-- /cli:decided -->"
	i, j := strings.Index(string(page), open), strings.Index(string(page), close)
	if i < 0 || j < i {
		t.Fatalf("docs/harnesses.md has no %s…%s block", strings.TrimSpace(open), close)
	}
	block := "```\n" + decided.String() + "```\n"
	if string(page[i+len(open):j]) == block {
		return
	}
	if os.Getenv("TAILPROOF_UPDATE_DOCS") == "" {
		t.Fatalf("docs/harnesses.md's cli:decided block is stale; TAILPROOF_UPDATE_DOCS=1 go test -run TestHarnessesPageCommands ./cmd/tailproof rewrites it. Now:\n%s", block)
	}
	out := string(page[:i+len(open)]) + block + string(page[j:])
	if err := os.WriteFile("docs/harnesses.md", []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// actRow is a `replay --harness` row of one record's acts ("line 3 …"); a
// damaged line reads "line 23: …".
var actRow = regexp.MustCompile(`^line [0-9]+ `)

// pageActs are the `→ N <acts>` rows of the page's replay block for name.
func pageActs(t *testing.T, page, name string) []string {
	t.Helper()
	_, block, ok := strings.Cut(page, "<!-- replay:"+name+" -->")
	block, _, _ = strings.Cut(block, "<!-- /replay:"+name+" -->")
	if !ok {
		t.Fatalf("docs/harnesses.md has no replay:%s block", name)
	}
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(l, " "), "→ "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// slicesDelete is args without any argument equal to drop.
func slicesDelete(args []string, drop string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}
