package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/vfs"
)

// TranscriptTailBytes is Qwen's TRANSCRIPT_TAIL_BYTES: how much of the end of
// a transcript the dispatch-marker capture reads.
const TranscriptTailBytes = 64 << 10

// OpenTranscript streams the session's active transcript from its first
// byte. A missing transcript is an error wrapping adapters.ErrNotFound.
func (s *QwenStore) OpenTranscript(ctx context.Context, sessionID string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jsonl: open transcript: %w", err)
	}
	path, err := s.activePath(sessionID, transcriptExt)
	if err != nil {
		return nil, err
	}
	return openTranscriptFile(s.fs, path)
}

// openTranscriptFile opens a transcript; missing is adapters.ErrNotFound,
// anything but a regular file is refused (vfs.ErrNotRegular).
func openTranscriptFile(fsys vfs.FS, path string) (io.ReadCloser, error) {
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("jsonl: transcript %s: %w (%w)", path, adapters.ErrNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("jsonl: open transcript: %w", err)
	}
	return readAhead(f), nil
}

// TranscriptTailUUID captures the dispatch marker from the active transcript
// exactly as Qwen's readTranscriptTailUuid does (see TailUUID); any error,
// including a missing file or an invalid id, is ok=false.
func (s *QwenStore) TranscriptTailUUID(ctx context.Context, sessionID string) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	path, err := s.activePath(sessionID, transcriptExt)
	if err != nil {
		return "", false
	}
	return tailUUIDFile(s.fs, path)
}

// tailUUIDFile is TailUUID over a file by path; any error is no marker.
func tailUUIDFile(fsys vfs.FS, path string) (string, bool) {
	f, err := vfs.OpenRegular(fsys, path, os.O_RDONLY, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	return TailUUID(f, st.Size())
}

// TailUUID returns the uuid of the last record of a transcript of the given
// size, reading only its last TranscriptTailBytes, by Qwen's rules:
//
//   - an empty file has no marker;
//   - the window's first segment is dropped only when the byte before the
//     window is not '\n' (it is then the tail of a longer line);
//   - walking back from the end, empty lines are skipped and the first
//     non-empty line is the only one considered: when it does not parse as a
//     JSON object with a non-empty string "uuid", there is no marker — a torn
//     or corrupt final record never lets an older record's uuid through;
//   - a final record longer than the window has no marker;
//   - any read error means no marker.
//
// A line counts as empty only when it has no bytes; a whitespace-only final
// line fails to parse and yields no marker (fail closed).
func TailUUID(r io.ReaderAt, size int64) (string, bool) {
	return tailUUID(r, size, TranscriptTailBytes)
}

func tailUUID(r io.ReaderAt, size, maxWindow int64) (string, bool) {
	if size <= 0 {
		return "", false
	}
	window := min(size, maxWindow)
	start := size - window
	readFrom, extra := start, int64(0)
	if start > 0 {
		readFrom, extra = start-1, 1 // one more byte: was the window cut mid-line?
	}
	buf := make([]byte, window+extra)
	if n, err := r.ReadAt(buf, readFrom); n != len(buf) && err != nil {
		return "", false
	}
	dropFirst := extra == 1 && buf[0] != '\n'
	segs := bytes.Split(buf[extra:], []byte{'\n'})
	if dropFirst {
		segs = segs[1:]
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if len(segs[i]) == 0 {
			continue
		}
		return recordUUID(segs[i])
	}
	return "", false
}

func recordUUID(line []byte) (string, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return "", false
	}
	raw, ok := obj["uuid"]
	if !ok {
		return "", false
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || id == "" {
		return "", false
	}
	return id, true
}
