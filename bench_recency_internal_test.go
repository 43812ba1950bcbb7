package cairn

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkRecencyQuery times vector queries with and without Recency
// (a half-life of 7 days over memories of the last 30), on 10,000
// memories made from the real Cohere embeddings of testdata: each a
// document's embedding plus noise, at a cosine of about 0.85 to it.
func BenchmarkRecencyQuery(b *testing.B) {
	dir := filepath.Join("testdata", "cohere-wiki-768-1k")
	base, _ := recall.LoadVectors(filepath.Join(dir, "base.fvecs"))
	queries, _ := recall.LoadVectors(filepath.Join(dir, "query.fvecs"))
	r := rand.New(rand.NewPCG(7, 7))
	d := len(base[0])
	sigma := math.Sqrt(0.384 / float64(d))
	vs := make([]vector.Vector, 10000)
	for i := range vs {
		bb := base[i%len(base)]
		norm := 0.0
		for _, x := range bb {
			norm += float64(x) * float64(x)
		}
		norm = math.Sqrt(norm)
		v := make(vector.Vector, d)
		for j := range v {
			v[j] = float32(float64(bb[j])/norm + r.NormFloat64()*sigma)
		}
		vs[i] = v
	}
	clk := NewFakeClock()
	for _, kind := range []IndexKind{Flat, HNSW} {
		c := recencyCollection(b, kind, vector.Cosine, vs, clk)
		o := &QueryOptions{Recency: &Recency{HalfLife: 7 * 24 * time.Hour, Importance: "importance"}}
		for _, on := range []bool{false, true} {
			b.Run(kind.String()+map[bool]string{false: "/plain", true: "/recency"}[on], func(b *testing.B) {
				var oo *QueryOptions
				if on {
					oo = o
				}
				for i := 0; b.Loop(); i++ {
					if _, err := c.Query(context.Background(), queries[i%len(queries)], 10, oo); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
