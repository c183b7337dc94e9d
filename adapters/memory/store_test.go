package memory_test

import (
	"testing"

	"github.com/tailproof/tailproof/adapters"
	"github.com/tailproof/tailproof/adapters/adaptertest"
	"github.com/tailproof/tailproof/adapters/memory"
)

func TestStoreContract(t *testing.T) {
	adaptertest.RunStoreContract(t, func(t *testing.T) adapters.Store { return memory.NewQwenStore() })
}
