// Package dsh is the codec for dsh (DeepSeek Harness) v1 session logs: one
// `<id>.jsonl` file per session whose first line is the header
// `{type:'session', version, id, createdAt, cwd?, parentSession?}` and whose
// every other line is one event `{type, seq, time, data}` with seq equal to
// the event's index (contiguous from 0).
//
// The package mirrors dsh at commit 9a30c46d63 (deepseek-dsh.md §1):
//
//   - Record is an event line with data kept verbatim; Payload is its typed
//     view: the full v1 vocabulary (turn/start with message, continuation and
//     injection triggers; turn/end with completed, aborted, error, disposed,
//     max-tokens and the repair-only interrupted; step/start, step/end,
//     user/message, context/message, assistant/chunk with every StreamChunk
//     kind, assistant/message with ContentBlocks including tool-call,
//     tool/call, tool/result, steering/message, usage, error). A type outside
//     the vocabulary decodes as *Generic, never as an error: dsh's event map
//     is merge-extensible.
//   - The encoders (AppendHeader, AppendRecord, Payload.AppendJSON) write
//     keys in the order dsh's code constructs them and escape strings as
//     JSON.stringify does, so bytes written here equal bytes dsh writes.
//   - Codec implements events.Codec. Kinds are "dsh.<type>" and the header
//     is "dsh.session"; an envelope's Time is the record's `time`;
//     Provenance is structural (see ProvenanceOf): a user-sourced message is
//     real_user, a plugin- or agent-sourced one and every context/message or
//     injection turn is system, the model's output is assistant_output and
//     tool/result is tool_result.
//
// What is stricter than dsh, and why: dsh keeps any line that JSON.parse
// accepts and whose seq matches. ParseRecord also asks for a string type, an
// integer time and a data member — every line dsh's writer produces has
// them — so a line that lacks them is a hole rather than an event. A hole
// inside the committed region makes a log unloadable, so strictness can
// only turn a silent acceptance into a reported error, never the reverse.
package dsh
