package recall_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/recall"
)

func BenchmarkClustered(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("n=%d/dim=768", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				recall.Clustered(n, 1000, 768, 1)
			}
		})
	}
}

func BenchmarkGroundTruth(b *testing.B) {
	for _, n := range []int{10000} {
		ds := recall.Clustered(n, 100, 768, 1)
		b.Run(fmt.Sprintf("n=%d/nq=100/dim=768", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recall.GroundTruth(context.Background(), ds, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*len(ds.Queries)*768)/b.Elapsed().Seconds()*float64(b.N)/1e9, "Gmac/s")
		})
	}
}
