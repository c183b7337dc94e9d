package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSimulateJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--seed", "5", "--runs", "40", "--json", "--workers", "1"}, &out, &errb)
	var got struct {
		Wrong      *int                         `json:"wrong"`
		Scenarios  int                          `json:"scenarios"`
		PerSecond  *float64                     `json:"perSecond"`
		Classes    []map[string]json.RawMessage `json:"classes"`
		Violations []struct {
			Seed     uint64
			Scenario int
		} `json:"violations"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out.String())
	}
	if got.Wrong == nil || got.PerSecond == nil || got.Scenarios != 40 || len(got.Classes) == 0 {
		t.Fatalf("missing figures: %s", out.String())
	}
	if _, ok := got.Classes[0]["reference"]; !ok {
		t.Fatalf("classes carry no baseline figures: %s", out.String())
	}
	// Exit status follows the invariants, and a failure names its replay.
	if want := map[bool]int{true: 1, false: 0}[len(got.Violations) > 0]; code != want {
		t.Fatalf("exit %d with %d violations, want %d\n%s", code, len(got.Violations), want, errb.String())
	}
	if code != 0 && !strings.Contains(errb.String(), "tailproof simulate --seed 5 --runs 1 --scenario ") {
		t.Fatalf("no replay command on stderr:\n%s", errb.String())
	}
}

func TestSimulateTableAndReplay(t *testing.T) {
	var out, errb bytes.Buffer
	run(context.Background(), []string{"simulate", "--seed", "5", "--runs", "1", "--scenario", "3", "--trace"}, &out, &errb)
	for _, want := range []string{"scenario 3 of seed 5", "class ", "tailproof corr/unkn/wrong", "total"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if errb.Len() > 0 && strings.Contains(errb.String(), "[") && strings.Contains(errb.String(), "%]") {
		t.Errorf("progress bar drawn on a non-terminal stderr:\n%s", errb.String())
	}
	if code := run(context.Background(), []string{"simulate", "--runs", "0"}, &out, &errb); code != 2 {
		t.Errorf("--runs 0: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"simulate", "--trace", "--runs", "2"}, &out, &errb); code != 2 {
		t.Errorf("--trace with --runs 2: exit %d, want 2", code)
	}
}
