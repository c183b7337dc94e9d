package memory

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
)

// Fault injection: the operations a Fault targets, the injected errors,
// and the per-operation counters.

// Op names a filesystem operation a Fault can target.
type Op string

// The operations the FS counts. Every call of the matching vfs method (or,
// for OpWrite/OpRead/OpSync/OpTruncate, of the File method) is one occurrence.
const (
	OpOpen     Op = "open"
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpTruncate Op = "truncate"
	OpStat     Op = "stat"
	OpRename   Op = "rename"
	OpLink     Op = "link"
	OpRemove   Op = "remove"
	OpMkdir    Op = "mkdir"
	OpReadDir  Op = "readdir"
	OpSyncDir  Op = "syncdir"
	OpLock     Op = "lock"
)

// ops lists the operations in the order of FS.counts.
var ops = [...]Op{OpOpen, OpRead, OpWrite, OpSync, OpTruncate, OpStat, OpRename, OpLink, OpRemove, OpMkdir, OpReadDir, OpSyncDir, OpLock}

// opIndex is op's index in ops, or -1: counting every operation through a
// map keyed by a string was a visible share of the simulator's time.
func opIndex(op Op) int {
	switch op {
	case OpOpen:
		return 0
	case OpRead:
		return 1
	case OpWrite:
		return 2
	case OpSync:
		return 3
	case OpTruncate:
		return 4
	case OpStat:
		return 5
	case OpRename:
		return 6
	case OpLink:
		return 7
	case OpRemove:
		return 8
	case OpMkdir:
		return 9
	case OpReadDir:
		return 10
	case OpSyncDir:
		return 11
	case OpLock:
		return 12
	}
	return -1
}

// ErrInjected is the I/O error a Fault returns unless it names its own. It
// wraps syscall.EIO so callers that classify errno see a real disk error.
var ErrInjected = fmt.Errorf("memory: injected I/O error: %w", syscall.EIO)

// ErrCrashed is returned by every operation after a Fault with Crash fired:
// the simulated process is dead until the test calls FS.Crash (the reboot).
var ErrCrashed = errors.New("memory: filesystem crashed")

// Fault arms one injected failure: the Nth occurrence (1-based, counted from
// Inject) of Op on a matching path fails. A write fault may first let Torn
// bytes of the write land (a torn write: they are in the page cache, not
// synced). With Crash set the simulated process dies at that point: the
// operation and every later one return ErrCrashed until FS.Crash.
type Fault struct {
	Op Op
	// Path restricts the fault to one file or directory (exact path after
	// filepath.Clean); empty matches every path.
	Path string
	// Nth is the occurrence that fails; 0 means the first.
	Nth int
	// Torn is, for OpWrite, how many bytes of the failing write land before
	// the failure. It is clamped to the write's length.
	Torn int
	// Crash halts the filesystem at this point instead of returning Err.
	Crash bool
	// Err is returned by the failing operation; nil means ErrInjected.
	Err error

	seen int
}

// Inject arms a fault. Faults are independent; each fires at most once.
func (m *FS) Inject(f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f.Nth <= 0 {
		f.Nth = 1
	}
	f.seen = 0
	m.faults = append(m.faults, &f)
}

// ClearFaults disarms every fault that has not fired.
func (m *FS) ClearFaults() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = nil
}

// Count reports how many times op has been performed (including failed and
// faulted attempts). Tests use it to enumerate crash points: run once to
// count, then crash at each occurrence in turn.
func (m *FS) Count(op Op) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := opIndex(op); i >= 0 {
		return m.counts[i]
	}
	return 0
}

// Halted reports whether a crash fault has fired and the FS awaits Crash.
func (m *FS) Halted() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.halted
}

// check counts one occurrence of op on p and reports the fault that fires on
// it, if any. Callers hold m.mu.
func (m *FS) check(op Op, p string) (*Fault, error) {
	if i := opIndex(op); i >= 0 {
		m.counts[i]++
	}
	if m.halted {
		return nil, ErrCrashed
	}
	cp, cleaned := "", false
	for i, f := range m.faults {
		if f.Op != op {
			continue
		}
		if f.Path != "" {
			if !cleaned {
				cp, cleaned = clean(p), true
			}
			if clean(f.Path) != cp {
				continue
			}
		}
		f.seen++
		if f.seen < f.Nth {
			continue
		}
		m.faults = slices.Delete(m.faults, i, i+1)
		if f.Crash {
			m.halted = true
			m.cond.Broadcast()
		}
		return f, nil
	}
	return nil, nil
}

func (f *Fault) err() error {
	if f.Crash {
		return ErrCrashed
	}
	if f.Err != nil {
		return f.Err
	}
	return ErrInjected
}

// gate is check for operations that either fail whole or proceed.
func (m *FS) gate(op Op, p string) error {
	f, err := m.check(op, p)
	if err != nil {
		return err
	}
	if f != nil {
		return f.err()
	}
	return nil
}
