// Package timeline is the session timeline: a pure fold of a session's
// durable events (Qwen transcript and ledger, or a dsh session log) into the
// things a person asks about when a session died — prompts, admissions,
// model turns, tool calls and results, notifications, compressions and
// terminals — each with a stable Describe line.
//
// It also holds the evidence merge that `tailproof replay` and the golden
// replays share: Merge interleaves the ledger and the transcript in the order
// the process wrote them, and Evidence.Cut gives the bytes a crash right
// after any merged event would have left on disk. Nothing here reads a clock
// or a file; callers hand in bytes.
package timeline
