// Package events is tailproof's vocabulary: what a line of a session file
// becomes, and how bad lines are told apart.
//
// A Codec decodes one format's physical lines (Lines: bounded, positioned,
// newline-aware) into Events. An Event carries its Stream, its Position
// (line and byte offset), a Kind, its Provenance and Origin (who wrote it,
// and whether the record said so or it was inferred), and a format-specific
// Body (*qwen.Record, *dsh.EventBody, ledger records). A Registry holds the
// codecs a harness reads; tailproof.Codecs is the default one.
//
// # Torn tails and corruption
//
// Decode streams a reader through a codec and yields every undecodable line
// as an *Error classified by one look-ahead rule (Classifier, which a
// format's own reader reuses to classify as Decode does): ErrCorrupt when a valid
// record follows it (something damaged the middle of the file), ErrTornTail
// when nothing valid follows (a crash cut the last write), ErrLineTooLong
// when it exceeds the bound. Decoding continues after a bad line, so the
// caller chooses the policy. Errors carry the line and offset and unwrap to
// both the classification and the cause, so errors.Is works for either
// (ADR 0002).
//
// Subpackages decode the formats: qwen (Qwen Code's chat records and the
// active chain), ledger (the prompt-terminal ledger), dsh (dsh session
// logs).
package events
