package codex_test

import (
	"testing"

	"github.com/tailproof/tailproof/events/codex"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

func TestScenarios(t *testing.T) { turntest.Run(t, "testdata", codex.Harness()) }
