package qwen_test

import (
	"testing"

	"github.com/tailproof/tailproof/events/qwen"
	"github.com/tailproof/tailproof/machines/turnverdict/turntest"
)

// TestActScenarios runs testdata/acts/*.txt (turntest: decode, acts,
// verdict) over Qwen Code 0.24.4 transcripts.
func TestActScenarios(t *testing.T) { turntest.Run(t, "testdata/acts", qwen.Harness()) }
