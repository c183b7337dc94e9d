package claude_test

import (
	"testing"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

func TestScenarios(t *testing.T) { turntest.Run(t, "testdata", claude.Harness()) }
