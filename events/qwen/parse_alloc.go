package qwen

// Allocation shapes of a record: the record, its message and up to two
// parts in one object, since they live and die together.
type recordMsg struct {
	rec Record
	msg Content
}

type recordMsg1 struct {
	rec  Record
	msg  Content
	part [1]Part
}

type recordMsg2 struct {
	rec  Record
	msg  Content
	part [2]Part
}

// newRecord allocates a record, with a message when hasMsg, holding n parts
// (n < 0: parts is not an array, and Parts stays nil).
func newRecord(hasMsg bool, n int) (*Record, []Part) {
	if !hasMsg {
		return new(Record), nil
	}
	var (
		r     *Record
		parts []Part
	)
	switch {
	case n == 1:
		blk := new(recordMsg1)
		r, parts = &blk.rec, blk.part[:]
		r.Message = &blk.msg
	case n == 2:
		blk := new(recordMsg2)
		r, parts = &blk.rec, blk.part[:]
		r.Message = &blk.msg
	default:
		blk := new(recordMsg)
		r = &blk.rec
		r.Message = &blk.msg
		if n >= 0 {
			parts = make([]Part, n)
		}
	}
	r.Message.Parts = parts
	return r, parts
}
