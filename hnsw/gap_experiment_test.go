package hnsw_test

import (
	"context"
	"os"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func TestGapExperiment(t *testing.T) {
	if os.Getenv("GAP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	sets := map[string]*recall.Dataset{}
	sets["clustered-20000"] = recall.Clustered(20000, 1000, 768, 1)
	sets["uniform-20000"] = recall.Uniform(20000, 1000, 768, 1)
	for _, name := range []string{"luceneutil-minilm-384", "cohere-wiki-768-1k", "bge-m3-1024-alice-926"} {
		b, err := recall.LoadVectors("/work/shared/data/" + name + "/base.fvecs")
		if err != nil {
			t.Fatal(err)
		}
		q, _ := recall.LoadVectors("/work/shared/data/" + name + "/query.fvecs")
		sets[name] = &recall.Dataset{Name: name, Dim: len(b[0]), Metric: vector.Cosine, Base: b, Queries: q}
	}
	for name, ds := range sets {
		truth, _ := recall.GroundTruth(ctx, ds, 10)
		for _, target := range []float64{0.9, 0.95, 0.99} {
			if name == "uniform-20000" && target > 0.95 {
				continue
			}
			s, _ := vector.NewMemStore(ds.Dim, vector.Cosine)
			ix, _ := hnsw.New(s, &hnsw.Options{TargetRecall: target})
			ids := make([]vector.ID, len(ds.Base))
			for i := range ids {
				ids[i] = vector.ID(i)
			}
			if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
				t.Fatal(err)
			}
			ix.WaitCalibration()
			held, _ := ix.Calibration()
			half := len(ds.Queries) / 2
			ach := func() float64 {
				sum := 0.0
				for i, q := range ds.Queries[half:] {
					got, _ := ix.Search(ctx, q, 10, nil)
					sum += recall.At(got, truth[half+i], 10)
				}
				return sum / float64(len(ds.Queries)-half)
			}
			heldAch := ach()
			real, _ := ix.Calibrate(ctx, ds.Queries[:half])
			realAch := ach()
			// best ef by scan on the evaluation half
			best := 0
			for ef := 10; ef <= 2000; ef++ {
				sum := 0.0
				for i, q := range ds.Queries[half:] {
					got, _ := ix.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: ef})
					sum += recall.At(got, truth[half+i], 10)
				}
				if sum/float64(len(ds.Queries)-half) >= target {
					best = ef
					break
				}
				if ef >= 20 {
					ef += ef / 5
				}
			}
			t.Logf("%s target %.2f: held-out ef %d (sample %.4f, exact %v) achieves %.4f | real ef %d (sample %.4f) achieves %.4f | best ef %d", name, target, held.Ef, held.Recall, held.Exact, heldAch, real.Ef, real.Recall, realAch, best)
			s.Close()
		}
	}
}
