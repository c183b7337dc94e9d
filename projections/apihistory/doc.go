// Package apihistory folds a Qwen Code session's active-chain transcript
// records into the api history the model would be resent — Qwen's
// SessionApiHistoryAccumulator and buildSessionHistoryFromConversation — in
// one streaming pass with bounded memory, keeping on every entry the records
// (uuid, position, envelope provenance and origin) it came from.
//
// # What it mirrors
//
// The rules are those of packages/core/src/services/session-api-history.ts at
// upstream commit 03291a25, in record order:
//
//   - tool_result/code_mode_tool_result records are ignored;
//   - system records: a slash_command result (phase "result", not sentToModel,
//     a non-empty outputHistoryItems whose items are all type "assistant")
//     pops the history entry of the immediately preceding material record when
//     that record is a user record with no subtype, role user, and exactly one
//     part that is {"text": rawCommand} and nothing else; every slash_command
//     after a user record clears the "preceding material record", so a later
//     result cannot pop across it. goal_turn_end completes its toolCallId when
//     the preceding material record is a tool_result of the same goal turn
//     (goalId and turnId non-empty strings, revision an integer and equal) that
//     holds the response, and the id occurs exactly once as a call and once as
//     a response in the history. A chat_compression whose compressedHistory is
//     truthy replaces the history with it, resets the notification flags,
//     keeps the payload's completedToolCallIds that have a unique call/result
//     pair, and clears the preceding material record. Every other system
//     record is ignored (its message never becomes history);
//   - records without a message and realtime_message records are skipped;
//     every functionCall/functionResponse id of a record removes that id from
//     the completed set;
//   - mid_turn_user_message merges its parts into the previous entry when that
//     entry is a user entry holding no completed goal result; every other
//     record is pushed. A user record with no subtype tags its entry with its
//     promptId;
//   - an entry is flagged a cold notification (Entry.ColdNotification, the
//     reference's systemNotificationFlags) when its pushing record has
//     provenance "system", subtype "notification", no backgroundTurn stamp
//     and no deliveredTurn flag;
//     cron, goal_runtime and legacy (provenance-less) records are not flagged,
//     and a merge never changes the flag;
//   - Result: StripThoughts drops thought parts and entries left empty, flags in
//     lockstep; TrailingSystemNotifications counts the trailing flagged entries;
//     CompletedToolCallIDs are those still unique in the finished history, in
//     insertion order; CancelledLastTurn is isLastApiPromptCancelled: the last
//     prompt-like entry before the trimmed cold run (isApiUserPrompt, or a
//     media-only user entry) carries a promptId tag that is unique in the
//     history and belongs to exactly one user record; the last turn_attempt
//     after that record, if any, takes over as owner and must name the same
//     promptId; the owner's daemonPromptId occurs on no other prompt or
//     attempt; and exactly one later valid turn_result for that daemon id is
//     "cancelled" with a cancelledAt.
//
// The Qwen Code 0.24.4 bundle (chunk-DPEB6S2R.js) has an older accumulator:
// no code_mode_tool_result skip, no promptId tags, no cancelledLastTurn, and
// its isSystemNotificationRecord flags every system notification. 0.24.4
// writes none of code_mode_tool_result, turn_attempt or deliveredTurn, so on
// every transcript it writes the two produce the same history and completed
// ids. The flag differs on purpose: a notification that 0.24.4 stamped with
// backgroundTurn (or a newer writer marked deliveredTurn) is the user entry
// of a turn the agent ran, not a cold notification, so an unanswered one is
// an interrupted notification turn (Qwen #12042 shape A), not a settled
// history (ADR 0015). The reference rules never read the flag.
//
// # Beyond the reference
//
// Every Entry carries Sources: the records behind it, with the provenance and
// Origin of their envelopes, and PartSource maps each part to its record (a
// merged mid-turn message keeps its own identity). A decision about a
// notification-shaped entry can therefore ask who wrote it instead of reading
// its text (projections/interruption's Provenance mode). Compressed entries
// are marked Compressed: they have no record of their own.
//
// # The bound
//
// A Fold (unless Options.Unbounded) keeps only the end of the history: the
// trailing run of notification-shaped entries plus Keep (default 50, the
// reference's TURN_INTERRUPTION_HISTORY_TAIL_COUNT) entries before it — the
// widest window any classifier reads, whichever way it trims, since a
// provenance trim never reaches further back than the shape trim. Why that is
// exact under the only two operations that touch existing entries:
//
//   - a slash-command pop removes the last entry, and it is always the undo of
//     the immediately preceding push (the pop needs the preceding material
//     record to be a plain user record, and any later push or merge replaces
//     that record). Eviction is therefore measured against the history
//     without its last entry: after pushing E, the fold keeps Keep entries
//     before the run that preceded E, plus that run, plus E. Popping E restores
//     exactly the state the next Result needs;
//   - a merge changes only the last entry, which is never evicted.
//
// Everything else that depends on the whole history is kept as counters, not
// bodies: call/response counts per tool-call id (for the uniqueness rules),
// the promptId tag count per id, the completed set, the trailing shape and
// cold runs (each entry remembers the runs before it so a pop restores them in
// O(1)), the last evicted prompt-like entry's tag, and the settlement hints
// per promptId/daemonPromptId. Memory is O(Keep + trailing run + distinct
// tool-call and prompt ids), never proportional to bytes. The trailing run is
// kept whole because the reference resends it with an interrupted prompt;
// entries hold decoded parts only (tool outputs are not materialized unless
// the decoder was asked to keep payloads).
//
// # Known limits (the transcript codec does not expose these)
//
//   - compression payload promptIds (tags on compressed entries) and whether a
//     truthy compressedHistory is an array: a non-array value makes the
//     reference drop every later message record and fail at finish; here it
//     resets to an empty history;
//   - turn_result validation checks promptId, state, endedAt, cancelledAt and
//     stopReason length, not the error/cancelReason/text fields; cancelledAt 0
//     reads as absent (the codec tests truthiness);
//   - numeric or otherwise non-string call ids and names read as absent; a
//     part holding both a functionCall and a functionResponse counts as a
//     call only.
package apihistory
