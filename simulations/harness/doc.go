// Package harness is the ground truth for the Codex CLI and Claude Code
// verdicts (issue #15, Deliver 6): a seeded model of each harness's writer
// that knows what happened to every turn, crashed after every one of its
// actions, decided by tailproof, reconciled into the sidecar ledger through
// the real store on the strict memory filesystem, repaired, and scored.
//
// # The writers
//
// The Codex writer (codex-rs/rollout recorder.rs @b505ee80, policy.rs
// @851c9d5e) writes one rollout line per persisted item with write_all and
// flush, never fsync: session_meta, per turn turn_context, task_started,
// injected environment context, the model's copy of the prompt and the
// user_message, reasoning, function calls with their outputs (sometimes an
// Extended-mode exec_command_end in between), commentary and the final
// answer (phase final_answer), token counts, compaction, a person steering
// the open turn, and task_complete — or, when the person presses Esc, the
// hidden <turn_aborted> marker then turn_aborted (turn_id sometimes null).
// Legacy writers (policy @001cb8e2) write no task_started, no task_complete
// and no phase; paginated threads number lines with ordinal.
//
// The Claude Code writer (the released 2.1.328 bundle) writes a
// uuid/parentUuid chain: meta caveats, a person's prompt (origin human,
// promptId) or a task notification opening a turn of its own, one model
// message over several lines sharing message.id (thinking and text with
// stop_reason null, then tool_use or end_turn), tool results, api_error
// retries, subagent records on a sidechain of their own, compaction
// (a compact_boundary root and the summary), and the turn's end: with Stop
// hooks, their progress and stop_hook_summary after the final response
// (the turn is finished there; a blocking hook first writes its error as a
// meta record and in a summary, and the model answers again), then
// turn_duration — which in the newer writers' model also follows an
// interrupt sentinel. 2.1.328 queues records and writes them in batches (on
// a timer, at a tool result, at the turn's end), fsyncs each batch, and
// seals a torn tail with a newline before appending; the old writers
// (before 2.1.121, and 2.1.39) append each record at once, without either.
// 2.1.39 writes stop_reason null on every line and turn_duration only for
// turns of 30 s or more; the newer writers state the stop reason on a
// message's last line, except when the queue drained before message_delta
// (ADR 0018, amendment 2026-12-02 afternoon).
//
// Per class (profile) the writers add interrupts, injected input, end
// records that never reach the file (a lost batch, #80561), lines damaged
// mid-file (NUL runs, #49876), and resumes: the first writer process dies
// after a random action, the restart reconciles and repairs (or not), and a
// second process appends more turns — Codex after whatever bytes are there
// (a torn fragment then fuses with its first record), at the last valid
// ordinal + 1; Claude Code 2.1.328 after its own newline seal, on the
// chain's last record.
//
// # Crashes and truth
//
// Every model run is crashed after each of its actions, by one of three
// kinds: kill (the page cache keeps every write), torn (the process dies
// inside a write: a prefix of it lands) and power (of the bytes never
// fsynced any prefix survives). A turn is completed when its writer
// finished it — whether or not its end record reached the file — and
// interrupted otherwise. Scoring, as ADR 0008 scores Qwen's prompts:
// completed for a turn that did not finish is wrong; interrupted for one that
// finished is wrong unless the crash lost the record that finished it (the
// durable history ends inside the turn: counted as a lost completion);
// unknown is never wrong.
//
// # Invariants, on every crash
//
//   - no wrong verdict on any turn of the file;
//   - the resume plan of an interrupted turn lists every durable prompt
//     of a person in that turn, and nothing else (never injected, meta,
//     notification or summary input);
//   - reconcile (tailproof.ReconcileTurns into harnessfs.Sidecar, on the
//     strict memory filesystem; a quarter of the runs crash inside it and
//     run it again after the reboot) stamps no turn wrongly, no turn twice,
//     and a run after the last appends nothing; stamps a restart made
//     before the second writer appended are checked against the truth too;
//   - repair (harnessfs.Repair) changes no verdict.
//
// Run runs a range of model runs on workers and adds up a Report whose
// Describe is the per-class table; a violation prints the command that
// replays it (TestReplay). `go test ./simulations/harness` runs a bounded
// seed; TAILPROOF_HARNESS_RUNS=N runs N model runs per harness (ADR 0025).
package harness
