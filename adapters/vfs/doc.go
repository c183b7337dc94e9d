// Package vfs is the small filesystem seam the durable adapters are written
// against. OS is the real filesystem; adapters/memory provides a strict
// in-memory one that loses unsynced bytes on a simulated crash, tears writes,
// fills up and fails on demand — so crash tests exercise the very code that
// runs in production, not a copy of it.
//
// # What tailproof opens
//
// Session evidence is a regular file. OpenRegular opens without blocking
// (a FIFO with no writer would hang an open for reading) and checks the type
// on the open descriptor, so a FIFO, a device (/dev/zero never ends), a
// socket or a directory is refused with ErrNotRegular before a byte is read
// or written. The jsonl adapters open every ledger, transcript and lock file
// this way.
//
// # Where tailproof reads and writes
//
// Rooted (from Within) is the real filesystem confined to the directories a
// user named — Qwen's runtime directory, or the directory holding a file
// named on the command line. os.Root resolves every path inside its root and
// follows a symbolic link only while it stays there, so a link planted below
// a root (chats -> /etc, a ledger linked to someone else's file) is refused
// with ErrOutsideRoot instead of being read or written through. A root may
// itself be a link: the user named it. See ADR 0022.
//
//	fsys, err := vfs.Within(runtimeDir)
//	if err != nil { ... }
//	defer fsys.Close()
//	store := jsonl.NewQwenStore(fsys, jsonl.NewQwenLayout(runtimeDir, cwd))
package vfs
