// Command scalebench measures the inputs of weaviate/SCALING.md on a
// running cluster, through package weaviate: the insert rate, the cost
// of a query on one shard as the shard grows, the cost of fanning a query
// out over more shards, and the memory a vector costs the nodes.
//
//	weaviate/cluster.sh up
//	weaviate/cluster.sh exec go run ./weaviate/internal/scalebench \
//	    -addrs "$(weaviate/cluster.sh addrs)" -state /tmp/cairn-weaviate -sizes 10000,100000,1000000
//
// (build it first outside the namespace, which has no module proxy:
// cd weaviate && go build -o /tmp/scalebench ./internal/scalebench.)
//
// The vectors are 768-d, clustered as vecbench's clustered family is
// (recall.Centres centres, noise recall.ClusterNoise, unit length), made
// batch by batch from a seed so that a million need no memory here. Every
// class is HNSW with Weaviate's defaults (maxConnections 32, ef dynamic)
// and replication 1, so that a shard's cost is one node's.
//
//   - Sizes: one class of one shard grows through -sizes; at each size it
//     reports the insert rate of the last step, query latency (one client,
//     k=10) and the growth of the nodes' resident memory per vector.
//   - Fan-out: -fanout vectors in each of three classes of 1, 3 and 6
//     shards (spread over the nodes); the same queries go to each in turn,
//     and it reports each one's latency and its ratio to one shard's.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/weaviate"
)

const (
	dim   = 768
	batch = 1000
	k     = 10
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	addrs := flag.String("addrs", os.Getenv("CAIRN_WEAVIATE"), "the nodes' HTTP addresses, comma-separated")
	grpcAddrs := flag.String("grpc", os.Getenv("CAIRN_WEAVIATE_GRPC"), "the nodes' gRPC addresses, comma-separated (default: port 50051 of each HTTP host)")
	transport := flag.String("transport", "grpc", "grpc or rest: how searches and batches go")
	state := flag.String("state", "/tmp/cairn-weaviate", "cluster.sh's state folder (node PIDs, for resident memory)")
	sizes := flag.String("sizes", "10000,100000", "the sizes the one-shard class grows through")
	fanout := flag.Int("fanout", 30000, "vectors in each fan-out class (0: skip)")
	queries := flag.Int("queries", 300, "queries at each measurement")
	flag.Parse()
	var steps []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || len(steps) > 0 && n <= steps[len(steps)-1] {
			return fmt.Errorf("-sizes %q: want growing positive counts", *sizes)
		}
		steps = append(steps, n)
	}
	nodes := strings.Split(*addrs, ",")
	base := weaviate.Options{Replication: 1, Timeout: 5 * time.Minute, Transport: weaviate.Transport(*transport)}
	if *grpcAddrs != "" {
		base.GRPCAddrs = strings.Split(*grpcAddrs, ",")
	}
	qs := make([]vector.Vector, *queries)
	for i := range qs {
		qs[i] = draw(rand.New(rand.NewPCG(99, uint64(i))))
	}
	fmt.Printf("scalebench: %d nodes, 768-d clustered, k=%d, %d queries a measurement, one client, over %s\n", len(nodes), k, *queries, *transport)

	if err := growing(ctx, nodes, base, *state, steps, qs); err != nil {
		return err
	}
	if *fanout > 0 {
		return fanOut(ctx, nodes, base, *fanout, qs)
	}
	return nil
}

// growing grows a class of one shard through steps, measuring at each.
func growing(ctx context.Context, nodes []string, o weaviate.Options, state string, steps []int, qs []vector.Vector) error {
	o.Shards = 1
	db, err := weaviate.Open(ctx, nodes, &o)
	if err != nil {
		return err
	}
	defer db.Close()
	name := fmt.Sprintf("scale-%d", time.Now().UnixNano())
	ix, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: dim, Metric: vector.Cosine, Index: cairn.HNSW})
	if err != nil {
		return err
	}
	defer db.DropIndex(context.WithoutCancel(ctx), name)
	rss0, anon0 := rss(state)
	fmt.Println("\n| vectors in the shard | insert/s (this step) | query p50 | p95 | nodes' RSS | RSS growth per vector | of which anonymous |")
	fmt.Println("|--:|--:|--:|--:|--:|--:|--:|")
	have := 0
	for _, n := range steps {
		start := time.Now()
		if err := fill(ctx, ix, have, n); err != nil {
			return err
		}
		rate := float64(n-have) / time.Since(start).Seconds()
		have = n
		lat, err := latencies(ctx, []*weaviate.Index{ix}, qs)
		if err != nil {
			return err
		}
		r, a := rss(state)
		fmt.Printf("| %d | %.0f | %v | %v | %.2f GiB | %.0f B | %.0f B |\n", n, rate, pct(lat[0], 0.5), pct(lat[0], 0.95),
			float64(r)/(1<<30), float64(r-rss0)/float64(n), float64(a-anon0)/float64(n))
	}
	return nil
}

