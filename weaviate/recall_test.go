// This file holds the recall test of the cluster's HNSW against cairn's
// exact flat index, on the clustered synthetic data set (package recall).

package weaviate

import (
	"context"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/internal/memorytest"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestClusterRecall builds clustered-10000 (768-d, cosine) in an HNSW
// index on the cluster (3 shards, replication 2, Weaviate's default ef)
// and requires recall@10 ≥ 0.95 against cairn's exact flat search.
func TestClusterRecall(t *testing.T) {
	db := openCluster(t, nil)
	ctx := context.Background()
	const n, nq, dim, k = 10000, 200, 768, 10
	ds := recall.Clustered(n, nq, dim, 1)

	ms, err := vector.NewMemStore(dim, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	exact := flat.New(ms)
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := exact.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}

	name := memorytest.Name(t)
	ix, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: dim, Metric: vector.Cosine, Index: cairn.HNSW})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.DropIndex(context.Background(), name) })
	const chunk = 1000
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		if err := ix.AddBatch(ctx, ids[start:end], ds.Base[start:end]); err != nil {
			t.Fatalf("AddBatch [%d, %d): %v", start, end, err)
		}
	}
	if got := ix.Len(); got != n {
		t.Fatalf("Len = %d, want %d", got, n)
	}
	var sum float64
	for _, q := range ds.Queries {
		want, err := exact.Search(ctx, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		truth := make([]int32, len(want))
		for i, w := range want {
			truth[i] = int32(w.ID)
		}
		got, err := ix.Search(ctx, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum += recall.At(got, truth, k)
	}
	r := sum / nq
	t.Logf("recall@%d of the cluster's HNSW vs exact flat on clustered-%d (%d-d, %d queries): %.4f", k, n, dim, nq, r)
	if r < 0.95 {
		t.Fatalf("recall@%d = %.4f, want >= 0.95", k, r)
	}
}
