// This file holds the --weaviate report: the --indexes measurements (and
// --data) run against a Weaviate cluster, through package weaviate, on the
// same data sets as the local indexes.

package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/weaviate"
)

func init() {
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --weaviate HOST:PORT[,...]
                    the index table on a Weaviate cluster beside the local
                    indexes: flat and HNSW classes (3 shards unless fewer
                    nodes, replication 2), batched insert rate, latency, QPS
                    of one and of --threads clients, recall; with --data too.
                    Then REST and gRPC side by side: insert rate of each
                    (batches alternating between two indexes), and the
                    latency of each on the same queries, sent by both in
                    turn. The test cluster's nodes are reachable only
                    inside its namespace: weaviate/cluster.sh exec vecbench
                    --weaviate $(weaviate/cluster.sh addrs) --weaviate-grpc
                    $(weaviate/cluster.sh grpc-addrs) ...
  --weaviate-grpc HOST:PORT[,...]
                    the nodes' gRPC addresses (default: each --weaviate
                    host at port 50051, Weaviate's default)
`,
		define: func(fs *flag.FlagSet, c *config) {
			fs.StringVar(&c.weaviate, "weaviate", "", "")
			fs.StringVar(&c.weaviateGRPC, "weaviate-grpc", "", "")
		},
		check: func(c *config, set map[string]bool) error {
			for _, f := range []string{"weaviate", "weaviate-grpc"} {
				if !set[f] {
					continue
				}
				v := map[string]string{"weaviate": c.weaviate, "weaviate-grpc": c.weaviateGRPC}[f]
				for _, a := range strings.Split(v, ",") {
					if strings.TrimSpace(a) == "" {
						return usagef("--%s %q: want HOST:PORT[,HOST:PORT...]", f, v)
					}
				}
			}
			if set["weaviate-grpc"] && !set["weaviate"] {
				return usagef("--weaviate-grpc needs --weaviate")
			}
			return nil
		},
		quick: func(*config) {}, // --quick never needs a cluster
		asked: func(c *config) bool { return c.weaviate != "" },
		run:   (*bench).weaviateReport,
	})
}

// weaviateReport measures flat and HNSW on the cluster at c.weaviate, on
// each data set of the index table: batched insert rate, latency of one
// client, QPS of one and of --threads concurrent clients, recall@k.
func (b *bench) weaviateReport(ctx context.Context) error {
	addrs := strings.Split(b.c.weaviate, ",")
	var grpcAddrs []string
	if b.c.weaviateGRPC != "" {
		grpcAddrs = strings.Split(b.c.weaviateGRPC, ",")
	}
	// REST first: a gRPC DB checks the REST address too, and a failure
	// there would be blamed on gRPC.
	open := func(tr weaviate.Transport, flag string) (*weaviate.DB, error) {
		db, err := weaviate.Open(ctx, addrs, &weaviate.Options{Shards: min(3, len(addrs)), Transport: tr, GRPCAddrs: grpcAddrs})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		return db, nil
	}
	rest, err := open(weaviate.REST, "--weaviate")
	if err != nil {
		return err
	}
	defer rest.Close()
	db, err := open(weaviate.GRPC, "--weaviate-grpc (or each node's gRPC port)")
	if err != nil {
		return err
	}
	defer db.Close()
	family := b.c.familyFor("indexes")
	t := newTable(b.out, "",
		"<data", "<index", "insert/s", "build", fmt.Sprintf("recall@%d", b.c.k), "p50", "p95", "p99", "QPS", fmt.Sprintf("QPS ×%d", b.c.threads))
	defer t.close()
	for _, n := range b.c.sizesFor("indexes") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		t.title = fmt.Sprintf("## Weaviate cluster (%d nodes): %s %d-d %s, k=%d, %s queries; insert in batches of 1,000 (QPS also from %d clients)",
			len(addrs), ds.Name, ds.Dim, ds.Metric, b.c.k, fmtInt(len(ds.Queries)), b.c.threads)
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			name := fmt.Sprintf("vecbench-%s-%d-%d", kind, len(ds.Base), time.Now().UnixNano())
			ix, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: kind})
			if err != nil {
				return fmt.Errorf("--weaviate: %w", err)
			}
			r, err := b.clusterRow(ctx, ix, ds, truth, kind)
			if derr := db.DropIndex(context.WithoutCancel(ctx), name); derr != nil && err == nil {
				err = fmt.Errorf("--weaviate: dropping %s: %w", name, derr)
			}
			if err != nil {
				return err
			}
			b.add(r)
			t.row(r.Dataset, r.Index, fmtQPS(float64(r.N)/r.BuildS), fmtDur(secs(r.BuildS)), fmtRecall(r.Recall),
				fmtDur(usDur(r.P50us)), fmtDur(usDur(r.P95us)), fmtDur(usDur(r.P99us)), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores))
		}
	}
	t.close()
	return b.transportReport(ctx, rest, db, family, len(addrs))
}

// transportReport compares REST and gRPC on the same cluster, for flat
// and HNSW on each data set of the index table.
func (b *bench) transportReport(ctx context.Context, rest, grpc *weaviate.DB, family string, nodes int) error {
	t := newTable(b.out, "", "<data", "<index", "insert/s REST", "insert/s gRPC", "p50 REST", "p50 gRPC", "p95 REST", "p95 gRPC",
		"p50 gRPC÷REST", "p95 gRPC÷REST", fmt.Sprintf("recall@%d", b.c.k))
	defer t.close()
	for _, n := range b.c.sizesFor("indexes") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		t.title = fmt.Sprintf("## Weaviate cluster (%d nodes), REST and gRPC side by side: %s %d-d %s, k=%d, %s queries each way, alternating query by query; insert in batches of 1,000 alternating between two indexes",
			nodes, ds.Name, ds.Dim, ds.Metric, b.c.k, fmtInt(len(ds.Queries)))
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			c, err := b.compareTransports(ctx, rest, grpc, ds, truth, kind)
			if err != nil {
				return fmt.Errorf("--weaviate: %w", err)
			}
			t.row(ds.Name, "weaviate-"+kind.String(), fmtQPS(c.insert[0]), fmtQPS(c.insert[1]),
				fmtDur(c.lat[0].P50), fmtDur(c.lat[1].P50), fmtDur(c.lat[0].P95), fmtDur(c.lat[1].P95),
				fmt.Sprintf("%.2f", float64(c.lat[1].P50)/float64(c.lat[0].P50)), fmt.Sprintf("%.2f", float64(c.lat[1].P95)/float64(c.lat[0].P95)),
				fmtRecall(c.recall[0])+" / "+fmtRecall(c.recall[1]))
		}
	}
	return nil
}

// comparison is what compareTransports measured, REST first, gRPC second.
type comparison struct {
	insert [2]float64 // items per second
	lat    [2]recall.Latency
	recall [2]float64
}

// compareTransports builds ds twice on the cluster, one index through
// each transport, sending batches of 1,000 to each in turn, then sends
// every query of ds through REST and through gRPC in turn, both to the
// index gRPC built, so that the two paths meet the same cluster, data and
// load.
func (b *bench) compareTransports(ctx context.Context, rest, grpc *weaviate.DB, ds *recall.Dataset, truth [][]int32, kind cairn.IndexKind) (comparison, error) {
	var c comparison
	dbs := [2]*weaviate.DB{rest, grpc}
	var names [2]string
	var ixs [2]*weaviate.Index
	stamp := time.Now().UnixNano()
	for i, tr := range []string{"rest", "grpc"} {
		names[i] = fmt.Sprintf("vecbench-%s-%s-%d-%d", tr, kind, len(ds.Base), stamp)
		ix, err := dbs[i].NewIndex(ctx, names[i], cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: kind})
		if err != nil {
			return c, err
		}
		defer dbs[i].DropIndex(context.WithoutCancel(ctx), names[i])
		ixs[i] = ix
	}
	cb := b.p.begin(fmt.Sprintf("REST and gRPC: build weaviate-%s %s", kind, ds.Name))
	const batch = 1000
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	var took [2]time.Duration
	for start := 0; start < len(ds.Base); start += batch {
		end := min(start+batch, len(ds.Base))
		for i := range ixs {
			t0 := time.Now()
			if err := ixs[i].AddBatch(ctx, ids[start:end], ds.Base[start:end]); err != nil {
				b.p.end()
				return c, err
			}
			took[i] += time.Since(t0)
		}
		cb(end, len(ds.Base))
	}
	b.p.end()
	for i := range took {
		c.insert[i] = float64(len(ds.Base)) / took[i].Seconds()
	}
	// Both paths query the index gRPC built.
	same, err := rest.OpenIndex(ctx, names[1])
	if err != nil {
		return c, err
	}
	query := [2]*weaviate.Index{same, ixs[1]}
	var lat [2][]time.Duration
	var sum [2]float64
	cb = b.p.begin(fmt.Sprintf("REST and gRPC: query weaviate-%s %s", kind, ds.Name))
	defer b.p.end()
	for qi, q := range ds.Queries {
		for i := range query {
			t0 := time.Now()
			res, err := query[i].Search(ctx, q, b.c.k, nil)
			if err != nil {
				return c, err
			}
			lat[i] = append(lat[i], time.Since(t0))
			sum[i] += recall.At(res, truth[qi], b.c.k)
		}
		cb(qi+1, len(ds.Queries))
	}
	for i := range lat {
		c.lat[i] = recall.Summarise(lat[i])
		c.recall[i] = sum[i] / float64(len(ds.Queries))
	}
	return c, nil
}

// clusterRow builds ds in ix (recall.Build adds it in batches of 1,000
// or more) and measures its queries.
func (b *bench) clusterRow(ctx context.Context, ix *weaviate.Index, ds *recall.Dataset, truth [][]int32, kind cairn.IndexKind) (result, error) {
	what := "weaviate-" + kind.String()
	bs, err := b.build(ctx, ix, ds, what)
	if err != nil {
		return result{}, fmt.Errorf("--weaviate: %w", err)
	}
	qs, err := b.measure(ctx, ix, ds, truth, b.c.k, what, nil)
	if err != nil {
		return result{}, fmt.Errorf("--weaviate: %w", err)
	}
	r := b.measured("weaviate", ds, "cluster", what, params{}, bs, qs)
	r.IndexBytes = 0 // the client's heap says nothing of the cluster's memory
	return r, nil
}
