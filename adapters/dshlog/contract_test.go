package dshlog_test

import (
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/dshlog"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func TestDSHSessionLogContractOS(t *testing.T) {
	adaptertest.RunSessionLogContract(t, func(t *testing.T) (adapters.SessionLog, func() adapters.SessionLog) {
		root := filepath.Join(t.TempDir(), "sessions")
		return dshlog.New(vfs.OS, root, dshlog.Options{}), func() adapters.SessionLog {
			return dshlog.New(vfs.OS, root, dshlog.Options{})
		}
	})
}
