package dshlog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/tailproof/tailproof/adapters"
)

// EncodeSegment maps a session id to one safe path segment exactly as
// dsh's encodeSegment does: each UTF-16 code unit in [A-Za-z0-9._-] is kept,
// every other one (including '~') becomes '~' and four uppercase hex digits;
// "." and ".." become "~002E" and "~002E~002E". The mapping is injective, so
// two ids never share a file and no id escapes its bucket. A lone surrogate
// is accepted in its WTF-8 form (ED A0–BF xx); any other invalid UTF-8 is
// refused with adapters.ErrInvalidSessionID, as is the empty id.
func EncodeSegment(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("dshlog: cannot encode an empty path segment: %w", adapters.ErrInvalidSessionID)
	}
	if raw == "." {
		return "~002E", nil
	}
	if raw == ".." {
		return "~002E~002E", nil
	}
	if safeSegment(raw) {
		return raw, nil // what the loop below would build, byte for byte
	}
	var b strings.Builder
	b.Grow(len(raw))
	unit := func(u uint16) {
		const hexd = "0123456789ABCDEF"
		b.WriteByte('~')
		b.WriteByte(hexd[u>>12])
		b.WriteByte(hexd[u>>8&0xF])
		b.WriteByte(hexd[u>>4&0xF])
		b.WriteByte(hexd[u&0xF])
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
				b.WriteByte(c)
			} else {
				unit(uint16(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(raw[i:])
		if r == utf8.RuneError && size == 1 {
			// WTF-8 surrogate: ED A0..BF 80..BF.
			if c == 0xED && i+2 < len(raw) && raw[i+1] >= 0xA0 && raw[i+1] <= 0xBF && raw[i+2] >= 0x80 && raw[i+2] <= 0xBF {
				unit(0xD000 | uint16(raw[i+1]&0x3F)<<6 | uint16(raw[i+2]&0x3F))
				i += 3
				continue
			}
			return "", fmt.Errorf("dshlog: session id %q is not valid UTF-8: %w", raw, adapters.ErrInvalidSessionID)
		}
		if r >= 0x10000 {
			r -= 0x10000
			unit(uint16(0xD800 + r>>10))
			unit(uint16(0xDC00 + r&0x3FF))
		} else {
			unit(uint16(r))
		}
		i += size
	}
	return b.String(), nil
}

// safeSegment reports whether EncodeSegment keeps every byte of raw.
func safeSegment(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Bucket names the directory of a session: "cwd-" and the first 12 hex
// digits of sha256(cwd), or NoCwdBucket without a cwd. (dsh's comment
// promises a readable suffix; its code appends none, and neither do we.)
func Bucket(cwd *string) string {
	if cwd == nil {
		return NoCwdBucket
	}
	sum := sha256.Sum256([]byte(*cwd))
	return "cwd-" + hex.EncodeToString(sum[:])[:12]
}

// LogPath is where the log of id with cwd lives.
func (l *Log) LogPath(cwd *string, id string) (string, error) {
	enc, err := EncodeSegment(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(l.root, Bucket(cwd), enc+".jsonl"), nil
}

func summaryPathOf(logPath string) string {
	return strings.TrimSuffix(logPath, ".jsonl") + ".summary.json"
}
