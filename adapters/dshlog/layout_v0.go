package dshlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
)

// The v0 layout of dsh-session-persistence-jsonl 0.1.0-rc.8:
//
//	<root>/--<normalized-cwd>--/<EncodeSegment(id)>/session.jsonl.zstd
//	<root>/_no-cwd/<EncodeSegment(id)>/session.jsonl   (compression: 'none')
//
// A root holds one encoding; a flat <project>/<id>.jsonl* file is refused.
const (
	V0ZstdName = "session.jsonl.zstd"
	V0RawName  = "session.jsonl"
)

// ProjectKey is the package's projectKey: the cwd's UTF-16 code units with
// every run of '/', '\' or ':' turned into one '-', [A-Za-z0-9._-] kept,
// anything else (and '~') escaped as ~XXXX; leading '-' trimmed ("root" when
// nothing is left), at most 251 units, wrapped in "--".
func ProjectKey(cwd string) (string, error) {
	if cwd == "" {
		return "", fmt.Errorf("dshlog: cannot encode an empty project path: %w", adapters.ErrInvalidSessionID)
	}
	var b strings.Builder
	sep := false
	for _, u := range utf16.Encode([]rune(cwd)) {
		switch c := rune(u); {
		case c == '/' || c == '\\' || c == ':':
			if !sep {
				b.WriteByte('-')
			}
			sep = true
		case c != '~' && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'):
			b.WriteRune(c)
			sep = false
		default:
			fmt.Fprintf(&b, "~%04X", u)
			sep = false
		}
	}
	key := strings.TrimLeft(b.String(), "-")
	if key == "" {
		key = "root"
	}
	if len(key) > 251 { // every unit is one ASCII byte here
		key = key[:251]
	}
	return "--" + key + "--", nil
}

// V0Path is where the v0 log of the header's session lives under root.
func V0Path(root string, h v0.Header, enc v0.Encoding) (string, error) {
	project := NoCwdBucket
	if h.Cwd != nil {
		cwd, ok := h.CwdString()
		if !ok {
			return "", fmt.Errorf("dshlog: header cwd is not a string: %w", adapters.ErrCorruptLog)
		}
		var err error
		if project, err = ProjectKey(cwd); err != nil {
			return "", err
		}
	}
	seg, err := EncodeSegment(h.ID)
	if err != nil {
		return "", err
	}
	name := V0ZstdName
	if enc == v0.Raw {
		name = V0RawName
	}
	return filepath.Join(root, project, seg, name), nil
}

// v0Encoding tells the encoding from a v0 log's file name.
func v0Encoding(path string) (v0.Encoding, bool) {
	switch filepath.Base(path) {
	case V0ZstdName:
		return v0.Zstd, true
	case V0RawName:
		return v0.Raw, true
	}
	return 0, false
}

// checkV0Root refuses what the package refuses before it reads a log
// (ensureRootEncoding, listSessionDirs, findLog): any session directory of
// root holding the other encoding, a flat <project>/<file>.jsonl* artifact,
// and the same session directory name in two project directories.
func checkV0Root(fsys vfs.FS, root, sessionDir string, enc v0.Encoding) error {
	opposite := V0RawName
	if enc == v0.Raw {
		opposite = V0ZstdName
	}
	projects, err := fsys.ReadDir(root)
	if err != nil {
		return fmt.Errorf("dshlog: read root %s: %w", root, err)
	}
	matches := 0
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		pdir := filepath.Join(root, p.Name())
		entries, err := fsys.ReadDir(pdir)
		if err != nil {
			return fmt.Errorf("dshlog: read %s: %w", pdir, err)
		}
		for _, e := range entries {
			full := filepath.Join(pdir, e.Name())
			if !e.IsDir() {
				if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".jsonl.zstd")) {
					return fmt.Errorf("dshlog: session artifact %q uses the unsupported flat-file layout: %w", full, adapters.ErrCorruptLog)
				}
				continue
			}
			if _, err := fsys.Stat(filepath.Join(full, opposite)); err == nil {
				return fmt.Errorf("dshlog: session artifact %q uses the other encoding than %s; a root holds one: %w", filepath.Join(full, opposite), filepath.Base(sessionDir), adapters.ErrCorruptLog)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("dshlog: %w", err)
			}
			if e.Name() == filepath.Base(sessionDir) {
				if _, err := fsys.Stat(filepath.Join(full, filepath.Base(V0NameOf(enc)))); err == nil {
					matches++
				}
			}
		}
	}
	if matches > 1 {
		return fmt.Errorf("dshlog: duplicate session directory %q appears in multiple project directories: %w", filepath.Base(sessionDir), adapters.ErrCorruptLog)
	}
	return nil
}

// V0NameOf is the file name of a v0 log in enc.
func V0NameOf(enc v0.Encoding) string {
	if enc == v0.Raw {
		return V0RawName
	}
	return V0ZstdName
}
