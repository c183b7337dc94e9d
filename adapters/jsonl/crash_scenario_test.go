package jsonl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/events/ledger"
)

// TestCrashScenarios runs testdata/crash/*.txt: ledger appends on the strict
// memory FS with injected faults and power losses, printing what survives.
//
//	append            one AppendLedger per input line; prints ok or the error
//	inject op=OP [nth=N] [torn=N] [crash]
//	crash [keep=N]    power loss; keep N bytes of each file's unsynced appends; reboot
//	read              the active ledger as the reference reader sees it
func TestCrashScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/crash", func(t *testing.T, path string) {
		m := memory.NewFS()
		layout := memory.DefaultQwenLayout
		s := memory.NewQwenStoreOn(m, layout)
		ctx := context.Background()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "append":
				var b strings.Builder
				for _, line := range strings.Split(d.Input, "\n") {
					if err := s.AppendLedger(ctx, crashSID, []byte(line)); err != nil {
						fmt.Fprintf(&b, "error: %v\n", shorten(err, layout))
						continue
					}
					b.WriteString("ok\n")
				}
				return b.String()
			case "inject":
				var op string
				d.ScanArgs(t, "op", &op)
				f := memory.Fault{Op: memory.Op(op), Crash: d.HasArg("crash")}
				if d.HasArg("nth") {
					d.ScanArgs(t, "nth", &f.Nth)
				}
				if d.HasArg("torn") {
					d.ScanArgs(t, "torn", &f.Torn)
				}
				m.Inject(f)
				return ""
			case "crash":
				keep := 0
				if d.HasArg("keep") {
					d.ScanArgs(t, "keep", &keep)
				}
				m.CrashKeeping(func(string, []byte) int { return keep })
				s = memory.NewQwenStoreOn(m, layout)
				return tree(t, m, layout)
			case "read":
				rc, err := s.OpenLedger(ctx, crashSID)
				if err != nil {
					return "error: " + err.Error()
				}
				defer rc.Close()
				recs, dropped, err := ledger.Read(rc, false)
				if err != nil {
					return "error: " + err.Error()
				}
				var b strings.Builder
				for _, r := range recs {
					b.WriteString(r.Describe() + "\n")
				}
				fmt.Fprintf(&b, "dropped %d\n", dropped)
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// shorten keeps scenario output readable: the chats directory is "chats".
func shorten(err error, l jsonl.QwenLayout) string {
	return strings.ReplaceAll(err.Error(), l.ChatsDir(jsonl.Active), "chats")
}
