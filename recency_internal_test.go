package cairn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// recencyFixture fills a collection of kind with n items of dim
// dimensions under metric, written at random times over the last 30
// days of clk, most with an importance (some outside [0, 1], some not a
// number, some missing) and a group for filters.
func recencyFixture(t *testing.T, kind IndexKind, metric vector.Metric, n, dim int, clk *FakeClock) *Collection {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	vs := make([]vector.Vector, n)
	for i := range vs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		vs[i] = v
	}
	return recencyCollection(t, kind, metric, vs, clk)
}

// recencyCollection is recencyFixture over the vectors vs.
func recencyCollection(t testing.TB, kind IndexKind, metric vector.Metric, vs []vector.Vector, clk *FakeClock) *Collection {
	t.Helper()
	n, dim := len(vs), len(vs[0])
	ctx := context.Background()
	c := clockedCollection(t, clk, CollectionConfig{Dim: dim, Metric: metric, Index: kind})
	rng := rand.New(rand.NewPCG(uint64(dim), uint64(n)))
	items := make([]Item, n)
	for i := range items {
		v := vs[i]
		at := clk.Now().Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour))))
		md := map[string]any{"group": i % 5}
		for _, key := range extraImportance {
			md[key] = rng.Float64()
		}
		switch rng.IntN(6) {
		case 0: // no importance
		case 1:
			md["importance"] = "high" // not a number: counts as 1
		case 2:
			md["importance"] = rng.Float64()*2 - 0.5 // clipped to [0, 1]
		default:
			md["importance"] = rng.Float64()
		}
		items[i] = Item{ID: fmt.Sprint(i), Embedding: v, Metadata: md, CreatedAt: at, UpdatedAt: at}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	return c
}

