// This file holds BenchmarkSelectExperiment, which replays the neighbour
// selections of real inserts under the two variants of experiment.
package hnsw

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkSelectExperiment builds clustered data (n = 20,000, M = 16,
// EfConstruction = 200), takes the layer-0 candidate lists an insert of
// each of 2,000 of its vectors would select from, and times
// selectNeighbors over them with experiment 0 and 1, alternating, in one
// process; it reports their ratio v1/v0. (Branch on experiment in
// selectNeighbors to compare two versions; the gathered checks were
// measured so against one kernel call a pair.)
func BenchmarkSelectExperiment(b *testing.B) {
	for _, dim := range []int{100, 768} {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds := recall.Clustered(20000, 10, dim, 1)
			s, err := vector.NewMemStore(ds.Dim, ds.Metric)
			if err != nil {
				b.Fatal(err)
			}
			ix, err := New(s, nil)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]vector.ID, len(ds.Base))
			for i := range ids {
				ids[i] = vector.ID(i)
			}
			if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
				b.Fatal(err)
			}
			sc := ix.getScratch()
			var lists [][]cand
			for i := 0; i < len(ds.Base); i += 10 {
				v, err := ix.storedVector(vector.ID(i))
				if err != nil {
					b.Fatal(err)
				}
				ep, _, _ := ix.entry()
				sc.ent = append(sc.ent[:0], cand{ix.dist(v, ix.vec(ep)), ep})
				ix.searchLayer(sc, source{q: v}, sc.ent, ix.opts.EfConstruction, ix.opts.EfConstruction, 0, false, nil, nil)
				lists = append(lists, append([]cand(nil), sc.w[1:]...))
			}
			defer SetExperiment(0)
			var total [2]time.Duration
			var out []cand
			i := 0
			for b.Loop() {
				e := i % 2
				SetExperiment(e)
				start := time.Now()
				for _, l := range lists {
					out = ix.selectNeighbors(sc, l, ix.m, out)
				}
				total[e] += time.Since(start)
				i++
			}
			if total[0] > 0 && total[1] > 0 {
				b.ReportMetric(float64(total[1])/float64(total[0]), "v1/v0")
			}
		})
	}
}
