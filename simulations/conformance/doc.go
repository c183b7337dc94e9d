// Package conformance checks tailproof's reconciler against the real one:
// Qwen Code 0.24.4's reconcileDanglingPromptTerminals, run by node from the
// published npm package @qwen-code/qwen-code, with the package's own
// SessionService deciding where the files live.
//
// # How a run works
//
// Generate(seed, i) builds scenario i of a seeded run: a prompt terminal
// ledger and a transcript, as raw bytes, shaped like a daemon that crashed —
// one to three prompts (in_flight with or without tailUuid, terminals
// completed / cancelled / error / prompt_deadline_exceeded / interrupted,
// several left dangling), user / assistant / tool records with and without
// call ids, notifications, cron turns, compressions, custom titles, local
// slash commands, goal turns, turn_result records, records with and without
// provenance and daemonPromptId, equal and backward clocks, torn and
// malformed lines in both files, a missing transcript — and, in a third of
// the scenarios, one or two hostile perturbations aimed at one rule of the
// reference's readers (CRLF and lone CR, BOM, odd timestamps and `at`
// values, duplicate keys, fragments sharing a uuid, parent cycles, foreign
// session ids and workspaces, artifact leaves...).
//
// A single node process (node/reconcile.mjs, embedded in this package) reads
// the scenarios as JSONL, writes each into a scratch runtime dir in Qwen's
// layout, runs the reference and reports what it appended. tailproof then
// reconciles the same bytes through the production OS-backed store
// (jsonl.NewQwenStore over jsonl.NewQwenLayout) twice:
//
//   - Reference mode must agree exactly: the same files in the same places,
//     the same verdict and byte-identical ledger growth except `at` (the
//     reference stamps Date.now()), including the newline it writes to seal
//     a torn ledger tail. A mismatch is a tailproof bug; known open ones are
//     listed in KnownMismatches with their minimized scenarios under
//     testdata/disagreements/.
//   - Default mode may differ only by the deliberate differences of
//     docs/adr/0003 (Categories). Compare classifies each disagreement from
//     the guards that vetoed in one mode and not the other and the evidence
//     they read; one that fits no category fails the run.
//
// Run ties it together and returns a Report; Minimize shrinks a failing
// scenario line by line; Outcome.Save writes one as files. The command is
// `tailproof conformance --runs N --seed S [--json] [--save DIR]`.
//
// # Requirements
//
// node (18+) and the package: simulations/conformance/install.sh installs it
// into $XDG_CACHE_HOME/tailproof/qwen-code-0.24.4 (default ~/.cache);
// TAILPROOF_QWEN_PKG points at any other install. Without them Run returns an
// error wrapping ErrUnavailable and the tests skip.
package conformance
