package memory

import (
	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/jsonl"
)

// DefaultQwenLayout is where NewQwenStore keeps its files inside its FS.
var DefaultQwenLayout = jsonl.NewQwenLayout("/home/user/.qwen", "/work/project")

// QwenStore is the Qwen ledger/transcript contract (adapters.Store) held in
// memory: it is the production jsonl.QwenStore running on a strict memory
// FS, so tests and simulations exercise the real append path (seal, fsync,
// directory fsync, lock, group commit) and can crash it, tear its writes and
// fail its I/O through Mem.
type QwenStore struct {
	*jsonl.QwenStore
	mem *FS
}

var _ adapters.Store = (*QwenStore)(nil)

// NewQwenStore returns an empty in-memory store laid out as
// DefaultQwenLayout.
func NewQwenStore() *QwenStore { return NewQwenStoreOn(NewFS(), DefaultQwenLayout) }

// NewQwenStoreOn returns a store over an existing memory FS — the way to
// "restart the process" after m.Crash(): a new store over the same FS has
// none of the old one's in-process state.
func NewQwenStoreOn(m *FS, layout jsonl.QwenLayout) *QwenStore {
	return &QwenStore{QwenStore: jsonl.NewQwenStore(m, layout), mem: m}
}

// Mem is the filesystem under the store, for fault injection and crashes.
func (s *QwenStore) Mem() *FS { return s.mem }
