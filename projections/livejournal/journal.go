package livejournal

import (
	"fmt"
	"sync"
)

// Default bounds, the values Qwen's daemon ships (replayWindowLimits.ts).
const (
	DefaultMaxEvents = 10_000
	DefaultMaxBytes  = 8 * 1024 * 1024
)

// Limits bound the journal of one unfinished turn. Both are required and
// positive: a journal that may grow without bound is what this package
// exists to prevent, so there is no "unlimited" value.
type Limits struct {
	MaxEvents int // retained events, counted as source events
	MaxBytes  int // retained bytes, counted as encoded wire bytes
}

// DefaultLimits returns 10,000 events / 8 MiB.
func DefaultLimits() Limits { return Limits{MaxEvents: DefaultMaxEvents, MaxBytes: DefaultMaxBytes} }

// Validate reports bounds that are not positive safe integers.
func (l Limits) Validate() error {
	if l.MaxEvents < 1 || int64(l.MaxEvents) > MaxSafeInteger {
		return fmt.Errorf("livejournal: maxEvents %d must be a positive safe integer: %w", l.MaxEvents, ErrInvalidLimits)
	}
	if l.MaxBytes < 1 || int64(l.MaxBytes) > MaxSafeInteger {
		return fmt.Errorf("livejournal: maxBytes %d must be a positive safe integer: %w", l.MaxBytes, ErrInvalidLimits)
	}
	return nil
}

// Outcome says what Append did with an event.
type Outcome uint8

const (
	Journaled Outcome = iota + 1 // retained (older events may have been evicted)
	Transient                    // a connection-level event; never journaled
	TurnEnded                    // a formal terminal; the journal was reset
)

func (o Outcome) String() string {
	switch o {
	case Journaled:
		return "journaled"
	case Transient:
		return "transient"
	case TurnEnded:
		return "turn_ended"
	}
	return "outcome(?)"
}

type entry struct {
	ev   *Event
	size int
}

// Journal is the bounded in-memory journal of the current unfinished turn.
// It keeps references to the events it is given (never copies of their
// payloads) in a ring whose capacity never exceeds MaxEvents+1, evicting the
// oldest until both bounds hold; the byte bound always keeps the newest event
// even when that one event alone is larger than MaxBytes, because a journal
// that shows nothing of the turn helps no reader.
//
// The persisted transcript stays authoritative: at the turn's terminal the
// journal is emptied and the complete turn is read from the transcript.
//
// A Journal is safe for concurrent use: a daemon appends from its agent
// stream while load requests take snapshots.
type Journal struct {
	mu        sync.Mutex
	limits    Limits
	ring      []entry
	head, n   int
	bytes     int
	truncated int
	recordID  string
	scratch   []byte
	noFull    bool
}

// Option adjusts a journal at construction.
type Option func(*Journal)

// WithoutFullTranscript makes markers say fullTranscriptAvailable=false: the
// daemon does not persist the turn, so no reader may be promised that the
// discarded events come back after the terminal.
func WithoutFullTranscript() Option { return func(j *Journal) { j.noFull = true } }

// New returns an empty journal bounded by l.
func New(l Limits, opts ...Option) (*Journal, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	j := &Journal{limits: l}
	for _, o := range opts {
		o(j)
	}
	return j, nil
}

// Limits returns the journal's bounds.
func (j *Journal) Limits() Limits { return j.limits }

