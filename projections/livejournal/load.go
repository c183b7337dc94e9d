package livejournal

// Load is what a daemon's session load returns: the compacted replay of
// completed turns (read from the persisted transcript, possibly starting
// with a replay-window marker) followed by the live journal of the
// unfinished turn (possibly starting with a live-journal marker).
type Load struct {
	SessionID       string
	CompactedReplay []*Event
	LiveJournal     []*Event
	LastEventID     int64 // the daemon's newest event id at snapshot time
	ReplayDegraded  bool  // compaction failed at some point; the replay may be incomplete
}

// Events returns the snapshot in replay order. The slice is new; the events
// are the load's own references.
func (l *Load) Events() []*Event {
	out := make([]*Event, 0, len(l.CompactedReplay)+len(l.LiveJournal))
	out = append(out, l.CompactedReplay...)
	return append(out, l.LiveJournal...)
}

// LiveMarker returns the live-journal marker that starts LiveJournal, the
// events retained after it, and whether there is one. A malformed marker is
// returned as an error: the caller must not treat it as absent.
func (l *Load) LiveMarker() (Marker, []*Event, bool, error) {
	if len(l.LiveJournal) == 0 || l.LiveJournal[0] == nil || l.LiveJournal[0].Type != TypeHistoryTruncated {
		return Marker{}, nil, false, nil
	}
	m, err := MarkerFromEvent(l.LiveJournal[0])
	if err != nil {
		return Marker{}, nil, true, err
	}
	return m, l.LiveJournal[1:], true, nil
}
