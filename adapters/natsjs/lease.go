package natsjs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/guards"
)

// Lease errors.
var (
	// ErrLeaseHeld: another worker owns the session now.
	ErrLeaseHeld = errors.New("lease held by another worker")
	// ErrLeaseLost: the lease this worker held has expired or was taken; it
	// must not append.
	ErrLeaseLost = errors.New("lease lost")
)

// LeaseGuardName is the name of the guard a lost lease vetoes under.
const LeaseGuardName = "lease"

// Leases hands out per-session ownership records in a JetStream key-value
// bucket whose TTL expires the record of a worker that died holding it.
type Leases struct {
	kv    jetstream.KeyValue
	owner string
	ttl   time.Duration
	now   func() time.Time
}

// OpenLeases opens (creating when missing) the lease bucket. owner names
// this worker; ttl is how long a record outlives its last write.
func OpenLeases(ctx context.Context, js jetstream.JetStream, bucket, owner string, ttl time.Duration, replicas int) (*Leases, error) {
	if owner == "" || ttl <= 0 {
		return nil, errors.New("natsjs: a lease needs an owner and a positive TTL")
	}
	if replicas <= 0 {
		replicas = 1
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: bucket, TTL: ttl, Replicas: replicas, Storage: jetstream.FileStorage, History: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("natsjs: lease bucket %s: %w", bucket, err)
	}
	return &Leases{kv: kv, owner: owner, ttl: ttl, now: time.Now}, nil
}

// Owner is this worker's name.
func (l *Leases) Owner() string { return l.owner }

// key maps any session id to a valid KV key (keys allow only a small
// alphabet; session ids are arbitrary file-name components).
func key(session string) string { return "s." + hex.EncodeToString([]byte(session)) }

// Lease is one held ownership record.
type Lease struct {
	l        *Leases
	session  string
	key      string
	rev      uint64
	deadline time.Time
}

// Acquire takes session's lease, or fails with ErrLeaseHeld.
//
// The local deadline is measured from before the request was sent and ends
// a fifth of the TTL early, so it always passes before the server expires
// the record: after the deadline this worker assumes the lease is gone even
// if the server is unreachable, and no one else can have taken it before.
func (l *Leases) Acquire(ctx context.Context, session string) (*Lease, error) {
	start := l.now()
	k := key(session)
	rev, err := l.kv.Create(ctx, k, []byte(l.owner))
	if errors.Is(err, jetstream.ErrKeyExists) {
		e, gerr := l.kv.Get(ctx, k)
		if gerr != nil || string(e.Value()) != l.owner {
			return nil, fmt.Errorf("natsjs: session %s: %w", session, ErrLeaseHeld)
		}
		// Our own record from an earlier decision that was not released.
		rev, err = l.kv.Update(ctx, k, []byte(l.owner), e.Revision())
	}
	if err != nil {
		return nil, fmt.Errorf("natsjs: session %s: %w: %w", session, ErrLeaseHeld, err)
	}
	return &Lease{l: l, session: session, key: k, rev: rev, deadline: start.Add(l.ttl - l.ttl/5)}, nil
}

// Check returns nil only while the lease is provably held: the local
// deadline has not passed and the bucket still holds this worker's record
// at the revision it wrote. Any doubt (server unreachable) is a loss.
func (x *Lease) Check(ctx context.Context) error {
	if !x.l.now().Before(x.deadline) {
		return fmt.Errorf("natsjs: session %s: %w: expired locally", x.session, ErrLeaseLost)
	}
	e, err := x.l.kv.Get(ctx, x.key)
	if err != nil {
		return fmt.Errorf("natsjs: session %s: %w: %w", x.session, ErrLeaseLost, err)
	}
	if e.Revision() != x.rev || string(e.Value()) != x.l.owner {
		return fmt.Errorf("natsjs: session %s: %w: now held by %q", x.session, ErrLeaseLost, e.Value())
	}
	return nil
}

// Release deletes the record if it is still this lease's.
func (x *Lease) Release(ctx context.Context) error {
	if err := x.l.kv.Delete(ctx, x.key, jetstream.LastRevision(x.rev)); err != nil {
		return fmt.Errorf("natsjs: release %s: %w", x.session, err)
	}
	return nil
}

// Guard is a reconcile guard that vetoes when the lease is no longer held,
// so a decision made by a worker that lost its session says so.
func (x *Lease) Guard(ctx context.Context) guards.Guard[*guards.Evidence] {
	return guards.Func(LeaseGuardName, func(*guards.Evidence) string {
		if err := x.Check(ctx); err != nil {
			return err.Error()
		}
		return ""
	})
}

// Store wraps s so that AppendLedger checks the lease immediately before
// appending: the guard runs at the evidence check, this closes the window
// between that check and the write.
func (x *Lease) Store(s adapters.Store) adapters.Store { return leasedStore{Store: s, lease: x} }

type leasedStore struct {
	adapters.Store
	lease *Lease
}

// Workspace forwards the wrapped store's workspace, so wrapping never turns
// off Reconcile's workspace-membership check.
func (s leasedStore) Workspace() string {
	if ws, ok := s.Store.(adapters.WorkspaceStore); ok {
		return ws.Workspace()
	}
	return ""
}

func (s leasedStore) AppendLedger(ctx context.Context, sessionID string, line []byte) error {
	if sessionID != s.lease.session {
		return fmt.Errorf("natsjs: append to %s under the lease of %s: %w", sessionID, s.lease.session, ErrLeaseLost)
	}
	if err := s.lease.Check(ctx); err != nil {
		return err
	}
	return s.Store.AppendLedger(ctx, sessionID, line)
}
