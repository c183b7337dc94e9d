// Package harnessfs finds the session files of Codex CLI and Claude Code on
// a filesystem (adapters/vfs), by session id and by workspace, the way the
// harnesses themselves lay them out:
//
//	$CODEX_HOME (~/.codex)/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl
//	$CODEX_HOME/archived_sessions/rollout-<ts>-<uuid>.jsonl
//	$CLAUDE_CONFIG_DIR (~/.claude)/projects/<ProjectName(cwd)>/<session>.jsonl
//
// Discovery never follows a link: a symlink (or FIFO, socket, device) below
// a root is listed in Listing.Skipped, never opened, whatever it points at.
// Session ids are checked before they reach a path (ErrInvalidID).
//
// It reads directory listings and, for Codex's workspace lookup, the first
// line of each rollout; it never writes.
package harnessfs
