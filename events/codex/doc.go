// Package codex reads OpenAI Codex CLI rollout files
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl): one
// RolloutLine per line — timestamp, an optional ordinal (paginated history
// mode) and the flattened RolloutItem, whose type is session_meta,
// response_item, compacted, turn_context or event_msg.
//
// Codec decodes each line into a *Record in one pass (hand-written, over
// events/internal/objscan): identities (thread id, turn_id, call_id,
// message id), turn boundaries (task_started / task_complete and their
// turn_started / turn_complete aliases, turn_aborted with its reason),
// roles and phases, the text of a person's input, and session metadata.
// Tool arguments and outputs, reasoning and assistant text are validated
// and skipped, never copied. Mapper maps records onto the vocabulary of
// events/turn (the table is in ADR 0018); Harness bundles both for
// turn.Read.
//
// # What Codex accepts, and what this codec accepts
//
// Codex's loader (RolloutRecorder::load_rollout_items,
// codex-rs/rollout/src/recorder.rs @b505ee80) reads the whole file with
// read_to_string, so invalid UTF-8 anywhere fails the whole load; it then
// skips blank lines and every line serde_json or RolloutLine rejects,
// wherever it is. This codec refuses the same lines — not UTF-8, not one
// object (a glued `}{` pair is one bad line), no timestamp or type string,
// a known item without a payload object, a response_item or event_msg
// payload without a type, nesting past serde_json's 128 — and reports each
// at its position, where Codex counts and forgets it. Deliberate
// differences: a lone surrogate escape is accepted (serde_json refuses it;
// Codex's writer, serializing Rust strings, never writes one), unknown item
// and payload types decode (a newer writer's records are not damage), and
// required members of individual payload structs are not checked.
//
// Facts are from openai/codex at the commits the scenario files cite; the
// released 0.169.0 (npm @openai/codex) was not run here.
package codex
