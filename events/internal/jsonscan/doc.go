// Package jsonscan holds the JSON primitives shared by the hand-written
// decoders of events/ledger, events/dsh, events/codex and events/claude:
// whitespace, strings (validation and unescaping), numbers, literals and
// whole values skipped under a nesting limit. String validates long,
// escape-dense strings 64 bytes at a time in plain Go (swar.go, ADR 0029).
//
// Each primitive accepts exactly what encoding/json accepts and decodes
// strings exactly as encoding/json does: a \uD800-\uDBFF escape followed by
// a \uDC00-\uDFFF escape is one code point, any other surrogate escape
// becomes U+FFFD, and each byte of invalid UTF-8 becomes U+FFFD. That is
// encoding/json's behaviour, not JavaScript's: JSON.parse keeps a lone
// surrogate as a UTF-16 code unit, so a decoder that must mirror JSON.parse
// (events/qwen) cannot use its decoding; it uses String, whose validation
// is the grammar JSON.parse and encoding/json share.
//
// The decoders keep their differential fuzz tests against encoding/json;
// living here, a fix to one primitive reaches both.
package jsonscan
