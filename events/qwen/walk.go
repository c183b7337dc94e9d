package qwen

import (
	"errors"
	"fmt"

	"github.com/tailproof/tailproof/events"
)

// Walk is pass 2: it calls fn with each active-chain record in chain order
// (fragments aggregated), i from 0 to Len-1. Every link is checked against
// the real uuid strings; a mismatch (a hash collision) appends a
// DiagHashCollision diagnostic and returns ErrHashCollision before any
// record past the mismatch is emitted. Objects off the chain are read
// without building a Record; reading stops at the leaf.
func (c *Chain) Walk(open Opener, fn func(i int, ev events.Event) error) error {
	if c.Len == 0 {
		return nil
	}
	if c.onChain == nil && len(c.want) == 0 {
		return errors.New("qwen: Walk needs a chain built by LoadChain or Scan")
	}
	p := getParser(c.opts.Decode, false)
	defer putParser(p)
	res := &p.res
	var (
		ord     uint32
		wi      int // next want (not streaming)
		emitted int
		prev    string // uuid of the last emitted record
		frags   [][]events.Event
		fnErr   error
		linkOK  = func(k int, r *Record) error {
			if k > 0 && r.ParentUUID != prev {
				c.collision(-1, r.ParentUUID, prev)
				return fmt.Errorf("qwen: chain link %d: %w", k, ErrHashCollision)
			}
			if k == c.Len-1 && r.UUID != c.LeafUUID {
				c.collision(-1, r.UUID, c.LeafUUID)
				return fmt.Errorf("qwen: chain leaf: %w", ErrHashCollision)
			}
			prev = r.UUID
			return nil
		}
	)
	if !c.Streaming {
		frags = make([][]events.Event, c.Len)
	}
	p.selective, p.wantBits, p.wanted = true, c.onChain, nil
	err := readLines(open, c.opts.MaxLineBytes, nil, func(line events.Line) error {
		p.lineOrd = ord
		if !c.Streaming {
			p.wanted = c.want[wi:]
		}
		p.decodeLine(line.Bytes, res)
		for i := range res.recs {
			pr := &res.recs[i]
			o := ord
			ord++
			pos := events.Position{Line: line.Pos.Line, Offset: line.Pos.Offset + int64(pr.start)}
			if c.Streaming {
				if !bitSet(c.onChain, o) {
					continue
				}
				if code, _ := identityProblem(pr); code != "" || pr.rec == nil {
					return fmt.Errorf("qwen: record #%d: %w", o, ErrChanged)
				}
				if err := linkOK(emitted, pr.rec); err != nil {
					return err
				}
				if fnErr = fn(emitted, Envelope(pr.rec, pos)); fnErr != nil {
					return errStop
				}
				emitted++
				continue
			}
			for wi < len(c.want) && c.want[wi].ord == o {
				w := c.want[wi]
				wi++
				if code, _ := identityProblem(pr); code != "" || pr.rec == nil {
					return fmt.Errorf("qwen: record #%d: %w", o, ErrChanged)
				}
				frags[w.pos] = append(frags[w.pos], Envelope(pr.rec, pos))
			}
		}
		if c.Streaming && emitted == c.Len || !c.Streaming && wi == len(c.want) {
			return errStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	if fnErr != nil {
		return fnErr
	}
	if c.Streaming {
		if emitted < c.Len {
			return fmt.Errorf("qwen: %d chain records not found: %w", c.Len-emitted, ErrChanged)
		}
		return nil
	}
	if wi < len(c.want) {
		return fmt.Errorf("qwen: %d chain records not found: %w", len(c.want)-wi, ErrChanged)
	}
	for k, fs := range frags {
		rec := aggregate(fs)
		for _, f := range fs[1:] {
			if u := f.Body.(*Record).UUID; u != rec.UUID {
				c.collision(-1, u, rec.UUID)
				return fmt.Errorf("qwen: chain record %d: %w", k, ErrHashCollision)
			}
		}
		if err := linkOK(k, rec); err != nil {
			return err
		}
		if err := fn(k, Envelope(rec, fs[0].Pos)); err != nil {
			return err
		}
		frags[k] = nil
	}
	return nil
}

func bitSet(bits []uint64, i uint32) bool {
	return int(i>>6) < len(bits) && bits[i>>6]&(1<<(i&63)) != 0
}
