// Package interruption classifies how an api history ends — settled, an
// unanswered prompt, or a model turn with tool calls that never got results —
// and defines the one boundary (ClassifiableTail) that reconcile and status
// both classify, so they can never disagree about where the history ends.
//
// # What it mirrors
//
// Detect is detectTurnInterruption of packages/core/src/core/turn-interruption.ts
// (identical in the Qwen Code 0.24.4 bundle, chunk-DPEB6S2R.js):
//
//   - the completed-goal boundary: for every functionResponse whose id is in
//     completedToolCallIDs, the index after it when it is the id's only
//     response and sits in a user entry, else 0; the boundary is the maximum;
//   - EffectiveHistoryEnd: trailing user entries whose every part is a text
//     starting with <task-notification> and ending (after JavaScript trimEnd)
//     with </task-notification> are cut; a count, when given, only narrows the
//     cut to that many final entries;
//   - boundary ≥ end → none; a user entry at end-1 → walk back from the REAL
//     end (trimmed notifications included) over user entries down to the
//     boundary, stopping at a system-reminder-only entry; all their parts,
//     functionResponses first, form an interrupted_prompt (none if there are
//     no parts); a model entry at end-1 → its functionCalls with a non-empty
//     id (name "unknown" when absent) form an interrupted_turn; otherwise none.
//     A model text cut mid-stream is indistinguishable from a finished one and
//     is none, as in the reference.
//
// SyntheticToolResponses is buildSyntheticToolResponseParts, with the JSON a
// continuation sends (written as JSON.stringify writes it). TailCount is
// TURN_INTERRUPTION_HISTORY_TAIL_COUNT.
//
// # The shared boundary
//
// ClassifiableTail(result, mode) trims the trailing notifications once and
// takes the TailCount entries before them; Classify runs Detect on exactly
// those entries with an authoritative count of zero, so an envelope the mode
// decided to keep is never re-trimmed by shape. TailHoldsAnyFunctionCall is
// reconcile's upgrade for a model tail with an id-less functionCall.
//
// ShapeOnly reproduces the reference daemon path
// (reconcileDanglingPromptTerminals: end = effectiveHistoryEnd(apiHistory),
// tail = apiHistory.slice(max(0, end-50), end), detect(tail, completedIds)),
// including its residual: a notification turn that was delivered to the model
// and then failed mid-stream is trimmed and reads as settled (#12042 shape A),
// and a real prompt whose whole text is an envelope is trimmed too (shape B).
//
// Provenance goes beyond the reference. It trims a trailing envelope-shaped
// entry only when the record that pushed it is a cold notification
// (Entry.ColdNotification: provenance "system", subtype "notification",
// neither the backgroundTurn stamp Qwen Code 0.24.4 writes on a notification
// turn's records nor the deliveredTurn flag of newer writers) — the
// reference's recovery-plan narrowing, applied at the daemon path too. So a
// delivered notification turn that never got an answer stays an
// interrupted_prompt (shape A: the stamp on the notification record is the
// evidence), and a real_user prompt that looks like
// an envelope stays a prompt (shape B). An entry whose record carries no
// provenance (legacy transcripts; compressed history, which has no per-entry
// record) is trimmed on shape, as the reference would, and the tail says
// Guessed so no caller mistakes a guess for evidence.
//
// Every verdict part and dangling call carries the Source record (uuid,
// position, provenance, origin) it came from. That is why Detect takes
// apihistory entries rather than bare Content; wrap a bare history as
// apihistory.Entry{Content: c} when there is no record behind it.
//
// Detect over a bounded apihistory.Result.Tail is only meaningful through
// ClassifiableTail: the bounded fold guarantees TailCount entries before the
// trailing notification run, which is exactly what the tail reads, while the
// reference recovery plan's walk over a whole history can reach further back.
//
// Unlike the recovery plan, Classify does not see the trimmed run, so the
// parts of an interrupted prompt never include trimmed cold notifications
// (the daemon path's behaviour); Tail.TrimmedEntries has them for a caller
// that resends them.
package interruption
