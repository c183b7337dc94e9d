package memory_test

import (
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/memory"
)

func TestDSHSessionLogContract(t *testing.T) {
	adaptertest.RunSessionLogContract(t, func(t *testing.T) (adapters.SessionLog, func() adapters.SessionLog) {
		log := memory.NewDSHLog()
		return log, func() adapters.SessionLog {
			return memory.NewDSHLogOn(log.Mem(), memory.DefaultDSHRoot, dshlog.Options{})
		}
	})
}

// A crash right after each operation returns loses nothing the contract
// promised: every case is re-run with the filesystem rebooted (unsynced
// bytes dropped) before each reopen.
func TestDSHSessionLogContractAcrossCrashes(t *testing.T) {
	adaptertest.RunSessionLogContract(t, func(t *testing.T) (adapters.SessionLog, func() adapters.SessionLog) {
		log := memory.NewDSHLog()
		return log, func() adapters.SessionLog {
			log.Mem().Crash()
			return memory.NewDSHLogOn(log.Mem(), memory.DefaultDSHRoot, dshlog.Options{})
		}
	})
}
