// Package qwenserve crashes the published Qwen Code 0.24.4 daemon and scores
// tailproof's verdicts, and Qwen's own, on the files the real code wrote.
// The simulator (package simulations) is a model of that daemon; this
// package is the oracle the model is checked against (issue #13 item 4,
// docs/adr/0016-real-daemon-oracle.md).
//
// # What runs
//
// A scenario is a seeded plan (Generate; Pinned for the ones go test
// runs): one session, one or two daemon lives ("epochs"), each a few
// prompts and one crash. The daemon is `node <pkg>/cli-entry.js serve
// --port 0 --workspace <ws> --no-web` from the package
// simulations/conformance/install.sh installs, with a scratch HOME, the
// settings ../shared/reference/qwen-serve.md names, and no environment
// inherited but PATH. Its model is Mock: an OpenAI-compatible streamed
// chat/completions server in Go on 127.0.0.1, which answers each prompt's
// turn from a script (text answers, run_shell_command tool calls, background
// shells whose exit delivers a notification turn, usage with many prompt
// tokens so /compress runs) and answers the side requests (prompt
// suggestions, managed-memory extraction) without counting them. Every
// prompt's text carries a marker ("[tpq-7]"); the marker in a request's last
// user message names the prompt the request belongs to and the number of
// tool results after it names the step.
//
// The shapes are plain turns, queued prompts, a running prompt cancelled
// with others queued behind it, /compress, background notification turns
// (and a prompt that interrupts one), and a session resumed after a restart
// (POST /session/:id/resume, which skips reconciliation) and crashed again.
//
// # Crashes
//
// An epoch ends at its kill point (KillPoint): right after the target's
// 202, at its first model request, mid-stream, during its shell tool, after
// its final answer streamed but before the ledger terminal, after the
// terminal, after a cancel, or at a seeded random delay. The mock holds the
// response at the chosen chunk and signals; the harness then stops every
// process of the daemon's tree (SIGSTOP, found through /proc by parentage,
// repeated until the tree stops growing), kills them all and reaps the
// daemon. A moment that never comes within Config.Wait crashes the tree at
// the timeout and is reported as missed.
//
// # Truth and scores
//
// A prompt's truth comes from the mock's log and the harness's own actions,
// never from the files under test: completed when its final answer was
// fully streamed, cancelled when the harness's cancel was answered while
// the answer was held, interrupted when the model was asked but the answer
// never completed, not-asked when no request came. The one fact read from
// the transcript is whether a completed answer's nonce reached it: if not,
// the crash lost the completion, and interrupted is also correct (Judge).
//
// After every crash tailproof.Reconcile runs in dry run on
// jsonl.NewQwenStore(vfs.OS, …) over the scratch runtime dir and every
// decision is scored; tailproof.Status is asked too and its errors counted.
// After the last crash the daemon is restarted and POST /session/:id/load
// runs Qwen's own reconcileDanglingPromptTerminals; the terminals it wrote
// to the ledger are scored against the same truths. Report adds the
// scores per kill point, shape and truth, and lists every record shape the
// real daemon wrote (the differential against the simulator's model).
//
// testdata/evidence holds a few crash states the real daemon left (kept
// with --keep, each directory a runtime dir, case.txt saying how it was
// made and what the mock's log says happened); TestEvidence reconciles them
// and fails on a wrong terminal.
//
// `go test` runs Pinned (two scenarios, 30 s on a quiet machine, two
// minutes on a loaded one) when node and the package are present and fails on any wrong
// tailproof terminal; the long run is
//
//	go run ./simulations/qwenserve/cmd --seed 1 --crashes 150 [--json out.json] [--keep DIR]
package qwenserve
