// Package livejournal is the bounded in-memory journal a daemon keeps of the
// turn in progress, and the history_truncated marker that says precisely
// what a snapshot of it dropped and for which prompt.
//
// # What it mirrors
//
// Qwen Code's daemon (acp-bridge) keeps the raw events of the unfinished turn
// so that a client connecting mid-turn can catch up: session/load returns the
// compacted replay of finished turns (read from the persisted transcript)
// followed by this live journal. The journal is bounded — 10,000 events and
// 8 MiB by default — and when it evicts, the snapshot starts with a marker:
//
//	{"v":1,"type":"history_truncated","promptId":"p1","data":{"reason":"replay_window_exceeded",
//	 "scope":"live_journal","truncatedEvents":7,"retainedEvents":3,"maxBytes":8388608,
//	 "maxEvents":3,"recordId":"r9","fullTranscriptAvailable":true}}
//
// The rules carried over:
//
//   - after each append, the oldest events are evicted while the journal
//     holds more than MaxEvents events, or more than MaxBytes bytes and more
//     than one event: the byte bound always keeps the newest event;
//   - connection-level events (history_truncated, slow_client_warning,
//     client_evicted, replay_complete, stream_error) are never journaled;
//   - turn_complete and turn_error reset the journal: the persisted
//     transcript is authoritative and holds the complete turn from then on
//     (a cancelled turn ends in turn_complete with a cancelled stop reason);
//   - the marker's promptId is the session's active prompt, passed to
//     Snapshot by the daemon; a marker from an older daemon without one is
//     attributable only when the retained events name exactly one prompt
//     (Marker.Owner);
//   - reason must be replay_window_exceeded; scope, maxEvents, promptId and
//     recordId are optional, and a present-but-malformed optional value makes
//     the marker malformed (DecodeMarker, Marker.Validate);
//   - the status text (Marker.Status) says whether the replay window or the
//     live turn was cut, that the newest events were kept and older ones
//     discarded, and promises recovery after the terminal only when
//     fullTranscriptAvailable is true.
//
// The replay-window marker (ReplayWindowMarker) has the same shape without a
// scope or maxEvents; it may carry truncatedTurns.
//
// # Memory
//
// The journal stores *Event references in a ring of at most MaxEvents+1
// slots; evicted slots are cleared so the events can be collected. Events are
// immutable once appended; snapshots, the client's transcript and a repair
// checkpoint all share them. BenchmarkMillionEventTurn shows a 1,000,000-event
// turn leaving a live heap within the configured bound.
//
// # Envelope
//
// Event is the daemon's own wire event; Event.Envelope wraps it in the shared
// events.Event (stream live_journal, kind "daemon.<type>", the event as Body),
// and Codec decodes a recorded stream through events.Decode with the usual
// torn-tail / corruption classification.
//
// The repair a client performs after the terminal is machines.RepairEpisode.
package livejournal
