package simulations

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/tailproof/tailproof"
)

// A run's digest is pinned: any change that moves a verdict, the guard that
// stopped an unknown prompt, or a restart's terminals changes it. The long
// check (seeds 1-4, 200,000 scenarios each) is in docs/digests.md.
func TestDigestPinned(t *testing.T) {
	const seed, runs = 1, 20000
	want, err := os.ReadFile("testdata/digests/seed1-20k.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), Config{Seed: seed, Runs: runs, Workers: 2})
	var got bytes.Buffer
	rep.Digest.Write(&got, seed, rep.Scenarios)
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("digest moved (if a verdict change is intended, record the new digest and say why):\n got %s\nwant %s", got.Bytes(), want)
	}
}

// The digest does not depend on the number of workers, and a different
// verdict changes it.
func TestDigestIndependentOfWorkers(t *testing.T) {
	a := Run(context.Background(), Config{Seed: 3, Runs: 3000, Workers: 1}).Digest
	b := Run(context.Background(), Config{Seed: 3, Runs: 3000, Workers: 3}).Digest
	if a.Tailproof != b.Tailproof || a.Reference != b.Reference {
		t.Fatalf("digests differ by workers: %x/%x vs %x/%x", a.Tailproof, a.Reference, b.Tailproof, b.Reference)
	}
	h1, _ := digestVerdicts([]string{"p1", "p2"}, map[string]tailproof.Verdict{"p1": "completed"}, func(string) string { return "race" }, 0)
	h2, _ := digestVerdicts([]string{"p1", "p2"}, map[string]tailproof.Verdict{"p1": "interrupted"}, func(string) string { return "race" }, 0)
	h3, _ := digestVerdicts([]string{"p1", "p2"}, map[string]tailproof.Verdict{"p1": "completed"}, func(string) string { return "ownership" }, 0)
	if h1 == h2 || h1 == h3 {
		t.Fatal("a different verdict or unknown-reason left the hash unchanged")
	}
}
