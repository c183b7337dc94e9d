package jsonl

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
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

// FuzzCheckSessionID: the one-pass path answers as the full check does; an
// accepted id always names a file directly inside its chats directory, and
// is never taken for another session's ledger.
func FuzzCheckSessionID(f *testing.F) {
	for _, s := range []string{"0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10", "", ".", "..", "../x", `a\b`, "a\x00", "x.ledger", "x.LEDGER", "é"} {
		f.Add(s)
	}
	l := NewQwenLayout("/r", "/w")
	f.Fuzz(func(t *testing.T, id string) {
		got, want := CheckSessionID(id), checkSessionID(id)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("CheckSessionID(%q) = %v, full check %v", id, got, want)
		}
		if got != nil {
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

// TestPlainSessionID holds CheckSessionID's one-pass path to the full check
// (checkSessionID): same answer, same error, on every id of up to two bytes,
// on the ".ledger" suffix in every case with each prefix byte, around the
// length limit, and on random ids of the bytes that matter; and the fast
// path takes every printable-ASCII id the full check accepts.
func TestPlainSessionID(t *testing.T) {
	check := func(id string) {
		t.Helper()
		got, want := CheckSessionID(id), checkSessionID(id)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("CheckSessionID(%q) = %v, full check %v", id, got, want)
		}
		if plainSessionID(id) && want != nil {
			t.Fatalf("fast path accepted %q, which the full check refuses: %v", id, want)
		}
		ascii := true
		for i := range len(id) {
			ascii = ascii && id[i] < 0x80
		}
		if ascii && want == nil && !plainSessionID(id) {
			t.Fatalf("fast path refused %q, which the full check accepts", id)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	const suffix = ".ledger"
	for mask := range 1 << len(suffix) {
		s := []byte(suffix)
		for i := range s {
			if mask&(1<<i) != 0 {
				s[i] ^= 0x20 // the other case ('.' becomes 0x0e, a control)
			}
		}
		for _, pre := range []string{"", "x", "0b9a61a2-3c3e-4f5e-9d42-6a1f3b2c9e10", "é", "a/"} {
			check(pre + string(s))
			check(pre + string(s) + "x")
			check(pre + string(s[1:]))
		}
	}
	for _, n := range []int{maxSessionIDBytes - 1, maxSessionIDBytes, maxSessionIDBytes + 1} {
		check(strings.Repeat("a", n))
		check(strings.Repeat("a", n-len(suffix)) + suffix)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aZ09-._/\\\x00\x1f\x7f\x80\xc3\xa9\xff .ledgerLEDGER"
	for range 100000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
}

// TestCleanParent holds cleanParent to filepath.Dir on clean paths: every
// path of up to four elements drawn from names, ".." and "", absolute and
// relative, once cleaned.
func TestCleanParent(t *testing.T) {
	elems := []string{"a", "bc", "..", ".", ""}
	seen := map[string]bool{}
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		for _, root := range []string{"", "/"} {
			d := filepath.Clean(root + p)
			if seen[d] {
				continue
			}
			seen[d] = true
			if got, want := cleanParent(d), filepath.Dir(d); got != want {
				t.Fatalf("cleanParent(%q) = %q, filepath.Dir %q", d, got, want)
			}
		}
		if depth == 4 {
			return
		}
		for _, e := range elems {
			walk(p+"/"+e, depth+1)
			walk(p+e, depth+1)
		}
	}
	walk("", 0)
	if len(seen) < 50 {
		t.Fatalf("only %d clean paths", len(seen))
	}
}
