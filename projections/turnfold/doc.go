// Package turnfold folds a session's acts (events/turn) into per-turn
// evidence, the same way for every harness.
//
// A turn opens on an explicit start (Codex task_started), or implicitly on a
// prompt that starts model work — a person's, a notification's, the
// scheduler's, another agent's — or on model output with no turn open.
// Input the harness writes around a turn (meta records, commands and their
// output, injected context, compaction summaries) joins the next turn
// without opening one. Inside an explicit turn every prompt belongs to it
// (input steered into the running turn); inside an implicit one a person's
// new prompt opens the next turn. A turn mark naming another turn than the
// open one (Qwen Code's cron turn after a restart, which writes no opener)
// closes the open turn; an end naming another turn after the open one ended
// is a turn of its own (marks.go, ADR 0041).
//
// For each turn the fold keeps its prompts with their provenance, its tool
// calls and what became of them, its end record and interrupt markers, the
// last progress act (where the durable record of its work stops), errors
// after it, and the damage that touches its span: undecodable lines inside
// it or in the gap before it, broken parent links, breaks in the harness's
// sequence numbers, a torn final fragment. It keeps no model output and no
// tool payload.
//
// Memory is one turn's evidence plus 8 bytes per record uuid (an FNV-1a
// hash; a collision could hide one broken link, at odds of about one in
// 10^8 for a million records).
package turnfold
