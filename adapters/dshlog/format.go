package dshlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Format is a dsh log file's format.
type Format uint8

const (
	FormatUnknown Format = iota
	// FormatV1 is the seed's <bucket>/<id>.jsonl with version 1 (never
	// published).
	FormatV1
	// FormatV0Zstd and FormatV0Raw are what the published backend writes.
	FormatV0Zstd
	FormatV0Raw
)

func (f Format) String() string {
	switch f {
	case FormatV1:
		return "v1"
	case FormatV0Zstd:
		return "v0-zstd"
	case FormatV0Raw:
		return "v0-raw"
	}
	return "unknown"
}

// SniffBytes is how much of a file's start DetectFormat reads to tell its
// format: a header line longer than this is told by the name.
const SniffBytes = 64 << 10

// zstdMagic starts every Zstandard frame (RFC 8878 §3.1.1), so every v0
// compressed log.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// DetectFormat tells a log's format from the file (SniffFormat over its
// first SniffBytes bytes), whatever it is named. The path must be a
// regular file (ErrNotRegular otherwise), since reading a FIFO blocks.
func DetectFormat(fsys vfs.FS, path string) (Format, error) {
	info, err := fsys.Stat(path)
	if err != nil {
		return FormatUnknown, notFound(path, err)
	}
	if !info.Mode().IsRegular() {
		return FormatUnknown, fmt.Errorf("dshlog: %s: %s: %w", path, info.Mode().Type(), ErrNotRegular)
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return FormatUnknown, notFound(path, err)
	}
	defer f.Close()
	head := make([]byte, SniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return FormatUnknown, fmt.Errorf("dshlog: read %s: %w", path, err)
	}
	format, err := SniffFormat(head[:n], filepath.Base(path))
	if err != nil {
		return FormatUnknown, fmt.Errorf("dshlog: %s: %w", path, err)
	}
	return format, nil
}

// ErrUnknownFormat classifies a file whose content does not say which dsh
// format it is and whose name does not either.
var ErrUnknownFormat = errors.New("not recognisably a dsh session log")

// SniffFormat tells a dsh log's format from head, the first bytes of the
// file (its first line, or all of it when shorter), and only when they
// cannot tell, from base, its file name. Every command that reads a dsh
// log decides by this (dsh recover, status, replay, --harness dsh).
//
//   - The Zstandard magic number: v0 compressed, as only
//     dsh-session-persistence-jsonl writes (0.1.0-rc.8: a frame per batch).
//   - A first line that is a session header: by its version, 0 (v0 raw; a
//     damaged v0 header too, which v0's reader then names) or 1 (v1).
//   - A first line cut short (a torn header, or one over SniffBytes) that
//     begins as both formats' writers begin it, {"type":"session","version":N
//     (JSON.stringify keeps the header's key order): by that N.
//   - Otherwise (empty, not a session header): by the name — the published
//     layout's session.jsonl.zstd and session.jsonl are v0, any other
//     *.jsonl is v1 — so the reader the name implies reports what is wrong;
//     any other name is ErrUnknownFormat.
func SniffFormat(head []byte, base string) (Format, error) {
	if bytes.HasPrefix(head, zstdMagic) {
		return FormatV0Zstd, nil
	}
	line, _, complete := bytes.Cut(head, []byte("\n"))
	if complete {
		if v, ok := headerVersion(line); ok {
			switch v {
			case "0":
				return FormatV0Raw, nil
			case "1":
				return FormatV1, nil
			}
		}
	} else if v, ok := tornHeaderVersion(line); ok {
		if v == '0' {
			return FormatV0Raw, nil
		}
		return FormatV1, nil
	}
	switch {
	case base == V0ZstdName:
		return FormatV0Zstd, nil
	case base == V0RawName:
		return FormatV0Raw, nil
	case strings.HasSuffix(base, ".jsonl"):
		return FormatV1, nil
	}
	what := "its first line is not a dsh session header"
	switch {
	case len(head) == 0:
		what = "the file is empty"
	case !complete:
		what = "its first line is incomplete"
	}
	return FormatUnknown, fmt.Errorf("%w: %s and its name %q is not a dsh log's (session.jsonl.zstd, session.jsonl or <id>.jsonl)", ErrUnknownFormat, what, base)
}

// headerVersion is the version of a session header line — a JSON object
// whose "type" is "session" — as its JSON text ("0", "1", "2.5"), whatever
// the order of its keys.
func headerVersion(line []byte) (string, bool) {
	var h struct {
		Type    string          `json:"type"`
		Version json.RawMessage `json:"version"`
	}
	if json.Unmarshal(line, &h) != nil || h.Type != "session" || len(h.Version) == 0 {
		return "", false
	}
	return string(h.Version), true
}

// tornHeaderVersion is the version digit of a header cut short as dsh's
// writers start it: {"type":"session","version":0 or 1, then the end of
// the bytes present or the next member.
func tornHeaderVersion(line []byte) (byte, bool) {
	const start = `{"type":"session","version":`
	rest, ok := bytes.CutPrefix(line, []byte(start))
	if !ok || len(rest) == 0 || rest[0] != '0' && rest[0] != '1' || len(rest) > 1 && rest[1] != ',' && rest[1] != '}' {
		return 0, false
	}
	return rest[0], true
}
