// Package bus carries tailproof's events and decisions on watermill
// (github.com/ThreeDotsLabs/watermill v1.5.1).
//
// # Sources
//
// A source is any watermill message.Subscriber whose messages hold one
// record line each (the payload, without its newline) and say where it came
// from in the metadata: MetaStream ("transcript", "ledger", "session_log", or
// a harness's own stream with a codec registered under MetaCodec),
// MetaSession, MetaLine and MetaOffset. NewRecordMessage builds one. Source
// types the lines with the codecs (events/ledger, events/qwen, events/dsh by
// default); a message it cannot type comes out with Delivery.Err wrapping
// ErrBadMessage, for the receiver to poison or skip.
//
// Tailer is tailproof's own source: it follows JSONL files as they grow,
// never emits a torn last line (it waits for the newline), keeps one message
// in flight per topic (the next line only after Ack, Nack redelivers), and
// follows a session across Qwen's archive moves (QwenTailConfig: chats/ ↔
// chats/archive/). Each message carries MetaNext, the offset to resume from
// after its Ack (TailConfig.StartOffset).
//
// Acceptance of third-party sources: a source is accepted when it passes
// watermill's universal Pub/Sub suite (github.com/ThreeDotsLabs/watermill/
// pubsub/tests.TestPubSub) with its features declared as they are.
// TestTailerUniversal runs it on Tailer (ordered, persistent, at-least-once,
// no consumer groups, old messages replayed to a new subscriber); the
// JetStream subscriber in adapters/natsjs runs it with consumer groups.
//
// # Sink and service
//
// Sink publishes a Decision: its document — tailproof.Result's one
// published JSON shape, that of `tailproof reconcile --json`, opaque to the
// transport — on TopicDecision and, per record it appended, that record line
// on TopicTerminal.
//
// Service is the recovery service's transport (`tailproof serve`): a
// watermill Router whose handler, on each session-load event
// (NewLoadMessage), runs its Decider and publishes the decision. This
// package does not know the decision core: the Decider that runs
// tailproof.Reconcile is wired above it (service.Decider, used by
// `tailproof serve`). Middleware, outermost first: PoisonQueue → Retry → Recoverer, so
// a panic becomes an error, is retried with backoff, then parked on
// TopicPoison and acked. An error wrapping ErrRequeue skips the poison queue
// and is Nacked for redelivery (a session owned by another worker). Each
// load topic has one handler fed by an ordered subscriber, so a session's
// load events are handled one at a time, in order.
//
// With no transport given the service runs in process on a gochannel with
// BlockPublishUntilSubscriberAck (NewInProcess): without it gochannel sends
// every message from its own goroutine and reorders them. The price is that
// a publish blocks until the message is handled, so never publish load
// events from the goroutine that reads decisions.
//
// Delivery is at-least-once everywhere; Reconcile is idempotent (a settled
// prompt decides none), so a redelivered load event is harmless.
package bus
