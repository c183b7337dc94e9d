// Package tailproof decides, from durable evidence only, what happened to an
// AI-agent session when the process running it died — which prompt
// completed, which was interrupted, which cannot be known — and never writes
// a wrong answer into an append-only record.
//
// A harness calls Reconcile at session load time with a Store (adapters/jsonl
// for Qwen Code's on-disk layout, adapters/memory for tests, or its own):
//
//	d, err := tailproof.Reconcile(ctx, store, sessionID, tailproof.Options{Now: clock})
//	// d.Verdict: completed | interrupted | unknown | none; d.Vetoes say why not.
//
// The decision is a pure function of the evidence: the ledger snapshot, the
// transcript's active chain and the injected clock. Every step runs on the
// reconcile machine (package machines) and every transition consults guards
// (package guards); a veto leaves the prompt unknown and appends nothing.
package tailproof
