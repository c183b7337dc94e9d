package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkScanLedger is the CLI's extra pass over a ledger, on the two
// shapes it meets: a real ledger (admissions and terminals) and a file of
// random bytes given as one.
//
//	go test -run '^$' -bench ScanLedger ./cmd/tailproof/internal/cli
func BenchmarkScanLedger(b *testing.B) {
	var records bytes.Buffer
	for i := 0; records.Len() < 1<<20; i++ {
		fmt.Fprintf(&records, `{"v":1,"promptId":"prompt-%06d","state":"in_flight","tailUuid":"u-%06d","at":%d}`+"\n", i, i, 1767225600000+int64(i))
		fmt.Fprintf(&records, `{"v":1,"promptId":"prompt-%06d","terminal":"completed","stopReason":"end_turn","at":%d}`+"\n", i, 1767225600001+int64(i))
	}
	random := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"records", records.Bytes()}, {"random", random}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := ScanLedger(bytes.NewReader(c.data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
