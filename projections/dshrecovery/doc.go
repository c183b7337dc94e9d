// Package dshrecovery decides, without IO, how a dsh session format v0 log
// is recovered after a crash — the decision dsh-session-persistence-jsonl
// 0.1.0-rc.8 takes inside its load() and performs with commitRepair. The
// backend (adapters/dshlog.RecoverV0) reads and writes; this package only
// folds events and returns a Plan.
//
// Fold mirrors, one event at a time, what the package's coordinator checks
// on the stored prefix (adoptStoredEvents with its legacy upgrades and
// message-shape assertions, assertEventsSupported's 48 known types or
// ignorable: true, dsh-session's seed envelope checks) and the turn
// enclosure its interruptedTurnClosers folds: the open turn, the open step,
// the tool requests of that step with no tool/result yet, and for each the
// seq of its tool/call if one was recorded.
//
// Closers are dsh's: an error tool/result per pending request —
// TOOL_OUTCOME_UNKNOWN (ToolOutcomeUnknownError, sourceEventSeqs [callSeq])
// when its tool/call is durable, TOOL_NOT_STARTED (ToolNotStartedError) when
// not, with the package's texts — then step/end if a step is open, then
// turn/end {kind:'interrupted'}; seqs continue the log; every time is the
// last event's. The JSON is byte for byte what JSON.stringify writes.
//
// Decide turns a scan (events/dsh/v0.Result) and a fold into a Plan: where to
// cut (the torn tail), what to append after it (the complete records salvaged
// from a torn zstd frame, then the closers, as one batch), or the refusal.
// It fails closed where dsh would write something and then refuse its own
// repair (an open turn/start without a turn or with a turn below 1, a tool
// request id that is not a string) and where echoing a value faithfully would mean guessing
// JavaScript's number formatting (a non-integer turn or step).
//
// Not modelled: dsh-session's surface-transition validation (surfaceOp
// replace ranges), which a log dsh wrote satisfies; a log that breaks it is
// refused by the package and accepted here.
package dshrecovery
