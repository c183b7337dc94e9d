// Package dshlog is tailproof's durable storage for dsh (DeepSeek Harness)
// session logs, over the adapters/vfs seam, in its two formats:
//
//   - v1, the seed's format (never published): Log implements the
//     adapters.SessionLog contract the way dsh's SessionPersistenceJsonl did
//     at commit 9a30c46d63 — cwd-<sha> buckets, ~XXXX id escaping, lazy
//     materialization, contiguous seq, the atomic summary sidecar, and
//     "close, don't truncate" loading. RecoverV1 repairs one v1 file.
//   - v0, what the published backend writes
//     (@deepseek-ai/dsh-session-persistence-jsonl 0.1.0-rc.8): RecoverV0
//     loads one <root>/--<project>--/<id>/session.jsonl[.zstd] the way the
//     package's load() does and repairs it in place; ProjectKey and V0Path
//     are its layout. The decision is pure (projections/dshrecovery); this
//     package only performs it: evidence copy, truncate, append one batch
//     (one checksummed zstd frame, or raw lines), each step fsynced.
//
// DetectFormat (SniffFormat) tells the formats apart by the file's content
// — the Zstandard magic, the header line's version — and by its name only
// when the content cannot tell, so every command reads a log as what it is
// whatever it is named; `tailproof dsh recover` repairs a v0 log only under
// the published layout's name, the one dsh loads.
//
// Where it differs from dsh, on purpose, in both formats: the bytes a repair
// cuts are first copied to <path>.broken-<size> (temp, fsync, link,
// directory fsync), as etcd keeps a .broken WAL; a path that is not a regular
// file, or a symlink out of the sessions root, is refused before it is
// opened (ErrNotRegular); lines and frames are bounded, never an allocation
// of their size. The v0 repair appends the salvaged records verbatim where
// the package re-encodes them: the bytes differ, the events are the same
// (the oracle test checks both are loaded alike).
//
// The oracle: oracle/install.sh installs the published package and a Node 22
// binary from npm; oracle/oracle.mjs drives it; oracle_test.go compares
// every cut. See ADR 0017.
package dshlog
