package hnsw_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkWalkExperiment alternates queries between the two variants of
// hnsw's experiment knob (see alternate) on every kind of walk: the
// float32 and the int8 walk of one graph (quantPair), each without a
// filter (the sorted-array walk) and with one that allows half the
// vectors (the two-heap layer search), at ef 16, 64 and 256. It reports
// v1/v0 and each variant's median latency. Run it with HNSW_BENCH_N for
// another size, and -run '^$' to leave the tests out.
func BenchmarkWalkExperiment(b *testing.B) {
	for _, dim := range []int{100, 768} {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds, _ := datasetDim(b, lowDimN(b), dim)
			ixs := quantPair(b, ds)
			half := halfFilter{}
			for v, walk := range []string{"float32", "int8"} {
				for _, filtered := range []bool{false, true} {
					for _, ef := range []int{16, 64, 256} {
						name := fmt.Sprintf("%s/filter=%v/ef=%d", walk, filtered, ef)
						b.Run(name, func(b *testing.B) {
							defer hnsw.SetExperiment(0)
							o := &hnsw.SearchOptions{Ef: ef}
							if filtered {
								o.Filter = half
							}
							on := func(x int) func([]float32) error {
								return func(q []float32) error {
									hnsw.SetExperiment(x)
									_, err := ixs[v].SearchWith(context.Background(), q, 10, o)
									return err
								}
							}
							alternate(b, ds, ef, "v1/v0", [2]func([]float32) error{on(0), on(1)})
						})
					}
				}
			}
		})
	}
}

// halfFilter allows the even ids.
type halfFilter struct{}

func (halfFilter) Allow(id vector.ID) bool { return id%2 == 0 }
