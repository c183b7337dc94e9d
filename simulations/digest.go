package simulations

import (
	"fmt"
	"io"
	"sort"

	"github.com/tailproof/tailproof"
)

// Digest fingerprints every verdict of a run, so a change that must not move
// any verdict (a refactor of the decision core) can be shown not to: two runs
// of the same seed and scenarios have equal digests exactly when every
// dangling prompt got the same verdict under each rule set, the same guard
// stopped every unknown one, and every restart reconciliation appended the
// same terminals. The figure does not depend on the number of workers: a
// scenario's hash is mixed with its index and the mixes are added, which is
// order-free.
type Digest struct {
	Tailproof uint64 `json:"tailproof"`
	Reference uint64 `json:"reference"`
	// Classes counts verdicts per scenario class under each rule set.
	Classes []ClassVerdicts `json:"classes"`
}

// VerdictCounts counts the verdicts given to dangling prompts.
type VerdictCounts struct {
	Completed   int `json:"completed"`
	Interrupted int `json:"interrupted"`
	Unknown     int `json:"unknown"`
	// Settled counts cancelled and error terminals taken from the prompt's
	// own turn_result (ADR 0026).
	Settled int `json:"settled,omitempty"`
}

func (c *VerdictCounts) add(v tailproof.Verdict) {
	switch v {
	case tailproof.VerdictCompleted:
		c.Completed++
	case tailproof.VerdictInterrupted:
		c.Interrupted++
	case tailproof.VerdictCancelled, tailproof.VerdictError:
		c.Settled++
	default:
		c.Unknown++
	}
}

func (c *VerdictCounts) plus(o VerdictCounts) {
	c.Completed += o.Completed
	c.Interrupted += o.Interrupted
	c.Unknown += o.Unknown
	c.Settled += o.Settled
}

// ClassVerdicts is one class's verdict counts.
type ClassVerdicts struct {
	Class     string        `json:"class"`
	Tailproof VerdictCounts `json:"tailproof"`
	Reference VerdictCounts `json:"reference"`
}

// ScenarioDigest is one scenario's share of a Digest.
type ScenarioDigest struct {
	Hash      [2]uint64 // tailproof, reference
	Tailproof VerdictCounts
	Reference VerdictCounts
}

// Write prints the digest in the form docs/digests records: one line of
// hashes, then the per-class counts.
func (g Digest) Write(w io.Writer, seed uint64, runs int) {
	fmt.Fprintf(w, "seed %d runs %d tailproof %016x reference %016x\n", seed, runs, g.Tailproof, g.Reference)
	for _, c := range g.Classes {
		t, r := c.Tailproof, c.Reference
		fmt.Fprintf(w, "  %-24s tailproof %d/%d/%d reference %d/%d/%d\n", c.Class,
			t.Completed, t.Interrupted, t.Unknown, r.Completed, r.Interrupted, r.Unknown)
	}
}

// fnv1a folds s into h (64-bit FNV-1a), with a separator so that adjacent
// strings cannot run together.
func fnv1a(h uint64, s string) uint64 {
	const prime = 1099511628211
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	h ^= 0xff
	return h * prime
}

const fnvOffset = 14695981039346656037

// mix64 is splitmix64's finalizer: it spreads a scenario's index and hash
// over all bits before the order-free sum.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// digestVerdicts hashes the verdicts of the dangling prompts (in admission
// order) under one rule set; why names the guard that stopped each unknown
// one, restart is the running hash of the timeline's restart
// reconciliations.
func digestVerdicts(dangling []string, got map[string]tailproof.Verdict, why func(id string) string, restart uint64) (uint64, VerdictCounts) {
	h := fnvOffset ^ restart
	var c VerdictCounts
	for _, id := range dangling {
		v, ok := got[id]
		if !ok {
			v = tailproof.VerdictUnknown
		}
		c.add(v)
		h = fnv1a(fnv1a(h, id), string(v))
		if v == tailproof.VerdictUnknown {
			h = fnv1a(h, why(id))
		}
	}
	return h, c
}

// restartDigest folds one restart reconciliation's appended verdicts into
// the timeline's running hash, in prompt-id order (recover returns a map).
func restartDigest(h uint64, verdicts map[string]tailproof.Verdict) uint64 {
	ids := make([]string, 0, len(verdicts))
	for id := range verdicts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h = fnv1a(h, "restart")
	for _, id := range ids {
		h = fnv1a(fnv1a(h, id), string(verdicts[id]))
	}
	return h
}

// digestAdd adds one scenario's share to the run's digest.
func (rep *Report) digestAdd(r Result, classes []ClassVerdicts) {
	for i, h := range r.Digest.Hash {
		m := mix64(mix64(uint64(r.Index)) ^ h)
		if i == 0 {
			rep.Digest.Tailproof += m
		} else {
			rep.Digest.Reference += m
		}
	}
	c := &classes[r.ClassIndex]
	c.Tailproof.plus(r.Digest.Tailproof)
	c.Reference.plus(r.Digest.Reference)
}
