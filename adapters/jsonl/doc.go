// Package jsonl is tailproof's durable storage on the files agent harnesses
// already write: Qwen Code's runtime directory (transcripts and the prompt
// terminal ledger). (dsh's session logs live in adapters/dshlog.) Everything goes through the
// adapters/vfs seam, so the crash tests run this very code on the strict
// in-memory filesystem of adapters/memory.
//
// # Qwen Code
//
// QwenLayout names the files exactly as Qwen Code 0.24.4 does:
//
//	<runtime>/projects/<SanitizeCwd(cwd)>/chats/<id>.jsonl           transcript
//	<runtime>/projects/<SanitizeCwd(cwd)>/chats/<id>.ledger.jsonl    prompt terminal ledger
//	<runtime>/projects/<SanitizeCwd(cwd)>/chats/archive/...          archived state
//
// where <runtime> is ResolveRuntimeDir: QWEN_RUNTIME_DIR, else QWEN_HOME,
// else ~/.qwen. Session ids that are not plain file names are refused
// (CheckSessionID, adapters.ErrInvalidSessionID), never escaped.
//
// QwenStore implements adapters.Store on that layout:
//
//   - AppendLedger is a write-ahead append that Qwen's reader accepts byte for
//     byte, made durable: seal a torn tail (newline when the last byte is
//     not one), write, fsync, fsync the directory chain on create; mode
//     0600; flock on <id>.ledger.lock across processes; group commit inside
//     one process (concurrent appenders share an fsync, none returns before
//     its bytes are synced). See docs/adr/0004-durable-ledger-appends.md.
//     A failed write (a short write on a full disk) or fsync is cut back to
//     the pre-append size and the cut synced: the error then wraps
//     ErrNotAppended, and the ledger is as it was (ADR 0022). Every file is
//     opened with vfs.OpenRegular: a FIFO, a device or a directory is
//     refused before a byte is read or written.
//   - OpenLedger / OpenLedgerTail stream the ledger (missing reads empty; the
//     tail reports windowed so the caller drops the first line, as Qwen does
//     with its 256 KiB recent-terminals window).
//   - OpenTranscript streams a transcript (missing wraps adapters.ErrNotFound);
//     TranscriptTailUUID is Qwen's dispatch-marker capture over the last
//     64 KiB (TailUUID): the last non-empty line only, no marker when it is
//     torn, oversized or has no uuid.
//   - Archive / Unarchive move transcript and ledger with Qwen's
//     direction-aware merge (archive appends, unarchive prepends; never
//     clobber, never wedge; ledger problems are returned as warnings);
//     RemoveSession deletes the ledger in both states; ScanTranscripts
//     applies SESSION_FILE_PATTERN so a ledger is never read as a
//     transcript. See docs/adr/0005-qwen-runtime-layout.md.
//
// FilesStore serves one session from two explicit paths (the CLI's
// --ledger/--transcript), with the same writer.
package jsonl
