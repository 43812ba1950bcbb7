// This file holds the test of the real measurement a routed Auto
// collection makes when small: a scan on uniform data, the graph on data
// with structure.

package cairn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestRoutedSmallCollections runs the real measurement on small 768-d
// collections with the routed default threshold: uniform data stays a
// scan (no beam width short of scoring half the vectors reaches the
// target, so the graph is not a candidate), and clustered data, where a
// graph query costs a fraction of the scan (about a quarter, measured in
// the same process, alternating), moves to the graph. The second depends
// on timing with that margin, so it is skipped under the race detector,
// which slows the graph's Go code and not the scan's assembly.
func TestRoutedSmallCollections(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures two 1,500 × 768 collections")
	}
	ctx := context.Background()
	const n, dim = 1500, 768
	for _, tc := range []struct {
		name  string
		ds    *recall.Dataset
		graph bool
	}{
		{"uniform", recall.Uniform(n, 0, dim, 5), false},
		{"low intrinsic dimension", lowRank(n, dim, 16, 5), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.graph && cairn.RaceEnabled {
				t.Skip("a timing margin the race detector distorts")
			}
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, HNSW: hnsw.Options{TargetRecall: 0.95}})
			if err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < n; lo += 250 {
				items := make([]cairn.Item, 0, 250)
				for i := lo; i < lo+250; i++ {
					items = append(items, cairn.Item{ID: fmt.Sprint("k", i), Embedding: tc.ds.Base[i]})
				}
				if err := c.Add(ctx, items...); err != nil {
					t.Fatal(err)
				}
			}
			c.WaitRoutedForTest() // the measurement at 1,000 items runs in the background
			info := cairn.MustInfo(t, c)
			if got := info.Index == cairn.HNSW; got != tc.graph {
				t.Fatalf("%s, %d items: index %v (calibration %+v), want the graph: %v", tc.name, n, info.Index, info.Recall.Calibration, tc.graph)
			}
			res, err := c.Query(ctx, tc.ds.Base[11], 1, nil)
			if err != nil || len(res) != 1 || res[0].ID != "k11" {
				t.Fatalf("query for a stored vector: %v, %v", res, err)
			}
		})
	}
}

// lowRank returns n vectors of dimension dim near a random subspace
// of dimension rank: Gaussian combinations of rank random directions,
// plus a little noise in every component.
func lowRank(n, dim, rank int, seed uint64) *recall.Dataset {
	r := rand.New(rand.NewPCG(seed, 1))
	basis := make([][]float32, rank)
	for i := range basis {
		basis[i] = make([]float32, dim)
		for j := range basis[i] {
			basis[i][j] = float32(r.NormFloat64())
		}
	}
	ds := &recall.Dataset{Dim: dim, Metric: vector.Cosine}
	for range n {
		v := make(vector.Vector, dim)
		for _, b := range basis {
			c := float32(r.NormFloat64())
			for j := range v {
				v[j] += c * b[j]
			}
		}
		for j := range v {
			v[j] += float32(0.05 * r.NormFloat64())
		}
		ds.Base = append(ds.Base, v) // the cosine metric normalises it
	}
	return ds
}
