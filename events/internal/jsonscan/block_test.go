package jsonscan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// stringWith is String with the vector block skipper on or off. Off amd64
// (and under purego) "on" runs vectorBlocks over classifyBytes, so its
// logic is held to the same checks on every architecture.
func stringWith(vector bool, b []byte, i int) (int, bool, bool, error) {
	defer func(v bool) { useVector = v }(useVector)
	useVector = vector
	return String(b, i)
}

// classify64 (the AVX2 code where built) against classifyBytes: every byte
// value at every position of a block among random neighbours, and random
// blocks drawn from the bytes the masks tell apart.
func TestClassify64(t *testing.T) {
	t.Logf("vector code: %v", haveVector)
	r := rand.New(rand.NewPCG(9, 10))
	check := func(blk *[64]byte) {
		bs, stop, odd, high := classify64(blk)
		wbs, wstop, wodd, whigh := classifyBytes(blk)
		if bs != wbs || stop != wstop || odd != wodd || high != whigh {
			t.Fatalf("classify64(%q) = %064b %064b %064b %064b\nwant                %064b %064b %064b %064b",
				blk[:], bs, stop, odd, high, wbs, wstop, wodd, whigh)
		}
	}
	var blk [64]byte
	for pos := range 64 {
		for c := range 256 {
			for k := range blk {
				blk[k] = byte(r.Uint32())
			}
			blk[pos] = byte(c)
			check(&blk)
		}
	}
	const marks = "\"\\/bfnrtu\x00\x1f\x20\x21\x7f\x80\xff\x0f\xf0\x2f\x5c\x62\xe2ax"
	for range 1 << 16 {
		for k := range blk {
			blk[k] = marks[r.IntN(len(marks))]
		}
		check(&blk)
	}
	// Every byte value at once, in every order of the 256 across 4 blocks.
	var all [256]byte
	for c := range all {
		all[c] = byte(c)
	}
	for range 64 {
		r.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
		for q := range 4 {
			copy(blk[:], all[64*q:])
			check(&blk)
		}
	}
}

// The vector block skipper's hard cases, each at every offset from a
// block's start: backslash runs of every length across a block's edge, a
// \u escape whose digits cross into the next block or run off the input,
// an escaped control byte, a control byte or invalid UTF-8 after a clean
// block, and the closing quote as a block's first and last byte.
func TestVectorBlockEdges(t *testing.T) {
	var marks []string
	for n := 1; n <= 70; n++ {
		marks = append(marks, strings.Repeat(`\`, n)+`"`, strings.Repeat(`\`, n)+"n", strings.Repeat(`\`, n)+"\x01")
	}
	marks = append(marks, `\u00e9`, `\u00E`, `\u`, `\u00"`, `\u\\\\`, `\uD83D\uDE00`, "\\\x1f", "\\\xc3\xa9",
		"\x00", "\x1f", "\x7f", "\xff\xfe", "\xc3", "\xe2\x82", `\/`, `\b\f\r\t`, `\a`, `\'`, `"`)
	for _, mark := range marks {
		for pad := range 130 {
			body := strings.Repeat("a", pad) + mark + strings.Repeat("b", 3)
			for _, tail := range []string{`"`, `"` + strings.Repeat(" ", 90), strings.Repeat("c", 66) + `"` + strings.Repeat(" ", 90), ""} {
				s := `"` + body + tail
				checkString(t, []byte(s))
			}
		}
	}
}

// FuzzClassify64: the vector classifier and classifyBytes on any 64 bytes
// (the input, repeated to a block's length).
func FuzzClassify64(f *testing.F) {
	f.Add([]byte(`"\\/bfnrtu` + "\x00\x1f\x7f\x80\xff"))
	f.Add([]byte(strings.Repeat(`\"`, 32)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		var blk [64]byte
		for k := range blk {
			blk[k] = data[k%len(data)]
		}
		bs, stop, odd, high := classify64(&blk)
		wbs, wstop, wodd, whigh := classifyBytes(&blk)
		if bs != wbs || stop != wstop || odd != wodd || high != whigh {
			t.Fatalf("classify64(%q) = %x %x %x %x, want %x %x %x %x", blk[:], bs, stop, odd, high, wbs, wstop, wodd, whigh)
		}
	})
}

// checkPlainBlocks holds plainBlocks (the AVX2 loop where built) to
// plainBlocksSpec from every offset of data, with either carry in.
func checkPlainBlocks(t *testing.T, data []byte) {
	t.Helper()
	for i := range data {
		for carry := range uint64(2) {
			j, c, seen, high, bs, stop, odd, bh := plainBlocks(data, i, carry)
			wj, wc, wseen, whigh, wbs, wstop, wodd, wbh := plainBlocksSpec(data, i, carry)
			if j != wj || c != wc || seen != wseen || (high != 0) != (whigh != 0) || bs != wbs || stop != wstop || odd != wodd || bh != wbh {
				t.Fatalf("plainBlocks(%q, %d, %d) = %d %d %x %x %x %x %x %x\nwant %d %d %x %x %x %x %x %x",
					data, i, carry, j, c, seen, high, bs, stop, odd, bh, wj, wc, wseen, whigh, wbs, wstop, wodd, wbh)
			}
		}
	}
}

// The plain-block loop against its specification: strings of the pieces
// that end or refuse a run (quotes, control bytes, escaped or not; \u;
// backslash runs across blocks; non-ASCII bytes) between runs of plain
// bytes long enough to pass several blocks.
func TestPlainBlocks(t *testing.T) {
	t.Logf("vector code: %v", haveVector)
	r := rand.New(rand.NewPCG(11, 12))
	pieces := append([]string{strings.Repeat("p", 64), strings.Repeat("q", 130), "\xc3\xa9" + strings.Repeat("r", 70)}, stringPieces...)
	for range 3000 {
		var b strings.Builder
		for n := r.IntN(12); n >= 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		checkPlainBlocks(t, []byte(b.String()))
	}
	for n := 1; n <= 130; n++ {
		for _, end := range []string{`"`, "n", "u0041", "\x01", "\x80"} {
			checkPlainBlocks(t, []byte(strings.Repeat("a", 150-n%64)+strings.Repeat(`\`, n)+end+strings.Repeat("z", 140)))
		}
	}
}

// FuzzPlainBlocks: the plain-block loop and its specification on any
// input (repeated to at least three blocks).
func FuzzPlainBlocks(f *testing.F) {
	f.Add([]byte(`abc\\\"def\u0041` + "\x00\xff"))
	f.Add([]byte(strings.Repeat(`\n\t`, 20) + `"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 1<<12 {
			return
		}
		b := data
		for len(b) < 200 {
			b = append(b, data...)
		}
		checkPlainBlocks(t, b)
	})
}
