package ownership

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Class is an execution class that can own a session's active turn.
type Class uint8

const (
	// None: nothing executes for the session; a continuation may start.
	None Class = iota
	// Foreground is a prompt admitted through the ordinary prompt path
	// (Qwen's pendingPrompt), including an admitted continuation.
	Foreground
	// Settling is a foreground prompt whose stream ended but whose
	// completion (terminal write, tool-result flush) has not settled yet
	// (Qwen's pendingPromptCompletion). It still owns the session: a new
	// turn admitted now would race the settling turn's last writes.
	Settling
	// Notification is an automatic turn answering a background task
	// notification (Qwen's notificationProcessing / controller / completion).
	Notification
	// Cron is a scheduler-fired turn (Qwen's cronProcessing / controller /
	// completion).
	Cron
	// Goal is a goal-runtime continuation turn.
	Goal
	// Mutation is a history mutation in progress (compression, rewind,
	// session load or switch): the history a continuation would extend is
	// being rewritten.
	Mutation
)

var classNames = [...]string{
	None:         "none",
	Foreground:   "foreground_prompt",
	Settling:     "settling_prompt",
	Notification: "notification_turn",
	Cron:         "cron_turn",
	Goal:         "goal_continuation",
	Mutation:     "history_mutation",
}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ParseClass maps a class name (as String prints it) back to a Class.
func ParseClass(s string) (Class, bool) {
	for i, n := range classNames {
		if n == s {
			return Class(i), true
		}
	}
	return None, false
}

// Classes lists every owning class (None excluded), in the order Owner
// reports them when several own the session at once.
func Classes() []Class {
	return []Class{Mutation, Settling, Foreground, Notification, Cron, Goal}
}

// Phase is where a live turn is in its life.
type Phase uint8

const (
	// Start: the turn was admitted and owns the session from now on.
	Start Phase = iota + 1
	// Streamed: a foreground prompt's model stream ended; its completion is
	// still settling (the class becomes Settling). For the other classes the
	// turn simply keeps owning the session until Settle.
	Streamed
	// Settle: the turn's completion settled (completed, cancelled, failed:
	// any terminal). Ownership ends.
	Settle
)

var phaseNames = [...]string{Start: "start", Streamed: "streamed", Settle: "settle"}

