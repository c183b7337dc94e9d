//go:build unix

package vfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Opening a FIFO with no writer blocks forever without O_NONBLOCK, and
// /dev/zero never ends: both are refused before a byte is read, by both
// filesystems.
func TestOpenRegularRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	reg := filepath.Join(dir, "reg")
	must(t, os.WriteFile(reg, []byte("x"), 0o600))
	rooted, err := vfs.Within(dir, "/dev")
	must(t, err)
	defer rooted.Close()
	for _, fsys := range []vfs.FS{vfs.OS, rooted} {
		for name, want := range map[string]string{
			fifo:        "a named pipe (FIFO)",
			"/dev/zero": "a character device",
			dir:         "a directory",
		} {
			for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_APPEND} {
				done := make(chan error, 1)
				go func() {
					f, err := vfs.OpenRegular(fsys, name, flag, 0)
					if f != nil {
						f.Close()
					}
					done <- err
				}()
				select {
				case err := <-done:
					if !errors.Is(err, vfs.ErrNotRegular) || !strings.Contains(err.Error(), want) {
						t.Errorf("%T %s flag %#x: %v, want ErrNotRegular naming %s", fsys, name, flag, err, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%T: opening %s blocked", fsys, name)
				}
			}
		}
		f, err := vfs.OpenRegular(fsys, reg, os.O_RDWR|os.O_APPEND, 0)
		must(t, err)
		if _, err := f.Write([]byte("y")); err != nil {
			t.Fatalf("write to a regular file opened by OpenRegular: %v", err)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(reg); string(b) != "xyy" {
		t.Fatalf("regular file holds %q", b)
	}
}

func TestLockRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "s.ledger.lock")
	must(t, syscall.Mkfifo(fifo, 0o600))
	rooted, err := vfs.Within(dir)
	must(t, err)
	defer rooted.Close()
	for _, fsys := range []vfs.FS{vfs.OS, rooted} {
		if _, err := fsys.Lock(fifo); !errors.Is(err, vfs.ErrNotRegular) {
			t.Errorf("%T: lock on a FIFO: %v", fsys, err)
		}
	}
}
