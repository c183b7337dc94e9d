// Package simulations is a seeded model of a Qwen-style agent daemon that
// knows the ground truth of every prompt, crashes it, reconciles the
// evidence it left with tailproof's rules and with the reference's
// (Options.Reference, the Qwen 0.24.4 algorithm), and scores every verdict.
// It is how tailproof backs its claim that it never stamps a wrong terminal
// while resolving at least as much as the reference.
//
// # The model
//
// A Daemon writes through the real store (memory.NewQwenStore: the
// production jsonl.QwenStore over the strict in-memory filesystem), so the
// ledger appends are the durable ones tailproof ships: sealed, fsynced,
// directory-fsynced. The transcript is written the way Qwen writes it: one
// write per record, no fsync, no torn-tail seal; a "writeback" action stands
// in for the kernel flushing dirty pages. Actions:
//
//   - admit: tail marker via store.TranscriptTailUUID (daemon versions that
//     write it), then the in_flight write-ahead record, then the FIFO queue;
//   - dispatch / step: the head prompt's turn — its user record (with
//     daemonPromptId on identity-writing versions), model records with tool
//     calls (with or without ids), tool results, a final answer or an error,
//     or a local slash command; then turn_result (newer versions) and the
//     ledger terminal, in either order;
//   - on the identity version, the other prompt turns of 0.24.4's agent
//     (daemon_turns024.go): retry and continue turns (a snapshot, no user
//     record), a continue or restored question with nothing to do (no
//     write), a UserPromptSubmit hook that blocks (the user record only), a
//     permission-cancelled tool batch that ends the turn with no answer,
//     error turns with the writer's codes (-32603, 429, none) and a failed
//     stream's usage-less partial, branch_checkpoint after an answer, runs
//     whose provider reports no usage;
//   - cancel (a queued prompt; on the identity version also the running one:
//     turn_result cancelled with cancelledAt, then the terminal), deadline (error/prompt_deadline_exceeded;
//     the queue is released while the wedged agent keeps writing), background
//     turns (no ledger records, no turn_result): on the identity version the
//     notification turns of Qwen Code 0.24.4 — background_task_completed,
//     then every record of the turn stamped backgroundTurn (the notification
//     unstamped when the daemon delivered it), a queued prompt aborting a
//     running one (its partial answer still stamped), and serve cron turns
//     (no opener, their calls' telemetry naming "<sid>########cron<ms>",
//     aborted at once by a queued prompt) — and on the older versions the
//     fallback writer's deliveredTurn notification or cron turns;
//     compression checkpoints, custom titles, archive/unarchive cycles;
//   - record shapes follow 0.24.4's ChatRecordingService key for key
//     (records.go); ModelShapes lists every (type, subtype, field set) the
//     model writes, for a differential against the real daemon;
//   - crash-restart: a kill (the page cache survives) or a power loss
//     (unsynced bytes lost or torn), optionally inside a ledger append (a
//     torn last ledger line); the restarted daemon reconciles with tailproof
//     or skips reconciliation (a restore that bypassed it) and keeps going.
//
// The daemon's clock is a model variable: it may stand still (equal
// milliseconds) or step back. Every choice comes from a Source: seeded
// math/rand/v2 generators in runs, rapid's draws in the property tests, so
// failures shrink to a minimal interleaving.
//
// # Runs and crash points
//
// A model run is one daemon's timeline of 8–47 actions (restarts included),
// and it is crashed after every one of them: after each action the daemon
// is forked — its filesystem with durable and page-cache bytes
// (memory.FS.Clone), its store, its prompts and their truth, the turns it is
// running — and only the fork crashes (possibly inside one more ledger
// append), is recovered under both rule sets and is scored, while the
// timeline goes on as if nothing happened. A run of n actions is n
// scenarios, numbered consecutively across a seed's runs; the run's actions
// come from the run's own stream, each scenario's crash from the scenario's
// own (seed, k) stream, so any scenario replays alone (RunScenario), scoring
// and tracing exactly as inside its run (TestForksAreIndependent). The
// timeline's own findings — restart reconciliations, admission probes,
// model failures — are reported once, by the next crash point after them.
//
// # Ground truth and scoring
//
// A prompt is never-started (queued at the crash), interrupted (dispatched,
// its turn cut), completed (its turn's final record written, whether or not
// the terminal reached the ledger; for a turn that ends without an answer,
// the record that shows the end: a permission-cancelled batch, else its
// turn_result), errored, cancelled or deadline-exceeded.
// After the final crash every dangling prompt is judged (Judge): completed
// for a prompt that did not complete is wrong; interrupted for one that
// completed is wrong, unless the crash lost the record that finished the
// turn (a power loss; the durable history then ends inside the turn — scored
// correct and counted as a lost completion); interrupted for a never-started
// prompt is correct. A scenario's class is its profile and daemon version
// (Classes).
//
// Invariants checked on every scenario: no wrong terminal from tailproof;
// recovery settles each prompt at most once and its final call appends
// nothing (the second recovery); no terminal for a prompt that was not
// dangling; every ledger line whose append returned is still in the ledger
// after every crash; the store never fails; the continuation admission
// machine (fed the model's live turns) refuses while a prompt or background
// turn is live and admits when nothing is. The same turn shapes drive one
// dsh session log per model run (reported with its crash point 0) through
// adapters.SessionLog, crashed inside a
// random append at a random byte: every acknowledged event survives and the
// loaded log is balanced; a second load repairs nothing. That log is dsh's
// seed format v1; RunDSHV0 does the same for the published format v0
// (DSHV0Batches: zstd or raw, packed or not), recovered by
// adapters/dshlog.RecoverV0, and TestDSHV0ModelIsPublished has the published
// package itself load the model's logs, so the model stays in its shapes.
// RunDSHV0 is not part of Run: adding it would change every seed's draws.
//
// Run runs a range of scenarios and adds up a Report; `tailproof simulate`
// is its command line. See docs/adr/0008-simulation-model.md for what the
// model assumes and what it leaves out.
package simulations
