// Package adapters states the storage contracts tailproof reads evidence from
// and appends decisions to. The core never touches a file: it is handed a
// Store. adapters/jsonl implements the contracts on Qwen Code's on-disk
// layout and adapters/dshlog on dsh's; adapters/memory implements the same contracts in memory,
// with fault injection; adapters/adaptertest is the conformance suite every
// implementation (including a harness's own) runs with one call.
package adapters
