// This file holds the sweep's recommendations: for each target recall, the
// fastest setting of the grid that reaches it, written as the code a user
// would type, for an index of their own and for a memory-store collection.

package main

import (
	"fmt"
	"strings"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// targets are the recalls the sweep recommends a setting for.
var targets = []float64{0.90, 0.95, 0.99}

// recommendation is one target recall's answer: an element of the JSON
// "recommendations". Found is false when no setting of the grid reaches
// the target; the other fields are then empty.
type recommendation struct {
	Dataset          string  `json:"dataset"`
	K                int     `json:"k"`
	Target           float64 `json:"target_recall"`
	Found            bool    `json:"found"`
	Params           params  `json:"params"`
	Recall           float64 `json:"recall"`
	P50us            float64 `json:"p50_us"`
	QPS              float64 `json:"qps"`
	HNSWOptions      string  `json:"hnsw_options,omitempty"`      // Go: the hnsw.Options literal
	CollectionConfig string  `json:"collection_config,omitempty"` // Go: the cairn.CollectionConfig literal
}

// recommend returns, for each target, the index of the row of highest QPS
// among those reaching it, or -1.
func recommend(rows []result) []int {
	out := make([]int, len(targets))
	for ti, target := range targets {
		out[ti] = -1
		for i, r := range rows {
			if r.Recall >= target && (out[ti] < 0 || r.QPS > rows[out[ti]].QPS) {
				out[ti] = i
			}
		}
	}
	return out
}

// hnswOptions is p as the hnsw.Options literal that builds it.
func hnswOptions(p params) string {
	q := ""
	if p.Quantize != "" {
		kind, dims, _ := strings.Cut(p.Quantize, "-") // quantizeLabel's form
		switch kind {
		case hnsw.QuantizeInt8.String():
			q = ", Quantize: hnsw.QuantizeInt8"
		case hnsw.QuantizeBinary.String():
			q = ", Quantize: hnsw.QuantizeBinary"
		}
		if dims != "" {
			q += ", QuantizeDims: " + dims
		}
	}
	return fmt.Sprintf("hnsw.Options{M: %d, EfConstruction: %d, EfSearch: %d%s}", p.M, p.EfConstruction, p.Ef, q)
}

// metricName is m as the Go identifier of package vector.
func metricName(m vector.Metric) string {
	switch m {
	case vector.Dot:
		return "vector.Dot"
	case vector.L2:
		return "vector.L2"
	}
	return "vector.Cosine"
}

// collectionConfig is the memory-store configuration of a collection of
// ds's dimension and metric searched with p.
func collectionConfig(ds *recall.Dataset, p params) string {
	return fmt.Sprintf("cairn.CollectionConfig{Dim: %d, Metric: %s, Index: cairn.HNSW, HNSW: %s}", ds.Dim, metricName(ds.Metric), hnswOptions(p))
}

// printRecommendations prints, and keeps for --json, the recommended
// setting of every target recall over the sweep rows of ds.
func (b *bench) printRecommendations(ds *recall.Dataset, rows []result) {
	k := b.c.k
	fmt.Fprintf(b.out, "### Recommended settings for %s (the fastest setting of the grid reaching each recall@%d)\n\n", ds.Name, k)
	for ti, i := range recommend(rows) {
		rec := recommendation{Dataset: ds.Name, K: k, Target: targets[ti]}
		if i < 0 {
			b.recs = append(b.recs, rec)
			fmt.Fprintf(b.out, "- recall@%d ≥ %.2f: no setting of the grid reaches it; try a larger --ef or --m.\n\n", k, targets[ti])
			continue
		}
		r := rows[i]
		rec.Found, rec.Params, rec.Recall, rec.P50us, rec.QPS = true, r.Params, r.Recall, r.P50us, r.QPS
		rec.HNSWOptions, rec.CollectionConfig = hnswOptions(r.Params), collectionConfig(ds, r.Params)
		b.recs = append(b.recs, rec)
		fmt.Fprintf(b.out, "- recall@%d ≥ %.2f: M=%d, efConstruction=%d, ef=%d gives recall %s, p50 %s, %s QPS on one goroutine. "+
			"As an index over your own store, or as a collection of the memory store:\n\n",
			k, targets[ti], r.Params.M, r.Params.EfConstruction, r.Params.Ef, fmtRecall(r.Recall), fmtDur(usDur(r.P50us)), fmtQPS(r.QPS))
		fmt.Fprintf(b.out, "  ```go\n  idx, err := hnsw.New(store, &%s)\n\n", rec.HNSWOptions)
		fmt.Fprintf(b.out, "  coll, err := db.CreateCollection(ctx, \"docs\", cairn.CollectionConfig{\n      Dim: %d, Metric: %s, Index: cairn.HNSW,\n      HNSW: %s,\n  })\n  ```\n\n",
			ds.Dim, metricName(ds.Metric), rec.HNSWOptions)
	}
}
