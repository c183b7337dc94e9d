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
		// Not streaming: the fragments read of chain positions not yet
		// emitted. A position is emitted as soon as it and every one
		// before it has all its fragments, so only records read ahead of
		// their turn are held (ADR 0039, amendment of 2026-12-02).
		pending = map[uint32][]events.Event{}
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
	// flush emits the complete positions from emitted on.
	flush := func() error {
		for emitted < c.Len {
			fs := pending[uint32(emitted)]
			if len(fs) == 0 || len(fs) < c.fragments(uint32(emitted)) {
				return nil
			}
			delete(pending, uint32(emitted))
			rec := aggregate(fs)
			for _, f := range fs[1:] {
				if u := f.Body.(*Record).UUID; u != rec.UUID {
					c.collision(-1, u, rec.UUID)
					return fmt.Errorf("qwen: chain record %d: %w", emitted, ErrHashCollision)
				}
			}
			if err := linkOK(emitted, rec); err != nil {
				return err
			}
			if fnErr = fn(emitted, Envelope(rec, fs[0].Pos)); fnErr != nil {
				return errStop
			}
			emitted++
		}
		return nil
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
				pending[w.pos] = append(pending[w.pos], Envelope(pr.rec, pos))
				if int(w.pos) == emitted {
					if err := flush(); err != nil {
						return err
					}
				}
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
	return nil
}

// fragments is the number of objects chain position pos aggregates.
func (c *Chain) fragments(pos uint32) int {
	if n, ok := c.multi[pos]; ok {
		return int(n)
	}
	return 1
}

func bitSet(bits []uint64, i uint32) bool {
	return int(i>>6) < len(bits) && bits[i>>6]&(1<<(i&63)) != 0
}
