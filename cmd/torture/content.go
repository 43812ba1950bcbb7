package main

// This file holds the workload's deterministic content: the collections,
// and every item's embedding, text and metadata as a function of its
// collection, id and version, so that the parent can recompute what each
// acknowledged write stored.

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// autoThreshold is small so that the Auto collection crosses its switch
// from exact search to HNSW within a few trials.
const autoThreshold = 1500

// routedThreshold is where the Auto collection with a recall target first
// measures its ways to it, small for the same reason.
const routedThreshold = 600

// baseColls are the collections every database of the workload holds.
var baseColls = []string{"flat", "hnsw", "auto", "routed"}

// tenantColls are tenants of two of baseColls, written and checked as
// collections are, under the names "collection@tenant".
var tenantColls = []string{"flat@u0", "flat@u1", "hnsw@u0", "hnsw@u1"}

// configOf returns the configuration of a collection of the workload:
// one of baseColls, a tenant of one (its collection's), or a temporary
// "tmp-…" collection. Flat and HNSW keep every version (checkPast).
func configOf(name string) cairn.CollectionConfig {
	name, _, _ = strings.Cut(name, "@")
	switch name {
	case "flat":
		return cairn.CollectionConfig{Dim: 64, Metric: vector.L2, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{}}
	case "hnsw":
		return cairn.CollectionConfig{Dim: 32, Metric: vector.Cosine, Index: cairn.HNSW, KeepHistory: &cairn.HistoryPolicy{}}
	case "auto":
		return cairn.CollectionConfig{Dim: 48, Metric: vector.Dot, Index: cairn.Auto, AutoThreshold: autoThreshold}
	case "routed":
		return cairn.CollectionConfig{Dim: 24, Metric: vector.Cosine, Index: cairn.Auto, AutoThreshold: routedThreshold,
			HNSW: hnsw.Options{TargetRecall: 0.9}}
	}
	return cairn.CollectionConfig{Dim: 16, Metric: vector.L2, Index: cairn.Flat}
}

func seedOf(coll, id string, ver int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(coll))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return h.Sum64() ^ uint64(ver)*0x9e3779b97f4a7c15
}

// groupOf is the metadata group ("g") of an id: fixed across versions, so
// that DeleteWhere by group has one answer whatever version is stored.
func groupOf(id string) float64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return float64(h.Sum32() % 8)
}

// itemOf is version ver of item id of coll, written by writer w.
func itemOf(coll, id string, ver, w int) cairn.Item {
	cfg := configOf(coll)
	r := rand.New(rand.NewPCG(seedOf(coll, id, ver), 7))
	emb := make([]float32, cfg.Dim)
	for i := range emb {
		emb[i] = float32(r.NormFloat64())
	}
	// Texts of up to 3 KiB make the writes large enough to pass the
	// write-ahead log's automatic checkpoints within a trial.
	var b strings.Builder
	b.WriteString(id)
	b.WriteByte(' ')
	for range r.IntN(3072) {
		b.WriteByte(byte('a' + r.IntN(26)))
	}
	return cairn.Item{
		ID:        id,
		Embedding: emb,
		Text:      b.String(),
		Metadata: map[string]any{
			"w":   float64(w),
			"g":   groupOf(id),
			"v":   float64(ver),
			"tag": "t" + id[len(id)-1:],
		},
	}
}