// clockedCollection returns an empty collection of cfg, in a memory DB
// on clk's time.
func clockedCollection(t testing.TB, clk *FakeClock, cfg CollectionConfig) *Collection {
	t.Helper()
	db := OpenMemory(nil)
	t.Cleanup(func() { db.Close() })
	db.clock = clk.Now
	c, err := db.CreateCollection(context.Background(), "c", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exhaustive returns every item's recency score for query q under o,
// best first, as the formula of Recency defines it, computed here from
// the items read back.
func exhaustive(t *testing.T, c *Collection, q []float32, o *QueryOptions, now time.Time) []Result {
	t.Helper()
	items, err := c.Find(context.Background(), o.Filter, 0)
	if err != nil {
		t.Fatal(err)
	}
	qq, err := vector.Prepare(q, c.cfg.Dim, c.cfg.Metric)
	if err != nil {
		t.Fatal(err)
	}
	var out []Result
	for _, it := range items {
		sim := similarity(c.cfg.Metric, c.distance(qq, it.Embedding))
		if o.MinSimilarity != nil && sim < *o.MinSimilarity {
			continue
		}
		s := min(max(sim, 0), 1) // Cosine and Dot: the similarity clipped to [0, 1]; L2: 1/(1+d) already
		if hl := o.Recency.HalfLife; hl > 0 {
			s *= math.Pow(0.5, max(now.Sub(it.UpdatedAt).Seconds(), 0)/hl.Seconds())
		}
		if key := o.Recency.Importance; key != "" {
			switch x := it.Metadata[key].(type) {
			case float64:
				s *= min(max(x, 0), 1)
			case int64:
				s *= min(max(float64(x), 0), 1)
			}
		}
		out = append(out, Result{ID: it.ID, Score: s, Similarity: sim})
	}
	slices.SortStableFunc(out, func(a, b Result) int { return -cmpFloat(a.Score, b.Score) })
	return out
}

// sameScores returns an error naming the first result of got whose
// score is not want's at the same rank (ties may list other items).
func sameScores(got, want []Result) error {
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-6*max(1, want[i].Score) {
			return fmt.Errorf("result %d is %s at %v, want %s at %v", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
	return nil
}

// extraImportance are more metadata keys of the fixture's items, numbers
// from 0 to 1: with "importance" and "group", queries ask for more keys
// than a time order keeps importances for.
var extraImportance = []string{"w1", "w2", "w3", "w4"}

// TestRecencyExact checks a flat collection's recency queries against an
// exhaustive ranking by the documented formula: the same top k, by
// score, whatever the half-life (from minutes, where recency decides, to
// years, where relevance does), importance (under more keys than a time
// order keeps), filter and MinSimilarity.
func TestRecencyExact(t *testing.T) {
	for _, codes := range []bool{false, true} {
		t.Run(map[bool]string{false: "vectors", true: "codes"}[codes], func(t *testing.T) {
			withCodes(t, codes)
			testRecencyExact(t)
		})
	}
}

// withCodes makes recency walks keep codes of the newest items from
// their first query (on), or never (off), until the test ends.
func withCodes(t *testing.T, on bool) {
	was := minCodeDepth
	minCodeDepth = map[bool]int{false: math.MaxInt, true: 0}[on]
	t.Cleanup(func() { minCodeDepth = was })
}

func testRecencyExact(t *testing.T) {
	clk := NewFakeClock()
	for _, metric := range []vector.Metric{vector.Cosine, vector.L2, vector.Dot} {
		c := recencyFixture(t, Flat, metric, 3000, 8, clk)
		rng := rand.New(rand.NewPCG(5, uint64(metric)))
		for trial := range 60 {
			q := make([]float32, 8)
			for j := range q {
				q[j] = float32(rng.NormFloat64())
			}
			o := &QueryOptions{Recency: &Recency{
				HalfLife:   []time.Duration{0, time.Minute, time.Hour, 24 * time.Hour, 3 * 365 * 24 * time.Hour}[trial%5],
				Importance: append([]string{"", "importance", "group"}, extraImportance...)[trial/5%7],
			}}
			if trial%3 == 0 {
				o.Filter = Eq("group", trial%5)
			}
			switch trial % 7 {
			case 0:
				o.MinSimilarity = new(0.0)
			case 3, 6: // a bound that only the nearest 100 or 5 pass
				m := map[int]int{3: 100, 6: 5}[trial%7]
				near, err := c.Query(context.Background(), q, m+1, nil)
				if err != nil {
					t.Fatal(err)
				}
				o.MinSimilarity = new((near[m-1].Similarity + near[m].Similarity) / 2)
			}
			if trial%10 == 9 { // writes between queries: times out of order, retired versions
				churn(t, c, rng, clk.Now())
			}
			k := 1 + rng.IntN(30)
			got, err := c.Query(context.Background(), q, k, o)
			if err != nil {
				t.Fatal(err)
			}
			want := exhaustive(t, c, q, o, clk.Now())
			if len(got) != min(k, len(want)) {
				t.Fatalf("%v trial %d: %d results, want %d", metric, trial, len(got), min(k, len(want)))
			}
			if err := sameScores(got, want); err != nil {
				t.Fatalf("%v trial %d (%+v): %v", metric, trial, *o.Recency, err)
			}
			for i := range got {
				if i > 0 && got[i].Score > got[i-1].Score {
					t.Fatalf("%v trial %d: results not best first", metric, trial)
				}
			}
		}
	}
}

// churn upserts 100 items of c with new embeddings and UpdatedAts spread
// over the last 30 days (and some newer than now), and deletes 20, so that
// the time order is left out of order and holds retired versions.
func churn(t *testing.T, c *Collection, rng *rand.Rand, now time.Time) {
	t.Helper()
	ctx := context.Background()
	n, dim := mustCount(t, c), c.Config().Dim
	for range 100 {
		id := fmt.Sprint(rng.IntN(n))
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		at := now.Add(-time.Duration(rng.Int64N(int64(30*24*time.Hour))) + time.Hour)
		it := Item{ID: id, Embedding: v, Metadata: map[string]any{"group": rng.IntN(5), "importance": rng.Float64()}, CreatedAt: at.Add(-time.Hour), UpdatedAt: at}
		if err := c.Upsert(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		if _, err := c.DeleteIfExists(ctx, fmt.Sprint(rng.IntN(n))); err != nil {
			t.Fatal(err)
		}
	}
}

// cohereVectors returns the base and query vectors of testdata's 1,000
// real Cohere embeddings.
func cohereVectors(t *testing.T) (base, queries []vector.Vector) {
	t.Helper()
	dir := filepath.Join("testdata", "cohere-wiki-768-1k")
	base, err := recall.LoadVectors(filepath.Join(dir, "base.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err = recall.LoadVectors(filepath.Join(dir, "query.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	return base, queries
}

// TestRecencyGraphRecall checks an HNSW collection's recency queries
// against the exhaustive ranking, on random 16-d vectors and on the real
// Cohere 768-d embeddings of testdata: the window is searched through the
// graph, so the top 10 may miss an item the graph misses, but rarely.
func TestRecencyGraphRecall(t *testing.T) {
	base, queries := cohereVectors(t)
	rng := rand.New(rand.NewPCG(9, 9))
	random := make([]vector.Vector, 40)
	for i := range random {
		random[i] = make(vector.Vector, 16)
		for j := range random[i] {
			random[i][j] = float32(rng.NormFloat64())
		}
	}
	clk := NewFakeClock()
	for _, set := range []struct {
		name    string
		c       *Collection
		queries []vector.Vector
	}{
		{"random 3,000 × 16-d", recencyFixture(t, HNSW, vector.Cosine, 3000, 16, clk), random},
		{"Cohere 1,000 × 768-d", recencyCollection(t, HNSW, vector.Cosine, base, clk), queries},
	} {
		found, total := 0, 0
		for trial, q := range set.queries {
			o := &QueryOptions{Recency: &Recency{HalfLife: []time.Duration{time.Hour, 7 * 24 * time.Hour}[trial%2], Importance: "importance"}}
			got, err := set.c.Query(context.Background(), q, 10, o)
			if err != nil {
				t.Fatal(err)
			}
			want := exhaustive(t, set.c, q, o, clk.Now())[:10]
			for _, w := range want {
				total++
				if slices.ContainsFunc(got, func(r Result) bool { return r.ID == w.ID }) {
					found++
				}
			}
		}
		r := float64(found) / float64(total)
		t.Logf("%s, %d queries: recall@10 of recency queries on the graph %.3f", set.name, len(set.queries), r)
		if r < 0.95 {
			t.Errorf("%s: recall@10 of recency queries on the graph %.3f, want ≥ 0.95", set.name, r)
		}
	}
}

// TestRecencyOptions checks the options a recency query refuses, and that
// it works with the other vector-mode options.
func TestRecencyOptions(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	c := recencyFixture(t, Flat, vector.Cosine, 200, 4, clk)
	q := []float32{1, 0, 0, 0}
	for _, o := range []*QueryOptions{
		{Recency: &Recency{HalfLife: -time.Second}},
		{Recency: &Recency{}, Mode: HybridMode, Keywords: "x"},
	} {
		if _, err := c.Query(ctx, q, 3, o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Query with %+v = %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := c.Query(ctx, nil, 3, &QueryOptions{Recency: &Recency{}, Mode: KeywordMode, Keywords: "x"}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("keyword query with Recency = %v, want ErrInvalidOptions", err)
	}
	// With MMR and with a reranker, the candidates are the best by score.
	rs, err := c.Query(ctx, q, 5, &QueryOptions{Recency: &Recency{HalfLife: time.Hour}, MMR: &MMR{Lambda: 1}, WithEmbeddings: true})
	if err != nil || len(rs) != 5 || rs[0].Embedding == nil {
		t.Fatalf("with MMR: %d results, %v", len(rs), err)
	}
	want := exhaustive(t, c, q, &QueryOptions{Recency: &Recency{HalfLife: time.Hour}}, clk.Now())
	for i := range rs { // Lambda 1 keeps the query's order
		if rs[i].ID != want[i].ID {
			t.Fatalf("with MMR λ=1: result %d is %s, want %s", i, rs[i].ID, want[i].ID)
		}
	}
	var given []string
	_, err = c.Query(ctx, q, 2, &QueryOptions{Recency: &Recency{HalfLife: time.Hour}, Rerank: &Rerank{Pool: 8, Func: func(_ context.Context, _ string, cs []Result) ([]string, error) {
		for _, r := range cs {
			given = append(given, r.ID)
		}
		return given, nil
	}}})
	if err != nil || len(given) != 8 {
		t.Fatalf("with a reranker: given %d candidates, %v", len(given), err)
	}
	for i := range given {
		if given[i] != want[i].ID {
			t.Fatalf("reranker's candidate %d is %s, want %s", i, given[i], want[i].ID)
		}
	}
}

// TestRecencyConcurrent runs recency queries on several goroutines, each
// asking for importance under its own keys (more, together, than a time
// order keeps), beside a writer that upserts items at times out of order
// and deletes some, so that queries sort the time order and extend and
// drop its importances while others walk it; run it with -race. Once the
// writer is done, every key's query agrees with the exhaustive ranking.
func TestRecencyConcurrent(t *testing.T) {
	withCodes(t, true) // filled by the queries as the writer appends
	ctx := context.Background()
	clk := NewFakeClock()
	c := recencyFixture(t, Flat, vector.Cosine, 1000, 8, clk)
	keys := append([]string{"importance", "group"}, extraImportance...)
	q := []float32{1, 0.5, 0, 0, -1, 0, 0.25, 0}
	option := func(key string) *QueryOptions {
		return &QueryOptions{Recency: &Recency{HalfLife: 24 * time.Hour, Importance: key}}
	}
	done := make(chan struct{})
	errs := make(chan error, len(keys))
	for g := range len(keys) {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				res, err := c.Query(ctx, q, 10, option(keys[(g+i)%len(keys)]))
				if err == nil && !slices.IsSortedFunc(res, func(a, b Result) int { return -cmpFloat(a.Score, b.Score) }) {
					err = fmt.Errorf("results not best first: %v", res)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		churn(t, c, rng, clk.Now())
	}
	close(done)
	for range keys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range keys {
		o := option(key)
		got, err := c.Query(ctx, q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		want := exhaustive(t, c, q, o, clk.Now())
		if err := sameScores(got, want); err != nil {
			t.Fatalf("importance %q: %v", key, err)
		}
	}
}

// TestRecencyOldTimes checks recency for an item updated centuries before
// now, further than an int64 of nanoseconds can subtract: its recency is
// about 0, not an overflow.
func TestRecencyOldTimes(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db := OpenMemory(nil)
	defer db.Close()
	db.clock = clk.Now
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat})
	if err != nil {
		t.Fatal(err)
	}
	long := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	err = c.Add(ctx,
		Item{ID: "old", Embedding: []float32{1, 0}, CreatedAt: long, UpdatedAt: long},
		Item{ID: "new", Embedding: []float32{1, 1}, CreatedAt: clk.Now().Add(-time.Hour), UpdatedAt: clk.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(ctx, []float32{1, 0}, 2, &QueryOptions{Recency: &Recency{HalfLife: 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ID != "new" || res[1].ID != "old" || res[1].Score < 0 || res[1].Score > 1e-300 {
		t.Fatalf("results %+v, want new first and old at a score of about 0", res)
	}
}

// TestRecencyCodesStart checks the codes at their default threshold: on
// 20,000 items with a half-life as long as their spread in time, walks
// go past minCodeDepth, the codes start, and every answer, before and
// after writes between the queries, is the exhaustive ranking.
func TestRecencyCodesStart(t *testing.T) {
	clk := NewFakeClock()
	c := recencyFixture(t, Flat, vector.Cosine, 20000, 16, clk)
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 40 {
		if trial == 20 {
			churn(t, c, rng, clk.Now())
		}
		q := make([]float32, 16)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		o := &QueryOptions{Recency: &Recency{HalfLife: 30 * 24 * time.Hour, Importance: "importance"}}
		got, err := c.Query(context.Background(), q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		want := exhaustive(t, c, q, o, clk.Now())
		if err := sameScores(got, want); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
	c.cat.times.mu.Lock()
	started := c.cat.times.codes.qz != nil
	c.cat.times.mu.Unlock()
	if !started {
		t.Fatalf("no codes after walks of up to %d items", c.cat.times.walked.Load())
	}
}

// TestRecencyDistancesOneKernel: every distance a recency query on a
// graph reports is the one the walk by time computes for that vector
// (the four-row kernel of vector.InnerProductGather), whichever list
// found the item: a graph's walk scores a node four at a time or alone,
// as its path went, and a walk on codes scores its finalists one at a
// time, and those can differ in the last bits.
func TestRecencyDistancesOneKernel(t *testing.T) {
	ctx := context.Background()
	base, queries := cohereVectors(t)
	clk := NewFakeClock()
	for _, quantize := range []hnsw.Quantize{hnsw.QuantizeNone, hnsw.QuantizeInt8} {
		db := OpenMemory(nil)
		db.clock = clk.Now
		cfg := CollectionConfig{Dim: len(base[0]), Metric: vector.Cosine, Index: HNSW}
		cfg.HNSW.Quantize = quantize
		c, err := db.CreateCollection(ctx, "c", cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		items := make([]Item, len(base))
		for i, v := range base {
			at := clk.Now().Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour))))
			items[i] = Item{ID: fmt.Sprint(i), Embedding: v, CreatedAt: at, UpdatedAt: at, Metadata: map[string]any{"importance": rng.Float64()}}
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		o := &QueryOptions{Recency: &Recency{HalfLife: 7 * 24 * time.Hour, Importance: "importance"}}
		checked := 0
		for _, q := range queries[:50] {
			got, err := c.Query(ctx, q, 10, o)
			if err != nil {
				t.Fatal(err)
			}
			pq := make([]float32, len(q))
			if err := vector.PrepareInto(pq, q, len(q), vector.Cosine); err != nil {
				t.Fatal(err)
			}
			for _, r := range got {
				its, err := c.Get(ctx, r.ID)
				if err != nil || len(its) != 1 {
					t.Fatal(its, err)
				}
				it := its[0]
				var ip [1]float32
				vector.InnerProductGather(pq, []*float32{&it.Embedding[0]}, ip[:])
				if want := 1 - ip[0]; float32(r.Distance) != want {
					t.Fatalf("quantize %v: item %s at distance %v (bits %x), want %v (bits %x) as the walk by time computes it",
						quantize, r.ID, float32(r.Distance), math.Float32bits(float32(r.Distance)), want, math.Float32bits(want))
				}
				checked++
			}
		}
		db.Close()
		if checked == 0 {
			t.Fatal("no results checked")
		}
	}
}

// TestRecencyCodesStraddleMinSimilarity checks that an item whose code
// cannot tell whether it passes MinSimilarity never raises the score a
// walk must beat: the newest items lie just below MinSimilarity, each
// code's bounds on either side of it, and older items above it are the
// answer. Counting the least score the codes allow of the newest ones
// would pass the older ones over, for their importance, and leave the
// window's nearest (of little importance) as the answer.
func TestRecencyCodesStraddleMinSimilarity(t *testing.T) {
	withCodes(t, true)
	const dim, minSim = 16, 0.5
	clk := NewFakeClock()
	rng := rand.New(rand.NewPCG(3, 4))
	// at returns a vector whose cosine similarity to e1 is s.
	at := func(s float64) vector.Vector {
		v := make(vector.Vector, dim)
		norm := 0.0
		for j := 1; j < dim; j++ {
			x := rng.NormFloat64()
			v[j], norm = float32(x), norm+x*x
		}
		f := math.Sqrt(1-s*s) / math.Sqrt(norm)
		for j := 1; j < dim; j++ {
			v[j] *= float32(f)
		}
		v[0] = float32(s)
		return v
	}
	ctx := context.Background()
	c := clockedCollection(t, clk, CollectionConfig{Dim: dim, Metric: vector.Cosine, Index: Flat})
	var items []Item
	for i := range 40 { // above MinSimilarity, minutes old; the nearest ten of little importance
		when := clk.Now().Add(-time.Minute - time.Duration(i)*15*time.Second)
		imp := map[bool]float64{false: 0.7, true: 0.1}[i >= 30]
		items = append(items, Item{ID: fmt.Sprint("old", i), Embedding: at(minSim + 0.05 + 0.002*float64(i)),
			Metadata: map[string]any{"importance": imp}, CreatedAt: when, UpdatedAt: when})
	}
	for i := range 60 { // just below it, the newest
		items = append(items, Item{ID: fmt.Sprint("new", i), Embedding: at(minSim - 1e-4*float64(1+i%5)),
			Metadata: map[string]any{"importance": 1.0}, CreatedAt: clk.Now(), UpdatedAt: clk.Now()})
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	q := make([]float32, dim)
	q[0] = 1
	o := &QueryOptions{Recency: &Recency{HalfLife: time.Hour, Importance: "importance"}, MinSimilarity: new(minSim)}
	want := exhaustive(t, c, q, o, clk.Now())
	for range 2 { // the first query starts the codes
		got, err := c.Query(ctx, q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 {
			t.Fatalf("%d results, want 10", len(got))
		}
		if err := sameScores(got, want); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecencyCodesLeastWeight checks the least score a code gives an
// item: an item's recency is computed only when it is read, so the least
// score takes the least recency of its run (runLow). Here the newest item
// (C) is the best, and the next (B), older by 0.9 of a run, is a little
// more relevant; both codes stand for their vectors exactly. Taking the
// run's recency for B's least score would put it above C's bound and
// leave C unread.
func TestRecencyCodesLeastWeight(t *testing.T) {
	withCodes(t, true)
	const dim = 16
	clk := NewFakeClock()
	ctx := context.Background()
	c := clockedCollection(t, clk, CollectionConfig{Dim: dim, Metric: vector.Dot, Index: Flat})
	// Components of 0 or 0.25, which a code holds exactly; the query
	// weighs dimensions 0 to 5 only.
	grid := func(dims ...int) vector.Vector {
		v := make(vector.Vector, dim)
		for _, j := range dims {
			v[j] = 0.25
		}
		return v
	}
	q := make([]float32, dim)
	copy(q, []float32{1, 1, 1, 0.2, 0.192, 0.8})
	const halfLife = 128 * time.Minute // a run of a minute
	now := clk.Now()
	items := []Item{
		{ID: "C", Embedding: grid(0, 1, 2, 4), UpdatedAt: now.Add(-time.Second)},                  // relevance 0.798
		{ID: "B", Embedding: grid(0, 1, 2, 3), UpdatedAt: now.Add(-time.Second - 54*time.Second)}, // 0.8
	}
	for i := range 10 { // the window: the nearest, and old
		items = append(items, Item{ID: fmt.Sprint("near", i), Embedding: grid(0, 1, 2, 5, 6+i%10), UpdatedAt: now.Add(-100 * halfLife)})
	}
	for i := range 28 { // unrelated, old
		items = append(items, Item{ID: fmt.Sprint("far", i), Embedding: grid(6+i%10, 6+(i+3)%10), UpdatedAt: now.Add(-50 * halfLife)})
	}
	for i := range items {
		items[i].CreatedAt = items[i].UpdatedAt
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	o := &QueryOptions{Recency: &Recency{HalfLife: halfLife}}
	for range 2 { // the first query starts the codes
		got, err := c.Query(ctx, q, 1, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != "C" {
			t.Fatalf("got %v, want C", got)
		}
	}
}
