//go:build !linux

package vfstest

import (
	"os"
	"testing"
)

// SmallDisk skips: mounting a tmpfs needs Linux.
func SmallDisk(t testing.TB, size int) string {
	t.Skip("vfstest: a full disk is made with a Linux tmpfs")
	return ""
}

// Fill is not reached: SmallDisk skipped.
func Fill(t testing.TB, dir string) func() { t.Skip("vfstest: needs Linux"); return func() {} }

// PageRoom is not reached: SmallDisk skipped.
func PageRoom(size int64) int64 { return 0 }

// PTY skips: the pseudo-terminal helper is Linux's.
func PTY(t testing.TB) (master, slave *os.File) { t.Skip("vfstest: needs Linux"); return nil, nil }

// ReadPTY is not reached: PTY skipped.
func ReadPTY(t testing.TB, master *os.File, until string) string { return "" }
