// Command agentmem measures two costs of agent memory at scale, in one
// file: writing one memory at a time with UpsertDedup against plain
// Upsert, and vector queries ranked by relevance × recency × importance
// (QueryOptions.Recency) against plain ones, with the recency queries'
// recall@10 against an exhaustive ranking under the same score.
//
//	go run ./bench/agentmem -n 100000 -dir /tmp/agentmem
//
// The memories are real embeddings made many: with -data (by default the
// Cohere 768-d set in testdata), each is one of the file's base vectors
// plus Gaussian noise, at a cosine of about 0.85 to it, so that each
// real document stands for a topic of many memories and the queries (the
// file's queries) relate to some topics and not others as real ones do;
// with -data uniform, they are uniform random unit vectors, the worst
// case for recency, where no memory relates to a query more than another.
// UpdatedAt is spread over the last 90 days and the importance drawn from
// [0, 1]. Calls on the two sides alternate, and each side runs every
// query, the recency side half the distinct queries later than the plain
// one, so that no query follows itself (with -repeat it does: the second
// side then reads the graph the first brought into cache).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentmem:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agentmem", flag.ContinueOnError)
	n := fs.Int("n", 100000, "memories in each collection")
	dim := fs.Int("dim", 384, "dimension of the embeddings, with -data uniform")
	writes := fs.Int("writes", 1000, "single writes per side, timed")
	dups := fs.Float64("dups", 0.1, "fraction of the timed writes that repeat a stored memory (a near-duplicate)")
	queries := fs.Int("queries", 500, "queries per side")
	halfLife := fs.Duration("half-life", 7*24*time.Hour, "the recency queries' half-life")
	dir := fs.String("dir", "", "directory for the files (default: a temporary one)")
	data := fs.String("data", filepath.Join("testdata", "cohere-wiki-768-1k"), "a directory with base.fvecs and query.fvecs, whose vectors the memories are made from; or \"uniform\"")
	repeat := fs.Bool("repeat", false, "run each query on the two sides back to back, so that the second finds the first's memory in cache")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "cairn-agentmem-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ds, period, err := dataset(*data, *n+*writes, *queries, *dim)
	if err != nil {
		return err
	}
	*dim = ds.Dim
	now := time.Now()
	r := rand.New(rand.NewPCG(2, 3))
	item := func(i int, emb []float32) cairn.Item {
		return cairn.Item{ID: fmt.Sprint("m", i), Embedding: emb, Text: fmt.Sprint("memory ", i),
			UpdatedAt: now.Add(-time.Duration(r.Int64N(int64(90 * 24 * time.Hour)))),
			Metadata:  map[string]any{"importance": r.Float64(), "user": "u1"}}
	}
	path := filepath.Join(*dir, "agentmem.cairn")
	for _, f := range []string{path, path + "-wal", path + "-shm"} { // a run killed before left its log
		os.Remove(f)
	}
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	var colls [2]*cairn.Collection // plain, dedup
	for i, name := range []string{"plain", "dedup"} {
		if colls[i], err = db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: *dim}); err != nil {
			return err
		}
	}
	items := make([]cairn.Item, *n)
	for i := range items {
		items[i] = item(i, ds.Base[i])
		items[i].CreatedAt = items[i].UpdatedAt
	}
	start := time.Now()
	for lo := 0; lo < *n; lo += 1000 {
		for _, c := range colls {
			if err := c.Upsert(ctx, items[lo:min(lo+1000, *n)]...); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(out, "agentmem: %d memories of %d-d from %s in each of two collections (%v to fill)\n", *n, *dim, *data, time.Since(start).Round(time.Second))

	// One memory at a time: Upsert on one side, UpsertDedup on the other.
	d := &cairn.Dedup{MinSimilarity: 0.95, Scope: []string{"user"}}
	var lat [2][]time.Duration
	merged, wantMerged := 0, 0
	for w := range *writes {
		emb := ds.Base[*n+w]
		if r.Float64() < *dups { // a rephrasing of a stored memory
			emb = slices.Clone(ds.Base[r.IntN(*n)])
			for j := range emb {
				emb[j] += float32(r.NormFloat64() * 0.002)
			}
			wantMerged++
		}
		it := item(*n+w, emb)
		it.UpdatedAt = time.Time{}
		for k := range 2 {
			side := (w + k) % 2
			t0 := time.Now()
			if side == 0 {
				err = colls[0].Upsert(ctx, it)
			} else {
				var ms []cairn.Merge
				ms, err = colls[1].UpsertDedup(ctx, d, it)
				merged += len(ms)
			}
			lat[side] = append(lat[side], time.Since(t0))
			if err != nil {
				return err
			}
		}
	}
	report(out, "one write", "Upsert", "UpsertDedup", lat)
	fmt.Fprintf(out, "UpsertDedup merged %d of the %d near-duplicates written\n", merged, wantMerged)

	// Queries with and without recency, on the plain side.
	c := colls[0]
	ro := &cairn.QueryOptions{Recency: &cairn.Recency{HalfLife: *halfLife, Importance: "importance"}}
	lat = [2][]time.Duration{}
	got := make([][]cairn.Result, len(ds.Queries))
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer f.Close()
	}
	// Each side runs every query once. Unless -repeat, the recency side
	// runs them half the distinct queries later, so that no query follows
	// itself and finds its graph in cache, as an agent's rarely would.
	lag := max(period/2, 1)
	if *repeat {
		lag = 0
	}
	for qi := range ds.Queries {
		for k := range 2 {
			side, at := (qi+k)%2, qi
			o := (*cairn.QueryOptions)(nil)
			if side == 1 {
				o, at = ro, (qi+lag)%len(ds.Queries)
			}
			t0 := time.Now()
			res, err := c.Query(ctx, ds.Queries[at], 10, o)
			lat[side] = append(lat[side], time.Since(t0))
			if err != nil {
				return err
			}
			if side == 1 {
				got[at] = res
			}
		}
	}
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	report(out, "query, top 10", "plain", "recency", lat)

	// Recall@10 of the recency queries against the exhaustive ranking.
	all, err := c.Find(ctx, nil, 0)
	if err != nil {
		return err
	}
	at := time.Now()
	weights := make([]float64, len(all))
	for i, it := range all {
		age := max(at.Sub(it.UpdatedAt), 0)
		imp := min(max(it.Metadata["importance"].(float64), 0), 1)
		weights[i] = math.Pow(0.5, float64(age)/float64(*halfLife)) * imp
	}
	found, total := 0, 0
	for qi, q := range ds.Queries {
		best := exhaustive(all, weights, q)
		for _, id := range best {
			total++
			if slices.ContainsFunc(got[qi], func(r cairn.Result) bool { return r.ID == id }) {
				found++
			}
		}
	}
	fmt.Fprintf(out, "recency queries: recall@10 against the exhaustive ranking %.4f (%d queries)\n", float64(found)/float64(total), len(ds.Queries))
	return nil
}

