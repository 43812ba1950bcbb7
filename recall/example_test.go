package recall_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// Generate a small clustered data set, compute its exact ground truth, and
// score an answer against it.
func ExampleGroundTruth() {
	ctx := context.Background()
	ds := recall.Clustered(1000, 5, 32, 1)
	truth, err := recall.GroundTruth(ctx, ds, 10)
	if err != nil {
		panic(err)
	}
	fmt.Println(ds.Name, len(ds.Base), len(ds.Queries), ds.Metric)

	// An answer holding the true top 10 of query 0 except its last one.
	var got []vector.Result
	for _, p := range truth[0][:9] {
		got = append(got, vector.Result{ID: vector.ID(p)})
	}
	got = append(got, vector.Result{ID: 999999})
	fmt.Printf("recall@10 = %.2f\n", recall.At(got, truth[0], 10))
	// Output:
	// clustered-1000-d32 1000 5 cosine
	// recall@10 = 0.90
}

// Write vectors as .fvecs, the format of the TEXMEX benchmarks, and read
// them back.
func ExampleWriteFvecs() {
	ds := recall.Uniform(3, 0, 4, 1)
	var buf bytes.Buffer
	if err := recall.WriteFvecs(&buf, ds.Base); err != nil {
		panic(err)
	}
	fmt.Println(buf.Len(), "bytes") // 3 × (4 + 4×4)
	vs, err := recall.ReadFvecs(&buf)
	fmt.Println(len(vs), len(vs[0]), err)
	// Output:
	// 60 bytes
	// 3 4 <nil>
}

// Measure an index: build it from a data set, then report recall and
// latency against the ground truth.
func ExampleMeasure() {
	ctx := context.Background()
	ds := recall.Clustered(500, 20, 16, 1)
	truth, _ := recall.GroundTruth(ctx, ds, 10)

	store, _ := vector.NewMemStore(ds.Dim, ds.Metric)
	idx := &scanIndex{s: store} // any vector.Index: flat, hnsw, ...
	if _, err := recall.Build(ctx, idx, ds.Base, nil); err != nil {
		panic(err)
	}
	st, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{K: 10})
	if err != nil {
		panic(err)
	}
	fmt.Printf("recall@10 %.3f over %d queries\n", st.Recall[10], st.Queries)
	// Output: recall@10 1.000 over 20 queries
}

// Read an ann-benchmarks HDF5 file and check its ground truth against
// the exact one.
func ExampleLoadHDF5() {
	ctx := context.Background()
	a, err := recall.LoadHDF5(ctx, "../internal/hdf5/testdata/ann-contiguous.hdf5")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Name, a.Distance, a.Metric, len(a.Base), len(a.Queries), a.Dim, len(a.Neighbors[0]))
	chk, err := recall.CheckTruth(ctx, a.Dataset, a.Neighbors, 10, 5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d queries checked, %d differ\n", chk.Queries, chk.Differing)
	// Output:
	// ann-contiguous angular cosine 300 20 24 100
	// 5 queries checked, 0 differ
}
