package vfs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// A link that leads out of the directory the user named is neither read nor
// written through.
func ExampleWithin() {
	base, _ := os.MkdirTemp("", "vfs-example-")
	defer os.RemoveAll(base)
	runtime := filepath.Join(base, "qwen")
	os.Mkdir(runtime, 0o700)
	os.WriteFile(filepath.Join(base, "elsewhere.jsonl"), []byte("x\n"), 0o600)
	os.Symlink("../elsewhere.jsonl", filepath.Join(runtime, "s.ledger.jsonl"))

	fsys, _ := vfs.Within(runtime)
	defer fsys.Close()
	_, err := vfs.OpenRegular(fsys, filepath.Join(runtime, "s.ledger.jsonl"), os.O_RDWR|os.O_APPEND, 0)
	fmt.Println(errors.Is(err, vfs.ErrOutsideRoot))
	// Output: true
}

// A directory (or a FIFO, or /dev/zero) is refused before it is read.
func ExampleOpenRegular() {
	dir, _ := os.MkdirTemp("", "vfs-example-")
	defer os.RemoveAll(dir)
	_, err := vfs.OpenRegular(vfs.OS, dir, os.O_RDONLY, 0)
	fmt.Println(errors.Is(err, vfs.ErrNotRegular))
	// Output: true
}
