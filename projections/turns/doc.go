// Package turns is the turn-enclosure projection of dsh session logs: which
// turn is open, which step is open, and which tool calls the model asked for
// have no result yet — and, from that, the records that close a turn a crash
// left open.
//
// dsh makes the turn its single durability boundary (its ADR 0017: every
// event is enclosed in a turn), so a log whose last turn has no turn/end was
// cut by a crash. dsh's load does not truncate that turn — it can hold a lot
// of real work — but closes it (ADR 0018). Closers reproduces dsh v1's
// interruptedTurnClosers byte for byte (deepseek-dsh.md §2.4): an error
// tool/result for every unanswered call, a step/end when a step is open and
// turn/end {kind:'interrupted'}, seqs continuing the log and every time equal
// to the last real event's time. The scenario files under testdata/ are
// dsh's eight repair cases and the §1.6 crash example.
//
// The package is pure: no IO, no clock.
package turns
