// Package qwen reads Qwen Code transcripts (<session>.jsonl, one ChatRecord
// per line) exactly as Qwen Code 0.24.4's SessionService.loadSession does,
// streaming and with bounded memory.
//
// # Lines
//
// Codec decodes one physical line into zero or more events (kind
// "qwen.<type>[/<subtype>]", body *Record), following the reference reader
// step by step: node:readline line breaks (a lone CR also ends a line),
// String.trim, JSON.parse of the whole line, and when that fails the `}{`
// recovery of recoverObjectsFromLine (Qwen #3606), which reads every
// top-level object it can close on the line. Objects that
// validateTranscriptRecord skips (bad uuid/parentUuid/sessionId, unknown
// record type) are not events; the line returns ErrInvalidRecord. A line
// Qwen reads incompletely returns ErrNotRecord alongside whatever it did
// recover.
//
// # Bodies
//
// A Record materializes what decisions read: identity, type and subtype
// (HasSubtype says the field was a string), provenance, promptId and
// daemonPromptId, goalContext, the backgroundTurn stamp Qwen Code 0.24.4
// writes on every record of a background notification turn (and, labeled as
// newer writers' only, deliveredTurn), the typed payloads of
// chat_compression, slash_command, goal_turn_end, turn_result (with its error
// and startedAt), custom_title, notification, cron,
// background_task_completed and branch_checkpoint, and message parts — text (and thoughts) in full, function call and
// response ids and names. Function arguments, function responses,
// inline/file data, usageMetadata and toolCallResult are validated and
// skipped without being copied; DecodeOptions.KeepPayloads keeps each part's
// raw JSON for callers that must resend it.
//
// Small records cost per record, not per byte, so a record is built in two
// allocations whatever its shape: one for the Record with its message and
// up to two parts, one string holding every string field (the fields are
// substrings of it; escaped strings are decoded into it). A record's strings
// therefore live and die together, and never keep the rest of the line
// (tool output, arguments) alive.
//
// The scanner is hand-written (scan.go): encoding/json cannot skip a value
// without buffering or decoding it, and tool output dominates transcripts.
// It validates every byte it skips to the full JSON grammar, so garbage
// never decodes as a record. reference_test.go holds an independent
// encoding/json implementation of the same semantics and
// FuzzDecodeDifferential checks they agree on every input.
//
// # The active chain
//
// LoadChain and Chain.Walk rebuild conversation.messages in two streaming
// passes over a re-openable source; Scan does the same in one pass when it
// can. Pass 1 builds no Record (LoadChain) or decodes each record as Walk
// would (Scan): it reads each object's identity, validates it, and indexes
// every valid conversation record in 12 bytes — an FNV-1a hash of its uuid
// and its rank, bucketed by hash — with the exceptions kept apart: records
// whose parent is not the record written just before them, and objects that
// are not conversation records (index.go). At the end it selects the leaf
// (the last conversation record), walks parentUuid back from it, and
// reports gaps, cycles, conflicting fragment parents and lines Qwen would
// not read completely (BadLines, classified torn tail or corrupt). Records
// that share a uuid hash, a gap's child and a cycle are read back to
// compare their real strings: a hash collision is reported
// (DiagHashCollision), never followed. Pass 2 (Walk) decodes the file
// again and hands each chain record to the caller in chain order, checking
// every link with the real uuid strings (ErrHashCollision); objects off the
// chain are read as in pass 1, without a Record. When chain order is file
// order and no uuid has fragments (the normal case) Walk streams; otherwise
// it holds the chain's records, decoded without payloads, until the end of
// the file, then aggregates fragments (parts concatenated, greatest
// timestamp) and emits them. Chain.Degraded says why a chain may not be the
// real conversation.
//
// Scan streams the records to its visitor while every conversation record
// read so far follows the one before it (a new root restarts the stream),
// and falls back to a Walk when the transcript branches, has a gap or
// reuses a uuid: its visitor then sees a restart and the chain again, so
// that what it saw since the last restart is exactly what LoadChain and
// Walk yield.
//
// Every reader stops at a line longer than LoadOptions.MaxLineBytes with
// an events.ErrLineTooLong error at its position, having read at most the
// limit of it: a transcript that never ends a line (a FIFO, /dev/zero) is
// refused, not read forever.
//
// ChainOf does the same in memory for already decoded events. It stays
// exported while tailproof replay still builds its chains with it; it is a
// test oracle once replay reads the streaming chain.
//
// docs/qwen-0.24.4-records.md lists every field that bears on ownership,
// provenance or finality, which 0.24.4 code writes it, and what reads it.
//
// # Known deviations from the reference
//
//   - A line longer than LoadOptions.MaxLineBytes stops the read with an
//     error (Qwen has no limit).
//   - Timestamps: the ECMAScript date-time format is parsed as V8 does;
//     V8's legacy fallback formats ("Jan 2 2026") count as invalid, and a
//     date-time without an offset is read as UTC instead of local time.
//   - Invalid UTF-8 becomes one U+FFFD per bad byte (Node's decoder
//     replaces maximal subparts), and a lone surrogate escape becomes U+FFFD.
//   - JavaScript string comparison is by UTF-16 code units; jsLess
//     reproduces it for the timestamp aggregation.
package qwen
