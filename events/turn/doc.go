// Package turn is the harness-neutral evidence vocabulary: what a record of
// any agent harness does, named once, so that folds and guards decide over
// acts instead of over one harness's record shapes.
//
// A harness's codec (events.Codec) turns bytes into its own typed records;
// its Mapper turns each record into acts: a prompt with its provenance
// (Source: the user, injected context, meta, a hook, a notification, the
// scheduler, a command), a turn start, a turn end with how it ended (End)
// and the harness's reason, model output with how far the message got
// (Stop), a tool call and its result by call id, proof that a call ran,
// compaction, errors, interrupt markers, and the identities that tie records
// together (turn id, prompt id, message id for one message over several
// records, uuid and parent links, sequence numbers). Read runs both over a
// file and turns every undecodable line into a KindDamage act at its
// position, torn tail and corruption kept apart.
//
// The mapping of each harness, and why the vocabulary has exactly these
// words, is ADR 0018 (docs/adr/0018-harness-neutral-vocabulary.md). Package
// projections/turnfold folds acts into per-turn evidence and
// machines/turnverdict decides each turn.
//
// A harness of your own needs a Codec, a Mapper and a Harness value; see
// the package example, which decides a turn of a made-up format end to end.
package turn
