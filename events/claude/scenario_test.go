package claude_test

import (
	"testing"

	"github.com/tailproof/tailproof/events/claude"
	"github.com/tailproof/tailproof/events/turn/turntest"
)

func TestScenarios(t *testing.T) { turntest.Run(t, "testdata", claude.Harness()) }
