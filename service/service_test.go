package service_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tailproof/tailproof"
	"github.com/tailproof/tailproof/adapters/bus/bustest"
	"github.com/tailproof/tailproof/adapters/memory"
	"github.com/tailproof/tailproof/service"
)

// The decider publishes the Result's one JSON shape, and the terminal lines
// it appended — none for a dry run, none the second time.
func TestDeciderPublishesTheResultAndItsTerminals(t *testing.T) {
	ctx := context.Background()
	store := memory.NewQwenStore()
	id := bustest.SessionID(1)
	if err := bustest.Seed(ctx, store, id, 1); err != nil {
		t.Fatal(err)
	}
	now := func() int64 { return bustest.BaseMs + 60_000 }
	dry, err := service.Decider(store, tailproof.Options{Now: now, DryRun: true})(ctx, id)
	if err != nil || len(dry.Terminals) != 0 || !bytes.Contains(dry.Document, []byte(`"wouldAppend":`)) {
		t.Fatalf("dry run: %v, %d terminals, %s", err, len(dry.Terminals), dry.Document)
	}
	real, err := service.Decider(store, tailproof.Options{Now: now})(ctx, id)
	if err != nil || len(real.Terminals) != 1 || real.Terminals[0].Target != bustest.Prompt(id) ||
		!bytes.HasPrefix(real.Document, []byte(`{"schemaVersion":1,`)) || !bytes.Contains(real.Document, real.Terminals[0].Line) {
		t.Fatalf("real run: %v, %+v, %s", err, real.Terminals, real.Document)
	}
	again, err := service.Decider(store, tailproof.Options{Now: now})(ctx, id)
	if err != nil || len(again.Terminals) != 0 {
		t.Fatalf("second run: %v, %+v", err, again.Terminals)
	}
}