// dataset returns n memories and nq queries: from the real vectors of
// dir (see the package doc), or uniform random ones of dimension dim. The
// queries repeat with the period it returns (the file's queries, in turn).
func dataset(dir string, n, nq, dim int) (*recall.Dataset, int, error) {
	if dir == "uniform" {
		return recall.Uniform(n, nq, dim, 1), nq, nil
	}
	base, err := recall.LoadVectors(filepath.Join(dir, "base.fvecs"))
	if err != nil {
		return nil, 0, err
	}
	queries, err := recall.LoadVectors(filepath.Join(dir, "query.fvecs"))
	if err != nil {
		return nil, 0, err
	}
	d := len(base[0])
	sigma := math.Sqrt(0.384 / float64(d)) // cos(memory, its document) ≈ 1/√(1+σ²d) ≈ 0.85
	r := rand.New(rand.NewPCG(7, 7))
	ds := &recall.Dataset{Name: dir, Dim: d, Metric: vector.Cosine, Base: make([]vector.Vector, n)}
	for i := range ds.Base {
		b := base[i%len(base)]
		norm := 0.0
		for _, x := range b {
			norm += float64(x) * float64(x)
		}
		norm = math.Sqrt(norm)
		v := make(vector.Vector, d)
		for j := range v {
			v[j] = float32(float64(b[j])/norm + r.NormFloat64()*sigma)
		}
		ds.Base[i] = v
	}
	for i := range nq {
		ds.Queries = append(ds.Queries, queries[i%len(queries)])
	}
	return ds, len(queries), nil
}

// exhaustive returns the ids of the 10 best items under Recency's score,
// computed over every item: weights holds each item's recency ×
// importance at the time of the queries.
func exhaustive(all []cairn.Item, weights []float64, q []float32) []string {
	qn := slices.Clone(q)
	norm := 0.0
	for _, x := range qn {
		norm += float64(x) * float64(x)
	}
	for i := range qn {
		qn[i] = float32(float64(qn[i]) / math.Sqrt(norm))
	}
	type scored struct {
		id    string
		score float64
	}
	var best []scored // the 10 best so far, best first
	for i, it := range all {
		cos := float64(vector.InnerProduct(qn, it.Embedding)) // both unit length
		sc := max(cos, 0) * weights[i]
		if len(best) == 10 && sc <= best[9].score {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, sc, func(a scored, s float64) int { return cmp.Compare(s, a.score) })
		best = slices.Insert(best, at, scored{it.ID, sc})
		best = best[:min(len(best), 10)]
	}
	ids := make([]string, len(best))
	for i := range ids {
		ids[i] = best[i].id
	}
	return ids
}

// report prints p50 and p95 of each side and their ratios.
func report(out io.Writer, what, a, b string, lat [2][]time.Duration) {
	q := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	a50, b50 := q(lat[0], 0.5), q(lat[1], 0.5)
	a95, b95 := q(lat[0], 0.95), q(lat[1], 0.95)
	fmt.Fprintf(out, "%s: p50 %v %s, %v %s (%.2f×); p95 %v, %v (%.2f×)\n", what,
		a50.Round(time.Microsecond), a, b50.Round(time.Microsecond), b, float64(b50)/float64(a50),
		a95.Round(time.Microsecond), b95.Round(time.Microsecond), float64(b95)/float64(a95))
}
