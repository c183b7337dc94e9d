package jsonscan

import (
	"testing"

	"github.com/tailproof/tailproof/simulations/bench/shape"
)

// BenchmarkString validates the tool outputs of each content shape of
// simulations/bench/shape as JSON strings (4 MiB of each), the bytes that
// dominate a transcript.
func BenchmarkString(b *testing.B) {
	for _, name := range shape.Names {
		b.Run(name, func(b *testing.B) {
			outs, err := shape.Outputs(shape.Options{Shape: name, Bytes: 4 << 20, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			var docs [][]byte
			size := 0
			for _, turn := range outs {
				for _, o := range turn {
					doc := []byte(shape.Quote(o) + `,"next":1}`)
					docs = append(docs, doc)
					size += len(doc)
				}
			}
			b.SetBytes(int64(size))
			cpu := shape.CPUSeconds()
			for b.Loop() {
				for _, d := range docs {
					if _, _, _, err := String(d, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			if used := shape.CPUSeconds() - cpu; used > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/1e6/used, "MB/cpu-s")
			}
		})
	}
}
