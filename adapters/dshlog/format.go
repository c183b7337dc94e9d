package dshlog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailproof/tailproof/adapters/vfs"
	v0 "github.com/tailproof/tailproof/events/dsh/v0"
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

// DetectFormat tells a log's format from the file: session.jsonl.zstd is v0
// compressed; a .jsonl is v0 raw when named session.jsonl and its header says
// version 0, v1 otherwise (the v1 reader then reports any other version).
func DetectFormat(fsys vfs.FS, path string) (Format, error) {
	base := filepath.Base(path)
	switch {
	case base == V0ZstdName:
		return FormatV0Zstd, nil
	case !strings.HasSuffix(base, ".jsonl"):
		return FormatUnknown, fmt.Errorf("dshlog: %s: not a dsh log name (session.jsonl.zstd, session.jsonl or <id>.jsonl)", path)
	case base != V0RawName:
		return FormatV1, nil
	}
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
	line, _ := bufio.NewReaderSize(f, 8<<10).ReadSlice('\n')
	return RawSessionFormat(bytes.TrimSuffix(line, []byte("\n"))), nil
}

// RawSessionFormat is the format of a file named session.jsonl by its first
// line (without its newline): v0 when it is a v0 header, v1 when it names
// version 1, else v0 — v0's reader then names what is wrong with the header,
// as the published layout's name says it is one. Every command that reads
// such a file (dsh recover, status, replay) decides by this.
func RawSessionFormat(header []byte) Format {
	if h, err := v0.ParseHeader(header); err == nil && h.Version == v0.FormatVersion {
		return FormatV0Raw
	}
	if bytes.Contains(header, []byte(`"version":1`)) {
		return FormatV1
	}
	return FormatV0Raw
}
