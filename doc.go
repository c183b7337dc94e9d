// Package tailproof decides, from durable evidence only, what happened to an
// AI-agent session when the process running it died — which prompt
// completed, which was interrupted, which cannot be known — and never writes
// a wrong answer into an append-only record.
//
// # The verbs a harness calls
//
//   - Reconcile(ctx, store, sessionID, Options) (Result, error): at session
//     load, decide every prompt the ledger left in_flight and append a
//     terminal for each one the evidence proves, in admission order.
//     Idempotent: a second run appends nothing. An unknown verdict is not an
//     error.
//   - Status(ctx, store, sessionID, StatusOptions) (RecoveryStatus, error):
//     what the persisted tail means for recovery (clean, interrupted
//     prompt, interrupted tool turn, degraded history), the exact parts a
//     continuation would resend, and whether the evidence supports a notice,
//     an offer or an automatic continuation; Transcript says whether the
//     transcript exists and holds a record, and Turn (StatusSummary: the
//     `turn` object every harness prints) is the last prompt with its
//     verdict, vetoes, real-user text to resend and dangling calls.
//   - RecentTerminals(ctx, store, sessionID): the last 64 terminals, read
//     exactly as Qwen Code's load response reads them.
//   - Codecs(): the registry of built-in formats (events.Registry).
//
// A Store is adapters.Store: adapters/jsonl for Qwen Code's on-disk layout,
// adapters/memory for tests and simulations, or the harness's own (the
// contract suite is adapters/adaptertest). dsh session logs are recovered by
// the dsh backend (adapters/jsonl's DSH log).
//
// # Where the decision is made
//
// Reconcile is IO only: it reads the ledger once, asks the pure core
// (machines/reconcile) whether it needs the transcript, feeds it one walk of
// the active chain, takes its Ready, checks the ledger's size as the race
// fence, stamps the clock (Options.Now: the core reads none) and appends.
// Every decision, its route and its vetoes come from the core; see that
// package's manual for the loop and for where each rule lives.
//
// # Rules
//
// Options.Rules is a whole rule set: reconcile.Tailproof() (the default) or
// reconcile.Qwen0244(), exactly Qwen Code 0.24.4's reconciler (Options.
// Reference is shorthand for it). Options.Guards adds a harness's own
// evidence guards to the check step.
//
// # The published decision
//
// Result marshals to the one JSON shape that `tailproof reconcile --json`,
// `tailproof serve`, the recovery service's decision topic and replay print:
// schemaVersion, sessionId, rules, dryRun, dangling and one decision per
// considered prompt (target, verdict, route, vetoes, and appended — or
// wouldAppend under a dry run — only when a record was appended).
//
// # Errors
//
// ErrUnreadableLedger (the ledger could not be read: nothing appended) and
// ErrNoTranscript (Status: a transcript that exists but cannot be read)
// classify errors; a missing or empty transcript is not an error but a
// state (RecoveryStatus.Transcript is TranscriptMissing or TranscriptEmpty),
// the one a kill right after a prompt's admission leaves, answered with an
// empty history and what Reconcile decides for the prompt. Both classes
// wrap the store's own cause, so errors.Is also finds
// context.Canceled, fs.ErrPermission or adapters.ErrInvalidSessionID. A
// failed append is returned as is; terminals after it are not attempted.
package tailproof
