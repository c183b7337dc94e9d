// Package natsjs scales tailproof's recovery service out over NATS
// JetStream: load events partitioned into streams, workers in a durable
// consumer group, and a key-value lease per session so exactly one worker
// decides a session at a time.
//
// Topology names the streams: Partitions load streams ("<prefix>-load-<n>";
// a session maps to one by FNV-32a of its id), the decision, terminal and
// poison streams, and the lease bucket. Every stream is consumed with
// MaxAckPending 1, so a partition is handled strictly in order across the
// whole group and a session's load events never overtake each other.
//
// Worker runs bus.Service on those streams. For each load event it takes the
// session's lease (Leases.Acquire: a KV create, so only one holder; the
// bucket TTL expires the record of a worker that died) and runs its Decider
// (WorkerConfig.Decide: in production tailproof.Reconcile, wired above the
// transport by service.LeaseDecider) with two checks that it still
// holds it:
//
//   - Lease.Guard joins the decision's guards, so a lost lease vetoes at the
//     evidence check and the veto ("lease: … lease lost …") is in the
//     decision, which the worker publishes before handing the session back;
//   - Lease.Store re-checks in AppendLedger, immediately before the write.
//
// A lease is lost when its local deadline — measured from before the create
// request, a fifth of the TTL early — has passed (so it always passes before
// the server can hand the lease to someone else), or when the record no
// longer holds this worker's revision. A session whose lease is held
// elsewhere, or lost, is requeued (bus.ErrRequeue → Nak with delay), never
// poisoned, so no decision is lost; Reconcile is idempotent, so none is
// made twice.
//
// Subscriber is our own JetStream pull subscriber (watermill-nats' wire
// format, so watermill-nats' Publisher writes for it); it passes watermill's
// universal suite. natstest.StartServer and natstest.StartCluster run
// nats-server in process on loopback, for tests and the load test; they are
// their own package so that importing natsjs compiles no server.
//
// The load test (`tailproof loadtest`) is cmd/tailproof/internal/loadgen.
package natsjs
