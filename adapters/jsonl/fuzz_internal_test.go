package jsonl

import (
	"bytes"
	"path/filepath"
	"testing"
)

// tailUUIDModel restates Qwen's capture rule over the whole file instead of
// a window: the last non-empty line is the marker's only candidate, and it
// counts only if it starts inside the window (a line that starts before the
// window is cut by it, and its cut tail is the window's dropped first
// segment).
func tailUUIDModel(data []byte, window int64) (string, bool) {
	lines := bytes.Split(data, []byte{'\n'})
	off := int64(len(data))
	for i := len(lines) - 1; i >= 0; i-- {
		off -= int64(len(lines[i]))
		if len(lines[i]) != 0 {
			if off < int64(len(data))-window {
				return "", false
			}
			return recordUUID(lines[i])
		}
		off-- // the newline before this line
	}
	return "", false
}

func FuzzTailUUID(f *testing.F) {
	for _, s := range []string{
		"", "\n", `{"uuid":"u1"}`, `{"uuid":"u1"}` + "\n" + `{"uuid":"a1"}` + "\n",
		`{"uuid":"u1"}` + "\n" + `{"uuid":"a1","text":"answ`, `{"uuid":"u1"}` + "\n\n\n",
		`{"uuid":7}`, `{"uuid":"x"}{"uuid":"y"}`, "  \n", `{"UUID":"a"}`, `{"uuid":"\ud800"}`,
	} {
		f.Add([]byte(s), uint8(8))
	}
	f.Fuzz(func(t *testing.T, data []byte, w uint8) {
		window := int64(w) + 1
		got, gotOK := tailUUID(bytes.NewReader(data), int64(len(data)), window)
		want, wantOK := tailUUIDModel(data, window)
		if got != want || gotOK != wantOK {
			t.Fatalf("tailUUID(%q, window %d) = (%q, %v), model says (%q, %v)", data, window, got, gotOK, want, wantOK)
		}
	})
}

// FuzzCheckSessionID: an accepted id always names a file directly inside
// its chats directory, and is never taken for another session's ledger.
func FuzzCheckSessionID(f *testing.F) {
	for _, s := range []string{"0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10", "", ".", "..", "../x", `a\b`, "a\x00", "x.ledger", "x.LEDGER", "é"} {
		f.Add(s)
	}
	l := NewQwenLayout("/r", "/w")
	f.Fuzz(func(t *testing.T, id string) {
		if CheckSessionID(id) != nil {
			return
		}
		for _, st := range []SessionState{Active, Archived} {
			tp, err := l.TranscriptPath(id, st)
			if err != nil {
				t.Fatalf("accepted id %q: %v", id, err)
			}
			lp, _ := l.LedgerPath(id, st)
			for _, p := range []string{tp, lp} {
				if filepath.Dir(p) != l.ChatsDir(st) {
					t.Fatalf("accepted id %q escapes: %s", id, p)
				}
			}
			if IsTranscriptName(filepath.Base(lp)) {
				t.Fatalf("ledger of %q matches the transcript pattern", id)
			}
		}
	})
}
