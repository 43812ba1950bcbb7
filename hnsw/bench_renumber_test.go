package hnsw_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkRenumber measures what renumbering the slots in breadth-first
// order (renumber.go) buys the queries of a real data set: it builds an
// index of $HNSW_RENUMBER_BASE (an .fvecs file, cosine; int8 codes if
// $HNSW_RENUMBER_INT8 is set), loads its saved graph twice, once as saved
// (the order of the inserts) and once renumbered, and times the queries
// of $HNSW_RENUMBER_QUERIES on the two alternately, query by query (each
// first on every other query), over three passes, at several ef. It logs the p50 and p95 of each and their
// ratio, how many answers differ, and the time the renumbering took.
//
//	HNSW_RENUMBER_BASE=DIR/NAME.base.fvecs HNSW_RENUMBER_QUERIES=DIR/NAME.query.fvecs \
//	  go test ./hnsw -run '^$' -bench Renumber -benchtime 1x -v
func BenchmarkRenumber(b *testing.B) {
	basePath, queryPath := os.Getenv("HNSW_RENUMBER_BASE"), os.Getenv("HNSW_RENUMBER_QUERIES")
	if basePath == "" || queryPath == "" {
		b.Skip("HNSW_RENUMBER_BASE and HNSW_RENUMBER_QUERIES name no data set")
	}
	base, err := recall.LoadVectors(basePath)
	if err != nil {
		b.Fatal(err)
	}
	queries, err := recall.LoadVectors(queryPath)
	if err != nil {
		b.Fatal(err)
	}
	qz := hnsw.QuantizeNone
	if os.Getenv("HNSW_RENUMBER_INT8") != "" {
		qz = hnsw.QuantizeInt8
	}
	defer hnsw.SetRenumberMinLen(hnsw.SetRenumberMinLen(1 << 30))
	ctx := context.Background()
	s := memStore(b, len(base[0]), vector.Cosine)
	built := newIndex(b, s, &hnsw.Options{M: 16, EfConstruction: 200, Quantize: qz})
	ids := make([]vector.ID, len(base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := built.AddBatch(ctx, ids, base); err != nil {
		b.Fatal(err)
	}
	var saved bytes.Buffer
	if _, err := built.WriteTo(&saved); err != nil {
		b.Fatal(err)
	}
	built = nil
	load := func() (*hnsw.Index, time.Duration) {
		ix := newIndex(b, s, &hnsw.Options{Quantize: qz})
		t0 := time.Now()
		if _, err := ix.ReadFrom(bytes.NewReader(saved.Bytes())); err != nil {
			b.Fatal(err)
		}
		return ix, time.Since(t0)
	}
	plain, loadPlain := load()
	hnsw.SetRenumberMinLen(0)
	renumbered, loadRenumbered := load()
	t0 := time.Now()
	renumbered.Renumber()
	b.Logf("n = %d: load %v, load and renumber %v; renumbering again %v", len(base), loadPlain, loadRenumbered, time.Since(t0))
	for b.Loop() {
		for _, ef := range []int{16, 64, 200} {
			var tp, tr []time.Duration
			differ := 0
			o := &hnsw.SearchOptions{Ef: ef}
			for range 3 {
				for i, q := range queries {
					// Each goes first on every other query.
					var rp, rr []vector.Result
					t0 := time.Now()
					if i%2 == 0 {
						rp, _ = plain.SearchWith(ctx, q, 10, o)
					} else {
						rr, _ = renumbered.SearchWith(ctx, q, 10, o)
					}
					t1 := time.Now()
					if i%2 == 0 {
						rr, _ = renumbered.SearchWith(ctx, q, 10, o)
						tp, tr = append(tp, t1.Sub(t0)), append(tr, time.Since(t1))
					} else {
						rp, _ = plain.SearchWith(ctx, q, 10, o)
						tr, tp = append(tr, t1.Sub(t0)), append(tp, time.Since(t1))
					}
					if !slices.Equal(rp, rr) {
						differ++
					}
				}
			}
			slices.Sort(tp)
			slices.Sort(tr)
			p50, p95 := len(tp)/2, len(tp)*95/100
			b.Logf("ef %d: as inserted p50 %v p95 %v, renumbered p50 %v p95 %v: %.3f of the time; %d answers differ",
				ef, tp[p50], tp[p95], tr[p50], tr[p95], float64(tr[p50])/float64(tp[p50]), differ)
		}
	}
}
