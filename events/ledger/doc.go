// Package ledger is the codec for Qwen Code's prompt terminal ledger, the
// sidecar <sessionId>.ledger.jsonl next to a session transcript.
//
// Each line is one JSON object, append-only:
//
//	{"v":1,"promptId":"p1","state":"in_flight","tailUuid":"u7","at":1767225600000}
//	{"v":1,"promptId":"p1","terminal":"completed","stopReason":"reconstructed_from_transcript","at":1767225601000}
//
// Decode and Read accept and drop exactly what the reference reader
// (readPromptLedgerRecords / coercePromptLedgerRecord in Qwen Code 0.24.4)
// accepts and drops. Encode writes the bytes the reference writer writes
// (JSON.stringify key order and escaping), so Qwen Code reads tailproof's
// lines back.
package ledger
