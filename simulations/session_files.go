package simulations

import (
	"context"
	"errors"
	"io/fs"
)

// SessionFiles runs model run run of seed through all its actions (its
// crashes and restarts included, no final crash) and returns the session's
// ledger and transcript as they stand on the model's disk: a corpus of
// realistic sessions for tests that replay them (replay --crash-at all's
// differential test). A file the run never created is nil.
func SessionFiles(ctx context.Context, seed uint64, run int) (ledger, transcript []byte, err error) {
	src := modelRand(seed, run)
	n := src.IntN(40) + 8 // runLen's draw
	prof, ver := runClass(run)
	d := NewDaemon(ctx, src, prof, ver)
	for range n {
		d.act(d.choose())
	}
	if len(d.violations) > 0 {
		return nil, nil, errors.New("simulations: " + d.violations[0])
	}
	read := func(p string) ([]byte, error) {
		b, err := d.mem.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	if ledger, err = read(d.lpath); err != nil {
		return nil, nil, err
	}
	transcript, err = read(d.tpath)
	return ledger, transcript, err
}
