package hnsw_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func readSet(t *testing.T, dir string) (base, queries []vector.Vector) {
	t.Helper()
	read := func(name string) []vector.Vector {
		f, err := os.Open(filepath.Join("..", "testdata", dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		vs, err := recall.ReadFvecs(f)
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, name, err)
		}
		return vs
	}
	return read("base.fvecs"), read("query.fvecs")
}

// TestRealEmbeddings checks recall@10 of the default index on real model
// output against float64 ground truth, under every metric. The Cohere
// vectors are not normalised (norms 12 to 15), so the three metrics rank
// them differently; the bge-m3 vectors are unit length.
func TestRealEmbeddings(t *testing.T) {
	for _, set := range []struct {
		dir     string
		metrics []vector.Metric
	}{
		{"cohere-wiki-768-1k", []vector.Metric{vector.Dot, vector.Cosine, vector.L2}},
		{"bge-m3-1024-alice-926", []vector.Metric{vector.Cosine}},
	} {
		base, queries := readSet(t, set.dir)
		for _, m := range set.metrics {
			t.Run(set.dir+"/"+m.String(), func(t *testing.T) {
				ds := &recall.Dataset{Name: set.dir, Dim: len(base[0]), Metric: m, Base: base, Queries: queries}
				truth, err := recall.GroundTruth(context.Background(), ds, 10)
				if err != nil {
					t.Fatal(err)
				}
				s, err := vector.NewMemStore(ds.Dim, m)
				if err != nil {
					t.Fatal(err)
				}
				idx, err := hnsw.New(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]vector.ID, len(base))
				for i := range ids {
					ids[i] = vector.ID(i)
				}
				ctx := context.Background()
				if err := idx.AddBatch(ctx, ids, base); err != nil {
					t.Fatal(err)
				}
				if err := idx.Verify(); err != nil {
					t.Fatal(err)
				}
				var sum float64
				for i, q := range queries {
					got, err := idx.Search(ctx, q, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					sum += recall.At(got, truth[i], 10)
				}
				rec := sum / float64(len(queries))
				t.Logf("recall@10 = %.3f", rec)
				// Under a thousand vectors the default ef of 64 searches
				// a good part of the graph; anything below this bound is
				// a bug, not a tuning matter.
				if rec < 0.97 {
					t.Errorf("recall@10 = %.3f on %s under %v, want >= 0.97", rec, set.dir, m)
				}
			})
		}
	}
}
