package dshlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
	"github.com/tailproof/tailproof/projections/dshrecovery"
)

// RecoveryV0 is what recovering one v0 log found and did.
type RecoveryV0 struct {
	Header   v0.Header
	Encoding v0.Encoding
	Plan     dshrecovery.Plan
	// TruncatedBytes is how many bytes the repair cut; Evidence is where the
	// original bytes were kept first ("" when nothing was cut).
	TruncatedBytes int64
	Evidence       string
}

// ErrNotRegular classifies a log path that is not a regular file (a FIFO, a
// device, a directory) or a symlink leading out of its root: recovery never
// opens such a path, since reading a FIFO blocks and a symlink could make it
// write outside the sessions root.
var ErrNotRegular = errors.New("not a regular file inside the sessions root")

// RecoverV0 loads one v0 log (<root>/<project>/<id>/session.jsonl[.zstd]) as
// dsh-session-persistence-jsonl 0.1.0-rc.8's load() does and repairs it in
// place:
//
//  1. Refuse a path that is not a regular file in its root (ErrNotRegular),
//     a root holding the other encoding or a flat file, and a header whose
//     id and cwd do not name this path.
//  2. Scan (ScanV0: with two processors or more a compressed log is
//     decompressed on a goroutine beside the parse, which also decodes
//     when it would wait; two free cores read at 1.15-1.27 of zstd's own
//     speed against the inline read's 0.66-0.75, ADR 0037 as amended
//     2026-12-02 afternoon) and fold
//     (projections/dshrecovery): any refusal of the package's load is an
//     error and the file is untouched.
//  3. Perform the plan (dshrecovery.Decide): when bytes are cut, copy the
//     whole original to <path>.broken-<size> durably first, then truncate
//     and fsync; then append the salvaged records and the closers as one
//     batch — one checksummed zstd frame, or raw lines — and fsync.
func RecoverV0(fsys vfs.FS, path string, opts v0.Options) (RecoveryV0, error) {
	enc, ok := v0Encoding(path)
	if !ok {
		return RecoveryV0{}, fmt.Errorf("dshlog: %s: not a v0 log name (%s or %s): %w", path, V0ZstdName, V0RawName, adapters.ErrCorruptLog)
	}
	sessionDir := filepath.Dir(path)
	root := filepath.Dir(filepath.Dir(sessionDir))
	if err := regularInRoot(fsys, path, root); err != nil {
		return RecoveryV0{}, err
	}
	if err := checkV0Root(fsys, root, sessionDir, enc); err != nil {
		return RecoveryV0{}, err
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return RecoveryV0{}, fmt.Errorf("dshlog: open %s: %w", path, err)
	}
	var fold dshrecovery.Fold
	res, err := ScanV0(f, enc, opts, fold.Visit)
	f.Close()
	plan, err := NewV0Decider(path, res.Header).Decide(res, err, &fold)
	if err != nil {
		return RecoveryV0{}, err
	}
	out := RecoveryV0{Header: res.Header, Encoding: enc, Plan: plan}
	if plan.Cut >= 0 {
		if out.Evidence, err = keepEvidence(fsys, path, res.Size); err != nil {
			return RecoveryV0{}, err
		}
		if err := truncateDurable(fsys, path, plan.Cut); err != nil {
			return RecoveryV0{}, err
		}
		out.TruncatedBytes = res.Size - plan.Cut
	}
	if len(plan.Append) > 0 {
		batch := plan.Append
		if enc == v0.Zstd {
			batch = encodeFrame(batch)
		}
		if err := appendLines(fsys, path, batch); err != nil {
			return RecoveryV0{}, err
		}
	}
	return out, nil
}

// V0Decider is RecoverV0's decision about the v0 log at path once it is
// scanned (Decide), the header's check that it names path made once: a
// reader that folds a log event by event (replay's crash points,
// cmd/tailproof) asks it what recovery would decide after any event, by
// the same code, as often as it likes.
type V0Decider struct {
	path    string
	pathErr error
}

// NewV0Decider is the decider for the log at path whose header is header.
func NewV0Decider(path string, header v0.Header) *V0Decider {
	d := &V0Decider{path: path}
	enc, ok := v0Encoding(path)
	if !ok {
		d.pathErr = fmt.Errorf("dshlog: %s: not a v0 log name (%s or %s): %w", path, V0ZstdName, V0RawName, adapters.ErrCorruptLog)
		return d
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	want, err := V0Path(root, header, enc)
	if err != nil {
		d.pathErr = fmt.Errorf("dshlog: %s: header id cannot name a storage path: %w", path, err)
	} else if want != filepath.Clean(path) {
		d.pathErr = fmt.Errorf("dshlog: %s: header id %q and cwd identify %s: %w", path, header.ID, want, adapters.ErrCorruptLog)
	}
	return d
}

// Decide is the plan, or the refusal (the errors RecoverV0 returns, word
// for word): res and scanErr are v0.Scan's, every preserved event folded by
// fold, res.Header the decider's.
func (d *V0Decider) Decide(res v0.Result, scanErr error, fold *dshrecovery.Fold) (dshrecovery.Plan, error) {
	if scanErr != nil {
		return dshrecovery.Plan{}, fmt.Errorf("dshlog: %s: %w", d.path, classify(scanErr))
	}
	if d.pathErr != nil {
		return dshrecovery.Plan{}, d.pathErr
	}
	plan, err := dshrecovery.Decide(res, fold, "")
	if err != nil {
		return dshrecovery.Plan{}, fmt.Errorf("dshlog: %s: %w", d.path, classify(err))
	}
	return plan, nil
}

// classify keeps the cause and adds the session-log contract's sentinels.
func classify(err error) error {
	switch {
	case errors.Is(err, v0.ErrUnsupportedVersion):
		return fmt.Errorf("%w: %w", adapters.ErrUnsupportedVersion, err)
	case errors.Is(err, adapters.ErrCorruptLog):
		return err
	}
	return fmt.Errorf("%w: %w", adapters.ErrCorruptLog, err)
}

// encodeFrame compresses one batch as one checksummed frame, as the package
// writes each durable append (Node's default level; any conforming frame
// decodes the same).
func encodeFrame(plain []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // constant options: unreachable
	}
	defer enc.Close()
	return enc.EncodeAll(plain, nil)
}

// regularInRoot refuses a path that is not a regular file, and on the real
// filesystem a symlink whose target lies outside root.
func regularInRoot(fsys vfs.FS, path, root string) error {
	if fsys == vfs.OS {
		li, err := os.Lstat(path)
		if err != nil {
			return notFound(path, err)
		}
		if li.Mode()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				return fmt.Errorf("dshlog: %s: %w", path, err)
			}
			realRoot, err := filepath.EvalSymlinks(root)
			if err != nil {
				return fmt.Errorf("dshlog: %s: %w", root, err)
			}
			if rel, err := filepath.Rel(realRoot, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("dshlog: %s: a symlink to %s, outside the sessions root %s: %w", path, target, root, ErrNotRegular)
			}
		}
	}
	info, err := fsys.Stat(path)
	if err != nil {
		return notFound(path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("dshlog: %s: %s: %w", path, info.Mode().Type(), ErrNotRegular)
	}
	return nil
}

func notFound(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dshlog: %s: %w", path, adapters.ErrNotFound)
	}
	return fmt.Errorf("dshlog: %s: %w", path, err)
}
