package dshlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// V0Writer appends to one v0 log the way the published backend writes it:
// the first append materializes the header and the batch (header frame plus
// batch frame, or raw lines) through a temp file, fsync, link and directory
// fsync; every later append is one frame (or raw batch), fsynced, rolled
// back to the prior length on failure. tailproof itself only repairs v0
// logs; the writer exists for the simulator and the tests, which need logs
// in the published shapes without node.
type V0Writer struct {
	fsys   vfs.FS
	root   string
	header v0.Header
	enc    v0.Encoding
	path   string
	made   bool
}

// NewV0Writer returns a writer for h's session under root.
func NewV0Writer(fsys vfs.FS, root string, h v0.Header, enc v0.Encoding) (*V0Writer, error) {
	p, err := V0Path(root, h, enc)
	if err != nil {
		return nil, err
	}
	return &V0Writer{fsys: fsys, root: root, header: h, enc: enc, path: p}, nil
}

// Path is the log's file.
func (w *V0Writer) Path() string { return w.path }

// Append durably appends one batch of storage lines (each newline-terminated).
func (w *V0Writer) Append(lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	batch := lines
	if w.enc == v0.Zstd {
		batch = encodeFrame(lines)
	}
	if w.made {
		return appendLines(w.fsys, w.path, batch)
	}
	hdr := append(v0.AppendHeader(nil, w.header), '\n')
	if w.enc == v0.Zstd {
		hdr = encodeFrame(hdr)
	}
	dir := filepath.Dir(w.path)
	if err := mkdirDurable(w.fsys, w.root, dir); err != nil {
		return err
	}
	tmp, err := writeTemp(w.fsys, w.path, append(hdr, batch...))
	if err != nil {
		return err
	}
	defer func() { _ = w.fsys.Remove(tmp) }()
	if err := w.fsys.Link(tmp, w.path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("dshlog: refusing to materialize %q: a log already exists: %w", w.header.ID, adapters.ErrSessionExists)
		}
		return fmt.Errorf("dshlog: publish %s: %w", w.path, err)
	}
	if err := w.fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("dshlog: sync %s: %w", dir, err)
	}
	w.made = true
	return nil
}