// Append offers one event of the live stream to the journal. Transient
// events are refused (Transient), a formal terminal resets the journal
// (TurnEnded), anything else is retained (Journaled) and the oldest retained
// events are evicted while the journal holds more than MaxEvents events, or
// more than MaxBytes bytes and more than one event.
func (j *Journal) Append(ev *Event) (Outcome, error) {
	if err := ev.validate(); err != nil {
		return 0, err
	}
	if IsTransient(ev.Type) {
		return Transient, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if IsTerminal(ev.Type) {
		j.resetLocked()
		return TurnEnded, nil
	}
	var size int
	size, j.scratch = ev.encodedSize(j.scratch)
	if cap(j.scratch) > 64<<10 {
		j.scratch = nil // one huge prompt id must not pin its buffer for the turn
	}
	j.pushLocked(entry{ev: ev, size: size})
	if ev.RecordID != "" {
		j.recordID = ev.RecordID
	}
	for j.n > j.limits.MaxEvents || (j.bytes > j.limits.MaxBytes && j.n > 1) {
		j.popLocked()
		j.truncated++
	}
	return Journaled, nil
}

func (j *Journal) pushLocked(e entry) {
	if j.n == len(j.ring) {
		j.growLocked()
	}
	j.ring[(j.head+j.n)%len(j.ring)] = e
	j.n++
	j.bytes += e.size
}

// growLocked doubles the ring up to MaxEvents+1 slots: the journal briefly
// holds one event over the bound before evicting.
func (j *Journal) growLocked() {
	c := 2 * len(j.ring)
	if c < 16 {
		c = 16
	}
	if c > j.limits.MaxEvents+1 {
		c = j.limits.MaxEvents + 1
	}
	ring := make([]entry, c)
	for i := 0; i < j.n; i++ {
		ring[i] = j.ring[(j.head+i)%len(j.ring)]
	}
	j.ring, j.head = ring, 0
}

func (j *Journal) popLocked() {
	e := j.ring[j.head]
	j.ring[j.head] = entry{} // drop the reference so the event can be collected
	j.head = (j.head + 1) % len(j.ring)
	j.n--
	j.bytes -= e.size
}

// Reset empties the journal. A daemon calls it when a turn ends some other
// way than through Append (the session is closed, the agent restarted).
func (j *Journal) Reset() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.resetLocked()
}

func (j *Journal) resetLocked() {
	// A fresh ring rather than clearing the old one: a turn that needed a big
	// ring must not keep it for the next, small turn.
	j.ring, j.head, j.n, j.bytes, j.truncated, j.recordID = nil, 0, 0, 0, 0, ""
}

// Len is the number of retained events.
func (j *Journal) Len() int { j.mu.Lock(); defer j.mu.Unlock(); return j.n }

// Bytes is the encoded size of the retained events.
func (j *Journal) Bytes() int { j.mu.Lock(); defer j.mu.Unlock(); return j.bytes }

// Truncated is the number of events of this turn evicted so far.
func (j *Journal) Truncated() int { j.mu.Lock(); defer j.mu.Unlock(); return j.truncated }

// Marker returns the live-journal marker a snapshot taken now would start
// with, owned by activePromptID (the session's active prompt, "" when the
// caller does not know it), and false when nothing has been evicted.
func (j *Journal) Marker(activePromptID string) (Marker, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.markerLocked(activePromptID)
}

func (j *Journal) markerLocked(activePromptID string) (Marker, bool) {
	if j.truncated == 0 {
		return Marker{}, false
	}
	return Marker{
		PromptID:                activePromptID,
		Reason:                  ReasonReplayWindowExceeded,
		Scope:                   ScopeLiveJournal,
		TruncatedEvents:         j.truncated,
		RetainedEvents:          j.n,
		MaxBytes:                j.limits.MaxBytes,
		MaxEvents:               j.limits.MaxEvents,
		RecordID:                j.recordID,
		FullTranscriptAvailable: !j.noFull,
	}, true
}

// Snapshot returns the retained events, oldest first, preceded by a
// history_truncated marker when events were evicted. The slice is new; the
// events in it are the journal's own references, not copies.
func (j *Journal) Snapshot(activePromptID string) []*Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	m, truncated := j.markerLocked(activePromptID)
	out := make([]*Event, 0, j.n+1)
	if truncated {
		out = append(out, m.Event())
	}
	for i := 0; i < j.n; i++ {
		out = append(out, j.ring[(j.head+i)%len(j.ring)].ev)
	}
	return out
}
