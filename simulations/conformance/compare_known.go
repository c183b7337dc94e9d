package conformance

import (
	"encoding/json"
	"strings"
)

// KnownMismatches are reference-mode disagreements found by this harness,
// saved under testdata/disagreements/ and reported to the owners of the
// reconciler. While one is open, matching scenarios are counted under its
// name instead of failing the run; remove the entry when it is fixed (the
// saved scenario then agrees, and TestSavedDisagreements says so).
var KnownMismatches = map[string]string{
	// None open. K1 (workspace check), K2 (ownership leaking into reference
	// mode) and K3 (V8's legacy date forms) were fixed; their minimized
	// scenarios live on in testdata/reconcile/{workspace,conformance}.txt.
}

// knownMismatch names the open known bug a reference-mode mismatch matches,
// or "" (then the mismatch fails the run).
func knownMismatch(o *Outcome) string {
	id := matchKnown(o)
	if _, open := KnownMismatches[id]; !open {
		return ""
	}
	return id
}

// matchKnown recognizes the shapes of the bugs this harness has found, so a
// reopened one is named rather than reported as new.
func matchKnown(o *Outcome) string {
	if o.JS.Appended == nil && o.Ref.Appended != nil && o.Scenario.Transcript != nil {
		cwd, ok := firstRecordCwd(*o.Scenario.Transcript)
		if !ok || (cwd != o.Scenario.Cwd && !worktreeOf(cwd, o.Scenario.Cwd)) {
			return "K1-workspace-check"
		}
	}
	if o.Scenario.Transcript != nil && legacyTimestamp.MatchString(*o.Scenario.Transcript) {
		return "K3-date-parse-legacy"
	}
	if d := o.Def.Evidence; d != nil && o.Scenario.Transcript != nil {
		own := d.Transcript.Ownership
		t := *o.Scenario.Transcript
		if own.Active && own.TargetIdx >= 0 && own.FollowedBy == "" &&
			(strings.Contains(t, `"chat_compression"`) || strings.Contains(t, `"slash_command"`)) {
			return "K2-reference-ownership-leak"
		}
	}
	return ""
}

// firstRecordCwd is the cwd of the first record the reference's line
// reader yields (ok false: no string cwd). Like the reference it splits on
// \n, \r\n and lone \r, trims, takes a line that parses as an object, and
// recovers the balanced {...} objects of a line that does not parse.
func firstRecordCwd(t string) (string, bool) {
	for _, line := range strings.FieldsFunc(t, func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
		if line == "" {
			continue
		}
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			m, isObj := v.(map[string]any)
			if !isObj {
				continue
			}
			cwd, ok := m["cwd"].(string)
			return cwd, ok
		}
		if objs := recoverObjects(line); len(objs) > 0 {
			cwd, ok := objs[0]["cwd"].(string)
			return cwd, ok
		}
	}
	return "", false
}

// recoverObjects finds the balanced top-level {...} fragments of a line
// that parse as JSON objects, as the reference's `}{` recovery does.
func recoverObjects(line string) []map[string]any {
	var out []map[string]any
	depth, start := 0, -1
	inString, escape := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case escape:
			escape = false
		case inString:
			if c == '\\' {
				escape = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}':
			depth--
			if depth == 0 && start >= 0 {
				var m map[string]any
				if json.Unmarshal([]byte(line[start:i+1]), &m) == nil && m != nil {
					out = append(out, m)
				}
				start = -1
			} else if depth < 0 {
				depth, start = 0, -1
			}
		}
	}
	return out
}

// worktreeOf: Qwen accepts a record cwd inside <workspace>/.qwen/worktrees/.
func worktreeOf(cwd, workspace string) bool {
	const marker = "/.qwen/worktrees/"
	i := strings.LastIndex(cwd, marker)
	return i > 0 && cwd[:i] == workspace
}
