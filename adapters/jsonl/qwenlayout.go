package jsonl

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/tailproof/tailproof/adapters"
)

// SessionState is where a Qwen session's files live: the active chats
// directory or its archive/ subdirectory.
type SessionState string

const (
	Active   SessionState = "active"
	Archived SessionState = "archived"
)

// Qwen Code 0.24.4 file naming.
const (
	transcriptExt = ".jsonl"
	ledgerExt     = ".ledger.jsonl"
	// lockExt names the sibling file tailproof flocks around ledger appends.
	// It does not end in .jsonl, so no Qwen scan can mistake it for a
	// transcript and Qwen itself never looks at it.
	lockExt = ".ledger.lock"
)

// sessionFilePattern is Qwen's SESSION_FILE_PATTERN: what a directory scan
// accepts as a transcript. Sidecars (<id>.ledger.jsonl, <id>.worktree.json,
// <id>.pr.json) never match it.
var sessionFilePattern = regexp.MustCompile(`^[0-9a-fA-F-]{32,36}\.jsonl$`)

// IsTranscriptName reports whether a file name in a chats directory is a
// transcript by Qwen's SESSION_FILE_PATTERN.
func IsTranscriptName(name string) bool { return sessionFilePattern.MatchString(name) }

// QwenLayout locates a Qwen Code project's session files:
//
//	<RuntimeDir>/projects/<SanitizeCwd(Cwd)>/chats/<id>.jsonl          active transcript
//	<RuntimeDir>/projects/<SanitizeCwd(Cwd)>/chats/<id>.ledger.jsonl   active ledger
//	<RuntimeDir>/projects/<SanitizeCwd(Cwd)>/chats/archive/...         the archived state
//
// so that tailproof finds the files Qwen writes without being told where
// they are.
type QwenLayout struct {
	// RuntimeDir is Qwen's runtime base directory (see ResolveRuntimeDir).
	RuntimeDir string
	// Cwd is the workspace directory the sessions belong to.
	Cwd string
}

// NewQwenLayout is QwenLayout{RuntimeDir: runtimeDir, Cwd: cwd}.
func NewQwenLayout(runtimeDir, cwd string) QwenLayout {
	return QwenLayout{RuntimeDir: runtimeDir, Cwd: cwd}
}

// ErrNoRuntimeDir: neither the environment nor a home directory names Qwen's
// runtime directory.
var ErrNoRuntimeDir = errors.New("jsonl: cannot resolve the Qwen runtime directory (QWEN_RUNTIME_DIR, QWEN_HOME and home are all empty)")

// ResolveRuntimeDir finds Qwen's runtime base directory as Qwen Code does
// (Storage.getRuntimeBaseDir): QWEN_RUNTIME_DIR when set — with a leading
// "~", "~/" or "~\\" expanded to home — else the global Qwen directory:
// QWEN_HOME when set, else <home>/.qwen. Empty values count as unset. A
// relative value is returned cleaned but relative, so it resolves against
// the caller's working directory as Qwen resolves it against its own. The
// environment and home are inputs so that callers (and tests) decide where
// they come from. Not covered: a runtime directory chosen in Qwen's
// settings.json, and Qwen's fallback to <tmpdir>/.qwen when there is no home
// (here: ErrNoRuntimeDir).
func ResolveRuntimeDir(getenv func(string) string, home string) (string, error) {
	if getenv != nil {
		if d := getenv("QWEN_RUNTIME_DIR"); d != "" {
			if rest, ok := cutTilde(d); ok {
				if home == "" {
					return "", ErrNoRuntimeDir
				}
				return filepath.Join(append([]string{home}, rest...)...), nil
			}
			return filepath.Clean(d), nil
		}
		if d := getenv("QWEN_HOME"); d != "" {
			return filepath.Clean(d), nil
		}
	}
	if home == "" {
		return "", ErrNoRuntimeDir
	}
	return filepath.Join(home, ".qwen"), nil
}