func (p Phase) String() string {
	if p >= Start && p <= Settle {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// ParsePhase maps a phase name back to a Phase.
func ParsePhase(s string) (Phase, bool) {
	for i, n := range phaseNames {
		if n != "" && n == s {
			return Phase(i), true
		}
	}
	return 0, false
}

// Event is one live execution event: a turn of some class started, finished
// streaming, or settled. Turn identifies the turn (a prompt id, a
// notification task id, a cron job run, a goal turn id, a mutation id) so a
// settle can be matched to its start.
type Event struct {
	Class Class
	Phase Phase
	Turn  string
}

func (e Event) String() string { return e.Class.String() + " " + e.Phase.String() + " " + e.Turn }

// Errors. A live event that does not fit the state is refused and leaves the
// state unchanged: ownership is never guessed from an inconsistent stream.
var (
	ErrInvalidEvent = errors.New("ownership: invalid event")
	ErrDuplicate    = errors.New("ownership: turn already owns the session")
	ErrUnknownTurn  = errors.New("ownership: no such live turn")
)

// Owner is one live turn that owns the session.
type Owner struct {
	Class Class
	Turn  string
}

// Describe names the owner the way a refusal reports it.
func (o Owner) Describe() string {
	if o.Class == None {
		return "none"
	}
	return o.Class.String() + " " + o.Turn
}

// State is the fold of live events: which turns currently own the session.
// The zero value is a session nothing owns. State is not safe for
// concurrent use; the admission machine serializes it.
type State struct {
	live map[string]Class // turn id → class
	seq  map[string]int   // turn id → start order, for a stable report
	n    int
}

// Apply folds one live event. A start for a turn that is already live, a
// streamed or settle for a turn that is not, a class mismatch, or an unknown
// class or phase returns an error and changes nothing.
func (s *State) Apply(ev Event) error {
	if ev.Class == None || int(ev.Class) >= len(classNames) || ev.Phase < Start || ev.Phase > Settle {
		return fmt.Errorf("%w: %s", ErrInvalidEvent, ev)
	}
	if ev.Turn == "" {
		return fmt.Errorf("%w: %s: a turn id is required", ErrInvalidEvent, ev)
	}
	if ev.Class == Settling {
		return fmt.Errorf("%w: settling is reached by a foreground prompt's streamed event, not started", ErrInvalidEvent)
	}
	cur, live := s.live[ev.Turn]
	switch ev.Phase {
	case Start:
		if live {
			return fmt.Errorf("%w: %s (already %s)", ErrDuplicate, ev, cur)
		}
		if s.live == nil {
			s.live, s.seq = map[string]Class{}, map[string]int{}
		}
		s.n++
		s.live[ev.Turn], s.seq[ev.Turn] = ev.Class, s.n
		return nil
	case Streamed:
		if !live || !sameTurn(cur, ev.Class) {
			return fmt.Errorf("%w: %s", ErrUnknownTurn, ev)
		}
		if cur == Foreground {
			s.live[ev.Turn] = Settling
		}
		return nil
	}
	if !live || !sameTurn(cur, ev.Class) {
		return fmt.Errorf("%w: %s", ErrUnknownTurn, ev)
	}
	delete(s.live, ev.Turn)
	delete(s.seq, ev.Turn)
	return nil
}

// sameTurn: a settling prompt is still its foreground turn.
func sameTurn(cur, class Class) bool {
	return cur == class || cur == Settling && class == Foreground
}

// Owners lists every live turn, highest-priority class first (Classes
// order), then in start order.
func (s *State) Owners() []Owner {
	out := make([]Owner, 0, len(s.live))
	for t, c := range s.live {
		out = append(out, Owner{Class: c, Turn: t})
	}
	rank := map[Class]int{}
	for i, c := range Classes() {
		rank[c] = i
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Class != out[j].Class {
			return rank[out[i].Class] < rank[out[j].Class]
		}
		return s.seq[out[i].Turn] < s.seq[out[j].Turn]
	})
	return out
}

// Owner is the turn that owns the session, or Owner{Class: None}.
func (s *State) Owner() Owner {
	if o := s.Owners(); len(o) > 0 {
		return o[0]
	}
	return Owner{}
}

// Free reports whether no execution class owns the session.
func (s *State) Free() bool { return len(s.live) == 0 }

// Describe prints every owner on one line ("none" when free).
func (s *State) Describe() string {
	os := s.Owners()
	if len(os) == 0 {
		return "none"
	}
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = o.Describe()
	}
	return strings.Join(parts, ", ")
}

// Fold applies events in order and stops at the first refused one, returning
// the state so far and the error with the event's index.
func Fold(evs []Event) (*State, error) {
	s := &State{}
	for i, ev := range evs {
		if err := s.Apply(ev); err != nil {
			return s, fmt.Errorf("ownership: event %d: %w", i, err)
		}
	}
	return s, nil
}

// ParseEvent reads the text form "<class> <phase> <turn>" that String
// prints (used by scenario files and operators' replay logs).
func ParseEvent(s string) (Event, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return Event{}, fmt.Errorf("%w: %q: want <class> <phase> <turn>", ErrInvalidEvent, s)
	}
	c, ok := ParseClass(f[0])
	if !ok || c == None {
		return Event{}, fmt.Errorf("%w: %q: unknown class %q", ErrInvalidEvent, s, f[0])
	}
	p, ok := ParsePhase(f[1])
	if !ok {
		return Event{}, fmt.Errorf("%w: %q: unknown phase %q", ErrInvalidEvent, s, f[1])
	}
	return Event{Class: c, Phase: p, Turn: f[2]}, nil
}
