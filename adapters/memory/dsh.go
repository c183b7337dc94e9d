package memory

import (
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/dshlog"
)

// DefaultDSHRoot is where NewDSHLog keeps its buckets inside its FS.
const DefaultDSHRoot = "/home/user/.dsh/sessions"

// DSHLog is the dsh session-log contract (adapters.SessionLog) held in
// memory: the production dshlog.Log running on a strict memory FS, so tests
// and simulations exercise the real write path (temp + fsync + link publish,
// rollback on a failed append, evidence copy, close-don't-truncate) and can
// crash it, tear its writes and fail its I/O through Mem.
type DSHLog struct {
	*dshlog.Log
	mem *FS
}

var _ adapters.SessionLog = (*DSHLog)(nil)

// NewDSHLog returns an empty in-memory session log rooted at DefaultDSHRoot.
func NewDSHLog() *DSHLog { return NewDSHLogOn(NewFS(), DefaultDSHRoot, dshlog.Options{}) }

// NewDSHLogOn returns a session log over an existing memory FS — the way to
// "restart the process" after m.Crash(): a new log over the same FS has none
// of the old one's in-process state.
func NewDSHLogOn(m *FS, root string, opts dshlog.Options) *DSHLog {
	return &DSHLog{Log: dshlog.New(m, root, opts), mem: m}
}

// Mem is the filesystem under the log, for fault injection and crashes.
func (s *DSHLog) Mem() *FS { return s.mem }
