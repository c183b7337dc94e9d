package ledger

import "testing"

// benchLines are the shapes a reconcile reads, with the ids and times the
// reference writes (uuid prompt ids, millisecond clocks).
var benchLines = []struct{ name, line string }{
	{"in_flight", `{"v":1,"promptId":"8e2a6c0f-4d8b-4f1e-a7c3-6b0d4f8a2e91","state":"in_flight","at":1795970463222}`},
	{"in_flight_tail", `{"v":1,"promptId":"5c9e2b7a-1d3f-4a8c-b6e4-9f0a2c7d1e58","state":"in_flight","tailUuid":"d5b9f3a7-0e4c-4f8b-a2d6-9c3e7a1b5f02","at":1795961140115}`},
	{"terminal_stop", `{"v":1,"promptId":"e3a1f9c2-7b4d-4f0e-9a6c-2d8b5e1f7a30","terminal":"completed","stopReason":"end_turn","at":1795960939024}`},
	{"terminal_code", `{"v":1,"promptId":"a1b2c3d4-0000-4000-8000-00000000000a","terminal":"interrupted","code":"prompt_deadline_exceeded","at":1796000300000}`},
}

// BenchmarkDecode compares Decode with decodeOracle, the encoding/json
// implementation it replaced, line shape by line shape.
func BenchmarkDecode(b *testing.B) {
	impls := []struct {
		name string
		fn   func([]byte) (Record, error)
	}{{"scanner", Decode}, {"oracle", decodeOracle}}
	for _, impl := range impls {
		for _, l := range benchLines {
			line := []byte(l.line)
			b.Run(impl.name+"/"+l.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(line)))
				for b.Loop() {
					if _, err := impl.fn(line); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
