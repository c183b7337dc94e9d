package jsonl_test

import (
	"path/filepath"
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func TestDSHSessionLogContractOS(t *testing.T) {
	adaptertest.RunSessionLogContract(t, func(t *testing.T) (adapters.SessionLog, func() adapters.SessionLog) {
		root := filepath.Join(t.TempDir(), "sessions")
		return jsonl.NewDSHLog(vfs.OS, root, jsonl.DSHOptions{}), func() adapters.SessionLog {
			return jsonl.NewDSHLog(vfs.OS, root, jsonl.DSHOptions{})
		}
	})
}
