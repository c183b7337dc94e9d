package harnessfs_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/events/turn"
	"github.com/tailproof/tailproof/machines/turnverdict"
)

// FuzzRepair: on any file, repair never panics, never touches a byte before
// the last newline, keeps exactly what it cuts, and leaves every verdict as
// it was (a Claude Code NUL-led whole record, terminated because Claude Code
// reads it, may only turn verdicts unknown: ADR 0024).
//
//	go test -run='^$' -fuzz=FuzzRepair -fuzztime=60s ./adapters/harnessfs
func FuzzRepair(f *testing.F) {
	f.Add([]byte(strings.Join(codexLines, "\n")), false)
	f.Add(whole(codexLines)[:200], false)
	f.Add([]byte(strings.Join(claudeLines, "\n")), true)
	f.Add(append(whole(claudeLines[:1]), "\x00\x00"+claudeLines[1]...), true)
	f.Add([]byte("\xff\xfe{"), false)
	f.Add([]byte(""), true)
	f.Fuzz(func(t *testing.T, b []byte, isClaude bool) {
		h, path := codex.Harness(), codexPath
		if isClaude {
			h, path = claude.Harness(), claudePath
		}
		m := memory.NewFS()
		put(t, m, path, b)
		before := verdictsOf(h, b)
		res, err := harnessfs.Repair(context.Background(), m, path, h, harnessfs.RepairOptions{MaxLineBytes: 1 << 16})
		got, _ := m.ReadFile(path)
		if err != nil {
			if !bytes.Equal(got, b) {
				t.Fatalf("a refused repair wrote: %v", err)
			}
			return
		}
		last := bytes.LastIndexByte(b, '\n') + 1
		switch res.Action {
		case harnessfs.RepairNone:
			if !bytes.Equal(got, b) || last != len(b) {
				t.Fatalf("none, but the file changed or ends inside a line")
			}
		case harnessfs.RepairTerminated:
			if !bytes.Equal(got, append(append([]byte{}, b...), '\n')) {
				t.Fatalf("terminated, but the file is not the original and a newline")
			}
		case harnessfs.RepairCut:
			kept, _ := m.ReadFile(res.Evidence)
			if !bytes.Equal(got, b[:last]) || !bytes.Equal(kept, b[last:]) {
				t.Fatalf("cut at %d: file %d bytes, evidence %q", last, len(got), kept)
			}
		}
		after := verdictsOf(h, got)
		nulRecord := isClaude && res.Action == harnessfs.RepairTerminated && len(b) > last && b[last] == 0
		if len(after) != len(before) && !nulRecord {
			t.Fatalf("%s: %d turns before, %d after", res.Action, len(before), len(after))
		}
		for i := range min(len(before), len(after)) {
			if before[i] != after[i] && !(nulRecord && after[i].v == turnverdict.Unknown) {
				t.Fatalf("%s changed turn %d: %v → %v", res.Action, i, before[i], after[i])
			}
		}
	})
}

type tv struct {
	key string
	v   turnverdict.Verdict
}

func verdictsOf(h turn.Harness, b []byte) []tv {
	ds, _ := turnverdict.DecideAll(turn.Read(bytes.NewReader(b), h), turnverdict.Options{WriterStopped: true})
	out := make([]tv, len(ds))
	for i, d := range ds {
		out[i] = tv{d.Turn, d.Verdict}
	}
	return out
}
