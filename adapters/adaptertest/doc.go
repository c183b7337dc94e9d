// Package adaptertest is the conformance suite for the storage contracts in
// package adapters. Every implementation — the JSONL adapters, the memory
// adapters, a harness's own — proves it keeps the contract with one call from
// its tests, as dsh runs its persistence contract on every backend and
// testing/slogtest checks every slog.Handler:
//
//	func TestStoreContract(t *testing.T) {
//		adaptertest.RunStoreContract(t, func(t *testing.T) adapters.Store {
//			return jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(t.TempDir(), "/work"))
//		})
//	}
//
// RunStoreContract covers the ledger and transcript contract
// (adapters.Store): Qwen Code's prompt-ledger module cases (the 16 cases of
// packages/acp-bridge/src/prompt-ledger.test.ts), its transcript tail-uuid
// capture cases, and tailproof's own (torn-tail seal, file mode, concurrent
// appenders never fuse, missing files, hostile session ids). Cases that need
// raw bytes on disk (a torn fragment, a transcript) run only when the store
// implements StoreSeeder; the file-mode case only when it implements LedgerStater.
// The session-log contract (dsh) lives in the Sessionlog* files of this
// package.
//
// The suite only observes the contract: crash and durability tests, which
// need a filesystem that can lose unsynced bytes, live with the adapters
// (adapters/jsonl's crash tests run on adapters/memory's strict FS).
package adaptertest
