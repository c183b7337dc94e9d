// Package ownership answers the liveness question of session recovery: does
// some execution currently own this session's active turn, and which class of
// execution is it?
//
// A transcript cannot answer that. A notification turn, a cron turn or a goal
// continuation runs its own streaming loop and leaves the transcript looking
// exactly like a session whose last turn was interrupted; Qwen Code's recovery
// status once offered "continue" while such a turn was running, and accepting
// it aborted the healthy turn (PR #12007 fixed it by gating on the broader
// #hasActiveTurn instead of pendingPrompt alone). So ownership is folded from
// live events, never inferred from persisted history.
//
// # Vocabulary
//
// An Event is (Class, Phase, Turn). Classes: Foreground (an admitted prompt,
// including an admitted continuation), Settling (a foreground prompt whose
// stream ended but whose completion has not settled — reached by a Streamed
// event, never started directly), Notification, Cron, Goal and Mutation
// (compression, rewind, load: the history itself is being rewritten). Phases:
// Start, Streamed, Settle. The text form is "<class> <phase> <turn>", e.g.
// "cron_turn start job-7"; ParseEvent reads it.
//
// # Rules
//
// The session is free only when every started turn settled. Several turns may
// own it at once (a history mutation during a notification turn); Owner
// reports the highest-priority one (Classes order) and Owners all of them.
// An event that does not fit — a second start of a live turn, a settle of a
// turn that is not live, a class that does not match the live turn — is
// refused with an error and changes nothing: an inconsistent stream must not
// make a busy session look free.
//
// The fold is pure (no clock, no IO) and is serialized by its user; the
// admission machine (machines.Admission) is the one place that does so.
package ownership
