// Package claude reads Claude Code session transcripts
// (~/.claude/projects/<sanitized cwd>/<session>.jsonl): one JSON record per
// line, linked by uuid / parentUuid, of type user, assistant, system,
// attachment, summary, file-history-snapshot, queue-operation, progress and
// others.
//
// Codec decodes each line into a *Record in one pass: identities (uuid,
// parentUuid, logicalParentUuid, message.id shared by the lines of one
// message, promptId), provenance (origin.kind, promptSource, isMeta,
// isCompactSummary, isSidechain), the interrupt sentinel's fields
// (interruptedMessageId, interruptedByShutdown), the system subtype
// (turn_duration, stop_hook_summary, compact_boundary, api_error, …), the
// content blocks' kinds and ids, and the text of user records. Assistant
// text, thinking and tool payloads are validated and skipped. Mapper maps
// records onto events/turn (ADR 0018); Harness bundles both.
//
// # What Claude Code accepts
//
// Claude Code is closed source; its behaviour here is read from the
// released 2.1.328 bundle (npm @anthropic-ai/claude-code-linux-x64, whose
// binary embeds the JavaScript) and from third-party fixtures, cited in the
// scenario files. Lines are read with JSON.parse: one object, with any
// whitespace around it (a CR before the newline is whitespace), invalid
// UTF-8 already replaced by U+FFFD by Node's decoder, lone surrogate
// escapes kept. This codec accepts the same, and refuses — each at its
// position, torn tail or corruption — a line that is not one object or
// has no string type: spliced `}{` records, null-byte runs, truncated
// records. Since 2.1.121 Claude Code skips such lines; before, it stopped
// at the first one (#50347).
//
// One deliberate difference: Claude Code 2.1.328's loader skips the NUL
// bytes at a line's start and parses the rest, so a record behind a NUL
// run is one it reads. This codec refuses such a line: the NULs stand where
// bytes that were written have been lost (a crashed append, #49876), and
// whatever they held — an end record, a prompt — is missing evidence. The
// turn around it is then unknown, never decided from what survived.
package claude
