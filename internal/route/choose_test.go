package route

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestChoose runs the real measurement: a sanity check of the mechanism,
// not a timing. Whatever it chooses answers queries, and the graph it was
// given has calibrated.
func TestChoose(t *testing.T) {
	ctx := context.Background()
	st, err := vector.NewMemStore(16, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := hnsw.New(st, &hnsw.Options{TargetRecall: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	ds := recall.Clustered(800, hnsw.MinRealQueries, 16, 4)
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	// Queries recorded before the build, as a collection's measurement
	// records those its scan answered: the calibration the build ends
	// with measures on them, and Choose takes it.
	if err := g.RecordQueries(ds.Queries); err != nil {
		t.Fatal(err)
	}
	if err := g.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	built, ok, err := g.WaitCalibration(ctx)
	if err != nil || !ok || built.Source != hnsw.SourceQueries {
		t.Fatalf("calibration the build ended with: %+v, %v, %v; want one on the recorded queries", built, ok, err)
	}
	r, err := Choose(ctx, g, st, ids, nil, ds.Queries, false)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Calibration(); c != built {
		t.Errorf("Choose calibrated again (%+v) after the build's calibration on the queries (%+v)", c, built)
	}
	if !slices.Contains([]Kind{Flat, HNSW, QFlat}, r.Kind) || r.Index == nil {
		t.Fatalf("verdict %+v", r)
	}
	res, err := r.Index.Search(ctx, ds.Base[7], 1, nil)
	if err != nil || len(res) != 1 || res[0].ID != ids[7] {
		t.Fatalf("%v search for a stored vector: %v, %v", r.Kind, res, err)
	}
	c, ok := g.Calibration()
	if !ok || c.Len != 800 || (!c.Exact && c.Recall < 0.9) {
		t.Fatalf("calibration after Choose: %+v, %v", c, ok)
	}
}

// TestCalibrationPaced: a calibration on a caller's sample is not the
// graph's own, so Calibration measures again, paced through the seam hnsw
// fills in (hnswseam.CalibratePaced), and returns what that chose.
func TestCalibrationPaced(t *testing.T) {
	ctx := context.Background()
	st, err := vector.NewMemStore(16, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := hnsw.New(st, &hnsw.Options{TargetRecall: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	ds := recall.Clustered(600, 8, 16, 5)
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := g.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.WaitCalibration(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := g.Calibrate(ctx, ds.Queries); err != nil || c.Source != hnsw.SourceCaller {
		t.Fatalf("calibration on a caller's sample: %+v, %v", c, err)
	}
	cal, err := Calibration(ctx, g, len(ids), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := g.Calibration(); !ok || got != cal || cal.Source == hnsw.SourceCaller || cal.Len != len(ids) {
		t.Fatalf("paced calibration %+v; the graph's is %+v, %v", cal, got, ok)
	}
}

// TestNeighboursExcept: a probe's own id is left out of its results, and
// k kept.
func TestNeighboursExcept(t *testing.T) {
	res := []vector.Result{{ID: 4}, {ID: 9}, {ID: 2}, {ID: 7}}
	if got := neighboursExcept(res, 9, 2); !slices.Equal(got, []vector.ID{4, 2}) {
		t.Errorf("neighboursExcept = %v, want [4 2]", got)
	}
	if got := neighboursExcept(res, 1, 3); !slices.Equal(got, []vector.ID{4, 9, 2}) {
		t.Errorf("neighboursExcept = %v, want [4 9 2]", got)
	}
}

// TestMedian: the middle latency, the upper one of an even count, and the
// caller's slice left in its order.
func TestMedian(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2}
	if got := median(ds); got != 4 {
		t.Errorf("median(%v) = %v, want 4", ds, got)
	}
	if got := median(ds[:3]); got != 4 {
		t.Errorf("median(%v) = %v, want 4", ds[:3], got)
	}
	if !slices.Equal(ds, []time.Duration{5, 1, 4, 2}) {
		t.Errorf("median reordered its argument: %v", ds)
	}
}

// TestChooseAboveMaxDim: above quant.MaxDim the scan of codes is no
// contender, and Choose picks between the others. It returned qflat.New's
// refusal, so an Auto collection with a recall target at such a dimension
// never got a verdict and built its graph again at every write.
func TestChooseAboveMaxDim(t *testing.T) {
	ctx := context.Background()
	const dim = quant.MaxDim + 1
	st, err := vector.NewMemStore(dim, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := hnsw.New(st, &hnsw.Options{TargetRecall: 0.9, M: 4, EfConstruction: 8})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]vector.ID, 20)
	vs := make([]vector.Vector, len(ids))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
		vs[i] = make(vector.Vector, dim)
		vs[i][i], vs[i][dim-1] = 1, 0.5
	}
	if err := g.AddBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	r, err := Choose(ctx, g, st, ids, nil, nil, false)
	if err != nil {
		t.Fatalf("Choose at dimension %d: %v", dim, err)
	}
	if r.Kind == QFlat || r.Index == nil {
		t.Fatalf("verdict %+v", r)
	}
	res, err := r.Index.Search(ctx, vs[7], 1, nil)
	if err != nil || len(res) != 1 || res[0].ID != ids[7] {
		t.Fatalf("%v search for a stored vector: %v, %v", r.Kind, res, err)
	}
}
