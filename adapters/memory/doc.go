// Package memory holds tailproof's storage contracts in memory, for tests and
// simulations that need to crash.
//
// FS is a strict in-memory adapters/vfs.FS modelled on pebble's strict
// MemFS. It tracks, per file, the bytes written and the bytes synced, and per
// directory, the entries present and the entries synced. Crash drops
// everything not synced — a file whose directory entry was never synced
// disappears with its bytes — and CrashKeeping lets a chosen prefix of
// unsynced appends survive, as a disk that wrote some sectors would. Faults
// (Inject) fail the Nth write, sync, rename, … on any or one path with an
// I/O error, tear a write after any prefix, or halt the filesystem at that
// point (a crash point) until the test reboots it with Crash. Nothing is
// random unless the test passes its own seeded *rand.Rand (KeepRandom).
// Clone copies the whole state, synced and unsynced, for the price of its
// directories (file bytes are shared until written), so a test can crash
// the copy at a point and carry on with the original. Quota puts a fixed
// amount of free space on an FS: a write that needs more lands the prefix
// that fits and fails with ENOSPC, as a full disk does, until space comes
// back.
//
// QwenStore is the Qwen ledger/transcript contract (adapters.Store): the
// production jsonl.QwenStore running on an FS, so simulations exercise the
// real append path and can crash it. The dsh session-log contract lives in
// dsh.go (the production adapters/dshlog.Log on this FS).
package memory