// fanOut fills classes of 1, 3 and 6 shards with the same n vectors and
// times the same queries on each in turn.
func fanOut(ctx context.Context, nodes []string, o weaviate.Options, n int, qs []vector.Vector) error {
	shards := []int{1, 3, 6}
	var ixs []*weaviate.Index
	for _, s := range shards {
		o.Shards = s
		db, err := weaviate.Open(ctx, nodes, &o)
		if err != nil {
			return err
		}
		defer db.Close()
		name := fmt.Sprintf("fanout-%d-%d", s, time.Now().UnixNano())
		ix, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: dim, Metric: vector.Cosine, Index: cairn.HNSW})
		if err != nil {
			return err
		}
		defer db.DropIndex(context.WithoutCancel(ctx), name)
		start := time.Now()
		if err := fill(ctx, ix, 0, n); err != nil {
			return err
		}
		fmt.Printf("fan-out class of %d shards: %d vectors at %.0f/s\n", s, n, float64(n)/time.Since(start).Seconds())
		ixs = append(ixs, ix)
	}
	lat, err := latencies(ctx, ixs, qs)
	if err != nil {
		return err
	}
	fmt.Printf("\n| shards (%d vectors in all) | query p50 | p95 | p50 ÷ one shard's |\n|--:|--:|--:|--:|\n", n)
	for i, s := range shards {
		fmt.Printf("| %d | %v | %v | %.2f |\n", s, pct(lat[i], 0.5), pct(lat[i], 0.95),
			float64(pct(lat[i], 0.5))/float64(pct(lat[0], 0.5)))
	}
	return nil
}

// fill adds the vectors from through to-1, in batches.
func fill(ctx context.Context, ix *weaviate.Index, from, to int) error {
	ids := make([]vector.ID, 0, batch)
	vs := make([]vector.Vector, 0, batch)
	for lo := from; lo < to; lo += batch {
		ids, vs = ids[:0], vs[:0]
		r := rand.New(rand.NewPCG(7, uint64(lo)))
		for i := lo; i < min(lo+batch, to); i++ {
			ids = append(ids, vector.ID(i+1))
			vs = append(vs, draw(r))
		}
		if err := ix.AddBatch(ctx, ids, vs); err != nil {
			return fmt.Errorf("adding %d–%d: %w", lo, lo+len(ids), err)
		}
	}
	return nil
}

// centres are the clusters' centres, as the clustered family draws them.
var centres = func() []vector.Vector {
	r := rand.New(rand.NewPCG(1, 1))
	cs := make([]vector.Vector, recall.Centres)
	for i := range cs {
		c := make(vector.Vector, dim)
		for j := range c {
			c[j] = float32(r.Float64()*2 - 1)
		}
		cs[i] = c
	}
	return cs
}()

// draw returns a unit vector near a centre chosen by r.
func draw(r *rand.Rand) vector.Vector {
	c := centres[r.IntN(len(centres))]
	v := make(vector.Vector, dim)
	norm := 0.0
	for i := range v {
		x := float64(c[i]) + r.NormFloat64()*recall.ClusterNoise
		v[i] = float32(x)
		norm += x * x
	}
	s := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= s
	}
	return v
}

// latencies times every query on each index in turn, query by query.
func latencies(ctx context.Context, ixs []*weaviate.Index, qs []vector.Vector) ([][]time.Duration, error) {
	lat := make([][]time.Duration, len(ixs))
	for _, q := range qs {
		for i, ix := range ixs {
			start := time.Now()
			if _, err := ix.Search(ctx, q, k, nil); err != nil {
				return nil, err
			}
			lat[i] = append(lat[i], time.Since(start))
		}
	}
	return lat, nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))].Round(10 * time.Microsecond)
}

// rss is the nodes' resident memory, in bytes, from /proc (0 for a node
// whose PID cannot be read): all of it, and the part that is anonymous
// (the Go heap and stacks, not pages of mapped files).
func rss(state string) (all, anon int64) {
	for i := 0; ; i++ {
		b, err := os.ReadFile(filepath.Join(state, fmt.Sprintf("node%d.pid", i)))
		if err != nil {
			return all, anon
		}
		st, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(b)), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			f := strings.Fields(l)
			if len(f) != 3 {
				continue
			}
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmRSS:":
				all += kb << 10
			case "RssAnon:":
				anon += kb << 10
			}
		}
	}
}