// cutTilde splits a home-relative path ("~", "~/a/b", "~\\a\\b") into its
// segments below home.
func cutTilde(p string) ([]string, bool) {
	if p == "~" {
		return nil, true
	}
	if !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~\`) {
		return nil, false
	}
	return strings.FieldsFunc(p[2:], func(r rune) bool { return r == '/' || r == '\\' }), true
}

// SanitizeCwd is Qwen's project folder name for a workspace directory: every
// character outside [a-zA-Z0-9] becomes '-' (after lower-casing on
// Windows). "Character" is a JavaScript UTF-16 code unit, so a character
// outside the Basic Multilingual Plane becomes two dashes, and (as Node
// decodes a path) each invalid UTF-8 byte becomes one.
func SanitizeCwd(cwd string) string { return sanitizeCwd(cwd, runtime.GOOS == "windows") }

func sanitizeCwd(cwd string, windows bool) string {
	if windows {
		cwd = strings.ToLower(cwd)
	}
	var b strings.Builder
	b.Grow(len(cwd))
	for _, r := range cwd {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF && r != utf8.RuneError:
			b.WriteString("--") // a surrogate pair in UTF-16
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ProjectDir is <RuntimeDir>/projects/<SanitizeCwd(Cwd)>.
func (l QwenLayout) ProjectDir() string {
	return filepath.Join(l.RuntimeDir, "projects", SanitizeCwd(l.Cwd))
}

// ChatsDir is the directory holding a state's transcripts and ledgers.
func (l QwenLayout) ChatsDir(state SessionState) string {
	d := filepath.Join(l.ProjectDir(), "chats")
	if state == Archived {
		d = filepath.Join(d, "archive")
	}
	return d
}

// TranscriptPath is <ChatsDir(state)>/<id>.jsonl.
func (l QwenLayout) TranscriptPath(id string, state SessionState) (string, error) {
	return l.sessionPath(id, state, transcriptExt)
}

// LedgerPath is <ChatsDir(state)>/<id>.ledger.jsonl. Every ledger path is
// built here, as Qwen builds every one through getPromptLedgerPathForState,
// so no call site hand-assembles the name.
func (l QwenLayout) LedgerPath(id string, state SessionState) (string, error) {
	return l.sessionPath(id, state, ledgerExt)
}

func (l QwenLayout) ledgerLockPath(id string, state SessionState) (string, error) {
	return l.sessionPath(id, state, lockExt)
}

func (l QwenLayout) sessionPath(id string, state SessionState, ext string) (string, error) {
	if state != Active && state != Archived {
		return "", fmt.Errorf("jsonl: unknown session state %q", state)
	}
	return sessionPathIn(l.ChatsDir(state), id, ext)
}

// sessionPathIn is sessionPath with the state's chats directory already
// built (the store computes it once: SanitizeCwd and the joins were a fixed
// cost of every ledger and transcript access).
func sessionPathIn(dir, id, ext string) (string, error) {
	if err := CheckSessionID(id); err != nil {
		return "", err
	}
	// dir is clean (built by filepath.Join) and a checked id has no
	// separator and is no dot element, so this is filepath.Join's result
	// without its re-cleaning.
	p := dir + string(filepath.Separator) + id + ext
	// Belt and braces (CheckSessionID should make this impossible): the
	// separator joined above is p's last, so the file is directly in dir.
	// That is filepath.Dir(p) == dir for a clean dir, without re-cleaning
	// dir on every store operation (it was 3% of the simulator's work).
	if strings.LastIndexByte(p, filepath.Separator) != len(dir) {
		return "", fmt.Errorf("jsonl: session id %q escapes %s: %w", id, dir, adapters.ErrInvalidSessionID)
	}
	return p, nil
}

// maxSessionIDBytes keeps <id>.ledger.lock within a 255-byte file name.
const maxSessionIDBytes = 255 - len(lockExt)

// CheckSessionID refuses a session id that could not be mapped to a file in
// its chats directory safely. Qwen's own ids are UUIDs; anything that is not
// a plain file name component is refused rather than escaped, because an
// escaped id would name a file Qwen never wrote. Refused: the empty id, "."
// and "..", ids holding '/', '\\', NUL or another control character, ids
// ending in ".ledger" (its transcript would be another session's ledger),
// and ids too long for a file name. The error wraps
// adapters.ErrInvalidSessionID.
func CheckSessionID(id string) error {
	if plainSessionID(id) {
		return nil
	}
	return checkSessionID(id)
}

// plainSessionID reports, in one pass over the bytes, that id is printable
// ASCII without a separator, neither "." nor "..", not too long and without
// the ".ledger" suffix in any case — an id checkSessionID accepts. Every
// UUID is; the simulator checks one at every store operation, where
// strings.ToLower, utf8.ValidString and the rune loop were ~1,200
// instructions an id. Any other id (one byte ≥ 0x80 is enough) is left to
// checkSessionID, which decides it and words its error; TestPlainSessionID
// holds the two to the same answers.
func plainSessionID(id string) bool {
	if len(id) == 0 || len(id) > maxSessionIDBytes || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c >= 0x7f || c == '/' || c == '\\' {
			return false
		}
	}
	const suffix = ".ledger"
	if len(id) >= len(suffix) {
		tail := id[len(id)-len(suffix):]
		for i := 0; i < len(suffix); i++ {
			if c := tail[i]; c != suffix[i] && c+('a'-'A') != suffix[i] {
				return true
			}
		}
		return false
	}
	return true
}

// checkSessionID is CheckSessionID for any id.
func checkSessionID(id string) error {
	bad := func(why string) error {
		return fmt.Errorf("jsonl: session id %q %s: %w", id, why, adapters.ErrInvalidSessionID)
	}
	switch {
	case id == "":
		return bad("is empty")
	case id == "." || id == "..":
		return bad("is a directory reference")
	case len(id) > maxSessionIDBytes:
		return bad(fmt.Sprintf("is longer than %d bytes", maxSessionIDBytes))
	case strings.HasSuffix(strings.ToLower(id), ".ledger"):
		return bad("ends in .ledger, which would collide with a ledger file")
	case !utf8.ValidString(id):
		return bad("is not valid UTF-8")
	}
	for _, r := range id {
		switch {
		case r == '/' || r == '\\':
			return bad("contains a path separator")
		case r < 0x20 || r == 0x7f:
			return bad("contains a control character")
		}
	}
	return nil
}
