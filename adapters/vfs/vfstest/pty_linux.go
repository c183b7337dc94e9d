package vfstest

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// PTY opens a pseudo-terminal pair — what an interactive stderr is — and
// closes it when the test ends. It skips the test where there is none.
func PTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("vfstest: no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("vfstest: unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("vfstest: ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("vfstest: open the pty's terminal side: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// ReadPTY returns what the terminal side of master showed, reading until it
// has seen until (or for 5 seconds).
func ReadPTY(t testing.TB, master *os.File, until string) string {
	t.Helper()
	var got strings.Builder
	buf := make([]byte, 4096)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(got.String(), until) && time.Now().Before(deadline) {
		master.SetReadDeadline(deadline)
		n, err := master.Read(buf)
		got.Write(buf[:n])
		if err != nil && err != io.EOF {
			break
		}
	}
	return got.String()
}
