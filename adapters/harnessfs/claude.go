package harnessfs

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tailproof/tailproof/adapters/vfs"
)

// Claude is the layout of Claude Code's transcripts: $CLAUDE_CONFIG_DIR
// (default ~/.claude), projects/<ProjectName(cwd)>/<session id>.jsonl.
// Subagent transcripts live below projects/<…>/<session id>/subagents/ and
// are not sessions of their own.
type Claude struct {
	ConfigDir string
	// ProjectDir, when set, is the project directory name for every
	// workspace: Claude Code 2.1.328 uses $CLAUDE_CODE_PROJECT_DIR_NAME so
	// when $CLAUDE_CONFIG_DIR is set and the name is 1-64 of
	// [A-Za-z0-9_-] and not a reserved Windows device name.
	ProjectDir string
}

// ClaudeConfigDir resolves Claude Code's layout from the environment as the
// 2.1.328 bundle does: the root is $CLAUDE_CONFIG_DIR, else <home>/.claude
// (Claude Code also NFC-normalizes it; tailproof does not); with
// $CLAUDE_CONFIG_DIR set, a valid $CLAUDE_CODE_PROJECT_DIR_NAME names the
// project directory.
func ClaudeConfigDir(env Env, home string) Claude {
	d := env("CLAUDE_CONFIG_DIR")
	if d == "" {
		return Claude{ConfigDir: filepath.Join(home, ".claude")}
	}
	c := Claude{ConfigDir: d}
	if n := env("CLAUDE_CODE_PROJECT_DIR_NAME"); validProjectDir(n) {
		c.ProjectDir = n
	}
	return c
}

func validProjectDir(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	switch l := strings.ToLower(n); {
	case l == "con" || l == "prn" || l == "aux" || l == "nul":
		return false
	case len(l) == 4 && (strings.HasPrefix(l, "com") || strings.HasPrefix(l, "lpt")) && l[3] >= '0' && l[3] <= '9':
		return false
	}
	return true
}

// maxProjectName is the length past which Claude Code cuts a sanitized
// workspace name and appends a hash.
const maxProjectName = 200

// ProjectName is Claude Code's directory name for workspace cwd, as the
// 2.1.328 bundle computes it: every character outside [a-zA-Z0-9] becomes
// '-' (per UTF-16 code unit, as JavaScript's replace sees the string), and
// a name longer than 200 keeps its first 200 characters plus "-" and the
// base-36 absolute value of a 32-bit string hash (h = h*31 + unit, wrapping).
func ProjectName(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	b := make([]byte, len(units))
	for i, u := range units {
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= maxProjectName {
		return string(b)
	}
	var h int32
	for _, u := range units {
		h = h<<5 - h + int32(u)
	}
	n := int64(h)
	if n < 0 {
		n = -n
	}
	return string(b[:maxProjectName]) + "-" + strconv.FormatInt(n, 36)
}

// Sessions lists every transcript under projects/, in path order.
func (c Claude) Sessions(fsys vfs.FS) (Listing, error) {
	var l Listing
	root := filepath.Join(c.ConfigDir, "projects")
	_, projects, err := entries(fsys, root, &l)
	if err != nil {
		return l, err
	}
	for _, p := range projects {
		if err := c.project(fsys, root, p, &l); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (c Claude) project(fsys vfs.FS, root, p string, l *Listing) error {
	dir := filepath.Join(root, p)
	files, _, err := entries(fsys, dir, l)
	if err != nil {
		return err
	}
	for _, f := range files {
		id, ok := strings.CutSuffix(f, ".jsonl")
		if ok && validID(id) == nil {
			l.Sessions = append(l.Sessions, Session{Harness: "claude", ID: id, Path: filepath.Join(dir, f), Project: p})
		}
	}
	return nil
}

// ByID finds the transcript of session id in any project.
func (c Claude) ByID(fsys vfs.FS, id string) (Session, error) {
	if err := validID(id); err != nil {
		return Session{}, err
	}
	l, err := c.Sessions(fsys)
	if err != nil {
		return Session{}, err
	}
	return byID(l, "claude", id)
}

// ByWorkspace lists the transcripts of workspace cwd: the project directory
// named ProjectName(cwd) — and, for a name long enough to carry a hash,
// any directory with the same 200-character prefix, as Claude Code's own
// lookup accepts (its hash function changed between versions).
func (c Claude) ByWorkspace(fsys vfs.FS, cwd string) (Listing, error) {
	var l Listing
	root := filepath.Join(c.ConfigDir, "projects")
	name := ProjectName(cwd)
	if c.ProjectDir != "" {
		name = c.ProjectDir
	}
	_, projects, err := entries(fsys, root, &l)
	if err != nil {
		return l, err
	}
	for _, p := range projects {
		match := p == name
		if !match && len(name) > maxProjectName {
			match = strings.HasPrefix(p, name[:maxProjectName]+"-")
		}
		if match {
			if err := c.project(fsys, root, p, &l); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}
