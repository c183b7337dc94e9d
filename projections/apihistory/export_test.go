package apihistory

// NewFingerprinted is New in fingerprint mode with the fingerprint function
// and the size of the exact recent set injected, so tests can force
// collisions and retirements.
func NewFingerprinted(opts Options, hash func(string) uint64, recent int) *Fold {
	f := New(opts)
	f.fp = newFPCounts(hash, recent)
	return f
}
