package harnessfs_test

import (
	"fmt"

	"github.com/tailproof/tailproof/adapters/harnessfs"
	"github.com/tailproof/tailproof/adapters/memory"
)

// Find the Claude Code transcripts of a workspace.
func ExampleClaude_ByWorkspace() {
	m := memory.NewFS()
	_ = m.WriteFile("/home/u/.claude/projects/-work-demo/5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4.jsonl", []byte("{}\n"), 0o600)
	cl := harnessfs.ClaudeConfigDir(func(string) string { return "" }, "/home/u")
	l, err := cl.ByWorkspace(m, "/work/demo")
	if err != nil {
		panic(err)
	}
	for _, s := range l.Sessions {
		fmt.Println(s.ID, s.Path)
	}
	// Output:
	// 5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4 /home/u/.claude/projects/-work-demo/5e9203a5-ffbc-40b3-a9a4-13bccc5f74c4.jsonl
}
