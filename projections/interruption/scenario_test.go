package interruption_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tailproof/tailproof/projections/apihistory"
	"github.com/tailproof/tailproof/projections/apihistory/histtest"
	"github.com/tailproof/tailproof/projections/interruption"
)

func TestScenarios(t *testing.T) {
	// Only *.txt: rapid stores failing cases under testdata/rapid.
	paths, _ := filepath.Glob("testdata/*.txt")
	for _, path := range paths {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	}
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

func trailingArg(d *datadriven.TestData) (*int, error) {
	v, ok := arg(d, "trailing")
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("trailing=%q: %w", v, err)
	}
	return &n, nil
}

func completedArg(d *datadriven.TestData) []string {
	if v, ok := arg(d, "completed"); ok && v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

func run(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "tailcount":
		return strconv.Itoa(interruption.TailCount) + "\n", nil
	case "detect", "end":
		h, err := histtest.ParseEntries(d.Input)
		if err != nil {
			return "", err
		}
		tr, err := trailingArg(d)
		if err != nil {
			return "", err
		}
		if d.Cmd == "end" {
			return strconv.Itoa(interruption.EffectiveHistoryEnd(h, tr)) + "\n", nil
		}
		return interruption.Detect(h, completedArg(d), tr).Describe() + "\n", nil
	case "synthetic":
		reason, _ := arg(d, "reason")
		var calls []interruption.Call
		for _, line := range strings.Split(d.Input, "\n") {
			f := strings.Fields(line)
			if len(f) == 2 {
				calls = append(calls, interruption.Call{ID: f[0], Name: f[1]})
			}
		}
		var b strings.Builder
		for _, p := range interruption.SyntheticToolResponses(calls, reason) {
			b.Write(p.Raw)
			b.WriteByte('\n')
		}
		return b.String(), nil
	case "classify":
		// classify mode=shape|provenance [keep=n]: fold records, normalise
		// the tail once, classify it.
		evs, err := histtest.ParseRecords(d.Input)
		if err != nil {
			return "", err
		}
		opts := apihistory.Options{}
		if v, ok := arg(d, "keep"); ok {
			if opts.Keep, err = strconv.Atoi(v); err != nil {
				return "", err
			}
		}
		f := apihistory.New(opts)
		for _, ev := range evs {
			if err := f.Add(ev); err != nil {
				return "", err
			}
		}
		res := f.Result()
		mode := interruption.ShapeOnly
		if v, _ := arg(d, "mode"); v == "provenance" {
			mode = interruption.Provenance
		}
		tail := interruption.ClassifiableTail(res, mode)
		var b strings.Builder
		fmt.Fprintf(&b, "trailing cold=%d completed=%v\n", res.TrailingSystemNotifications, res.CompletedToolCallIDs)
		b.WriteString(tail.Describe() + "\n")
		for _, e := range tail.TrimmedEntries {
			b.WriteString("trimmed " + e.Describe() + "\n")
		}
		b.WriteString(interruption.Classify(tail, res.CompletedToolCallIDs).Describe() + "\n")
		if interruption.TailHoldsAnyFunctionCall(tail) {
			b.WriteString("tail holds a functionCall\n")
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}
