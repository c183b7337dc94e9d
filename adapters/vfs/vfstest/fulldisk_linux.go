package vfstest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// pageSize is tmpfs's allocation unit: a write that needs a new page on a
// full tmpfs fails, one that fits in a file's last page succeeds.
const pageSize = 4096

// SmallDisk mounts a tmpfs of the given size (rounded up to pages) on a new
// directory and unmounts it when the test ends. It skips the test when the
// process may not mount.
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	opts := "size=" + strconv.Itoa((size+pageSize-1)/pageSize*pageSize) + ",mode=0700"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		t.Skipf("vfstest: cannot mount a tmpfs to fill (%v): needs Linux and root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("vfstest: unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill takes every free page of the filesystem holding dir with a filler
// file, so that the next write needing a page fails with ENOSPC. It returns
// a function that removes the filler (the space comes back).
func Fill(t testing.TB, dir string) (release func()) {
	t.Helper()
	path := filepath.Join(dir, ".filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, pageSize)
	for {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// PageRoom is how many bytes can still be appended to a file of this size
// on a full tmpfs: the rest of its last page.
func PageRoom(size int64) int64 {
	if size%pageSize == 0 {
		return 0
	}
	return pageSize - size%pageSize
}
