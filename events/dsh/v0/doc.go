// Package v0 reads dsh session format v0: the format that both published
// releases of dsh's JSONL backend write (@deepseek-ai/dsh-session-persistence-jsonl
// 0.0.1-rc.1 and 0.1.0-rc.8, SESSION_FORMAT_VERSION = 0 in
// @deepseek-ai/dsh-session). Package events/dsh reads v1, the seed's format,
// which was never published.
//
// Every fact here was checked against the published 0.1.0-rc.8 JavaScript
// (lib/index.js of the two packages) and, where a verdict depends on it,
// against the package running (adapters/dshlog's oracle test):
//
//   - A log is a header line {type:'session', version, id, createdAt, cwd?,
//     parentSession?, seedLength?, origin?, delegationDepth, agentPreset?}
//     (delegationDepth required) and one storage record per line: a
//     SessionEvent {type, seq, time, data, surfaceOp?, sourceEventSeqs?,
//     ignorable?} verbatim, or a packed chunk row (text-chunks,
//     reasoning-chunks, tool-call-chunks: a run of ≥ 3 same-block delta
//     chunks as seq0/time0 plus per-member dt gaps). ParseLine decodes a row
//     into its member assistant/chunk events exactly as decodeStorageRecord
//     does, refusing the shapes it refuses.
//   - Raw files (session.jsonl) are newline-delimited; compressed files
//     (session.jsonl.zstd) are a concatenation of independent checksummed
//     Zstandard frames: one holding only the header line, then one per
//     durable append batch. FrameReader finds frames without decompressing
//     them (bad magic, a reserved header bit or block type is corruption, the
//     file ending inside a frame is a TornFrame); FrameDecoder decompresses
//     one frame with github.com/klauspost/compress/zstd, verifying its
//     checksum, and decodes a torn frame's prefix with flush semantics
//     (complete blocks, then the bytes present of a torn raw block).
//   - Scan is dsh's readPrefix: streaming, one frame or 64 KiB at a time,
//     memory bounded by MaxLineBytes and MaxFrameBytes. The preserved prefix
//     grows while every event's seq equals its index; the first bad line is
//     tolerated only if no later line is a turn/end. Raw mode cuts from the
//     first incomplete or bad line; compressed mode requires every complete
//     frame to be clean and cuts the torn last frame, keeping its complete
//     records (Result.Salvaged) for re-appending.
//
// Errors are classified by events.ErrCorrupt (damage where dsh rejects),
// ErrUnsupportedVersion (a header version dsh does not read),
// events.ErrLineTooLong (a line or frame over the bounds) and
// events.ErrTornTail (TornFrame; Scan itself never fails on a torn tail).
// They name the frame, its byte offset and the line.
//
// What is stricter than dsh, and why: a line over MaxLineBytes (64 MiB by
// default) is unparsable here, where dsh would hold it; JSON strings are
// decoded with lone surrogates replaced by U+FFFD, as encoding/json does.
// Neither occurs in a log dsh writes.
package v0
