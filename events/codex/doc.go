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
// an ordinal that is neither null nor a non-negative integer, a known item
// without a payload object, a response_item or event_msg payload without a
// type, nesting past serde_json's 128 — and reports each at its position,
// where Codex counts and forgets it. Of the payload structs' required
// members, those that open or end a turn or make a prompt are checked: a
// task_started or task_complete (or its alias) without a turn_id string and
// a user_message without a message string are lines Codex skips.
//
// A member named twice means what its last occurrence means, whole: the
// loader parses each line into a serde_json Value before the RolloutLine,
// and a Value object keeps the last value of a repeated key. So the last
// payload replaces an earlier one (nothing of the first, not its type nor
// its turn id, survives), and a string member whose last value is null or
// another type is empty (ADR 0048; the released 0.171.0 reads such lines
// so). Codex's other readers of a rollout (its session listing, the latest
// turn context's cwd) deserialize the RolloutLine directly, where serde
// refuses a repeated member; they decide no turn. Deliberate
// differences: a lone surrogate escape is accepted (serde_json refuses it;
// Codex's writer, serializing Rust strings, never writes one), unknown item
// and payload types decode (a newer writer's records are not damage), an
// ordinal past int64 is refused (Codex reads up to 2^64-1), and the other
// required members of individual payload structs are not checked.
//
// Facts are from openai/codex at the commits the scenario files cite; the
// duplicate-key and ordinal rules were also run against the released
// 0.171.0 (npm @openai/codex@0.171.0-linux-x64: its app-server's
// thread/read over rollouts holding such lines, testdata/duplicates.txt).
package codex
