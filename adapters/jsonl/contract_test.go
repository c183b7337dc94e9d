package jsonl_test

import (
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/jsonl"
	"github.com/tailproof/tailproof/adapters/vfs"
)

func TestStoreContractOS(t *testing.T) {
	adaptertest.RunStoreContract(t, func(t *testing.T) adapters.Store {
		return jsonl.NewQwenStore(vfs.OS, jsonl.NewQwenLayout(t.TempDir(), "/work/project"))
	})
}
