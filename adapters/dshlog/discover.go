package dshlog

// Discovery of v1 logs: listing buckets, finding a log, reading headers and
// summaries.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/events/dsh"
)

// List implements adapters.SessionLog: every `*.jsonl` of every bucket whose
// first line is a session header, with its summary laid over. Files that are
// empty, have no complete first line, or whose first line is not a header are
// skipped. A missing root lists nothing; any other error is returned.
func (l *Log) List(ctx context.Context) ([]adapters.SessionMeta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	buckets, err := l.buckets()
	if err != nil {
		return nil, err
	}
	var out []adapters.SessionMeta
	for _, b := range buckets {
		dir := filepath.Join(l.root, b)
		ents, err := l.fs.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("dshlog: list %s: %w", dir, err)
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			h, ok := l.readHeader(path)
			if !ok {
				continue
			}
			meta := adapters.SessionMeta{Header: h, Summary: dsh.Summary{UpdatedAt: h.CreatedAt}}
			if p, ok := l.readSummary(path); ok {
				meta.Summary = meta.Summary.Apply(p)
			}
			out = append(out, meta)
		}
	}
	return out, nil
}

// buckets lists root's subdirectories; a missing root has none.
func (l *Log) buckets() ([]string, error) {
	ents, err := l.fs.ReadDir(l.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("dshlog: list %s: %w", l.root, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// findLog locates id's log: in its own bucket when the tracked state knows
// its cwd, otherwise by looking in every bucket. Only "does not exist" means
// absent; any other error (ENOTDIR, EIO) is returned.
func (l *Log) findLog(id string, st *session) (string, bool, error) {
	enc, err := EncodeSegment(id)
	if err != nil {
		return "", false, err
	}
	if st != nil && st.meta.Header.Cwd != nil {
		path := filepath.Join(l.root, Bucket(st.meta.Header.Cwd), enc+".jsonl")
		ok, err := l.exists(path)
		return path, ok, err
	}
	buckets, err := l.buckets()
	if err != nil {
		return "", false, err
	}
	for _, b := range buckets {
		path := filepath.Join(l.root, b, enc+".jsonl")
		ok, err := l.exists(path)
		if err != nil {
			return "", false, err
		}
		if ok {
			return path, true, nil
		}
	}
	return "", false, nil
}

func (l *Log) exists(path string) (bool, error) {
	_, err := l.fs.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("dshlog: %w", err)
}

// readHeader reads only the first line, in 8 KiB chunks, up to MaxHeaderBytes.
func (l *Log) readHeader(path string) (dsh.Header, bool) {
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return dsh.Header{}, false
	}
	defer f.Close()
	var acc []byte
	buf := make([]byte, 8<<10)
	for len(acc) <= MaxHeaderBytes {
		n, err := f.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			h, perr := dsh.ParseHeader(append(acc, buf[:i]...))
			return h, perr == nil
		}
		acc = append(acc, buf[:n]...)
		if err != nil {
			return dsh.Header{}, false // EOF before a complete first line
		}
	}
	return dsh.Header{}, false
}

func (l *Log) readSummary(logPath string) (dsh.SummaryPatch, bool) {
	f, err := l.fs.OpenFile(summaryPathOf(logPath), os.O_RDONLY, 0)
	if err != nil {
		return dsh.SummaryPatch{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxHeaderBytes))
	if err != nil {
		return dsh.SummaryPatch{}, false
	}
	p, err := dsh.ParseSummary(b)
	return p, err == nil
}

// writeSummary replaces the summary atomically: temp file (created
// exclusively, 0600), fsync, rename over, directory fsync.
func (l *Log) writeSummary(logPath, final string, s dsh.Summary) error {
	dir := filepath.Dir(logPath)
	if err := mkdirDurable(l.fs, l.root, dir); err != nil {
		return err
	}
	tmp, err := writeTemp(l.fs, final, dsh.AppendSummary(make([]byte, 0, summarySize(s)), s))
	if err != nil {
		return err
	}
	if err := l.fs.Rename(tmp, final); err != nil {
		_ = l.fs.Remove(tmp)
		return fmt.Errorf("dshlog: publish summary: %w", err)
	}
	if err := l.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("dshlog: sync %s: %w", dir, err)
	}
	return nil
}

// summarySize is about the length of s as JSON, so writing it allocates
// once: the strings, and at most 64 bytes of keys, number and punctuation.
func summarySize(s dsh.Summary) int {
	n := 64
	if s.Title != nil {
		n += len(*s.Title)
	}
	if s.FirstPrompt != nil {
		n += len(*s.FirstPrompt)
	}
	return n
}
