//go:build linux

package cli

import (
	"strings"
	"testing"

	"github.com/tailproof/tailproof/adapters/vfs/vfstest"
)

// On a real terminal the bar is drawn.
func TestProgressDrawsOnATerminal(t *testing.T) {
	master, slave := vfstest.PTY(t)
	if !IsTerminal(slave) {
		t.Fatal("a pty slave is not a terminal")
	}
	p := NewProgress(slave, "sessions", 4)
	if p == nil {
		t.Fatal("no bar on a terminal")
	}
	p.Set(1, "session-a")
	p.Set(4, "session-d")
	p.Done()
	if got := vfstest.ReadPTY(t, master, "\033[K"); !strings.Contains(got, "sessions [=======") || !strings.Contains(got, "25% 1/4 session-a") ||
		!strings.Contains(got, "100% 4/4 session-d") {
		t.Fatalf("terminal showed %q", got)
	}
}
