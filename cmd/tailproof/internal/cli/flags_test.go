package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestFlagSetContract(t *testing.T) {
	mk := func() (*FlagSet, *int) {
		fs := NewFlagSet("x", "usage: tailproof x [--runs N]")
		return fs, fs.Int("runs", 10, "how many")
	}
	var out bytes.Buffer
	for _, help := range []string{"-h", "--help", "-help"} {
		out.Reset()
		fs, _ := mk()
		if err := fs.Parse([]string{help}, &out); !errors.Is(err, errHelp) {
			t.Fatalf("%s: %v", help, err)
		}
		if !strings.HasPrefix(out.String(), "usage: tailproof x [--runs N]\n") || !strings.Contains(out.String(), "-runs") || !strings.Contains(out.String(), "exit codes:") {
			t.Fatalf("%s printed %q", help, out.String())
		}
	}
	for args, want := range map[string]string{
		"--runs=x":  `invalid value "x" for flag -runs: parse error (see tailproof x --help)`,
		"--nope":    "flag provided but not defined: -nope (see tailproof x --help)",
		"stray":     `unexpected argument "stray" (see tailproof x --help)`,
		"--runs":    "flag needs an argument: -runs (see tailproof x --help)",
		"--runs=-1": "",
	} {
		fs, _ := mk()
		out.Reset()
		err := fs.Parse(strings.Fields(args), &out)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", args, err)
			}
			continue
		}
		if Code(err, Internal) != Usage || err.Error() != want || out.Len() != 0 {
			t.Errorf("%s: %v (code %d, stdout %q), want %q", args, err, Code(err, Internal), out.String(), want)
		}
	}
	fs, runs := mk()
	if fs.Parse([]string{"--runs", "3"}, &out) != nil || *runs != 3 || !fs.Given("runs") {
		t.Fatal("parse --runs 3")
	}
}

func TestValueChecksNameTheFlag(t *testing.T) {
	if err := AtLeast("--runs", 0, 1); Code(err, Internal) != Usage || err.Error() != "--runs must be at least 1, got 0" {
		t.Fatal(err)
	}
	if AtLeast("--runs", 1, 1) != nil {
		t.Fatal("1 is at least 1")
	}
	for _, bad := range []int64{-5, 0, MaxUnixMillis + 1, 1<<63 - 1} {
		if err := UnixMillis("--now", bad); Code(err, Internal) != Usage || !strings.HasPrefix(err.Error(), "--now must be") {
			t.Errorf("--now %d: %v", bad, err)
		}
	}
	for _, ok := range []int64{1, 1767225600000, MaxUnixMillis} {
		if err := UnixMillis("--now", ok); err != nil {
			t.Errorf("--now %d: %v", ok, err)
		}
	}
}
