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
	"github.com/cairndb/cairn/weaviate"
)

func init() {
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --weaviate HOST:PORT[,...]
                    the index table on a Weaviate cluster beside the local
                    indexes: flat and HNSW classes (3 shards unless fewer
                    nodes, replication 2), batched insert rate, latency, QPS
                    of one and of --threads clients, recall; with --data too.
                    The test cluster's nodes are reachable only inside its
                    namespace: weaviate/cluster.sh exec vecbench ...
`,
		define: func(fs *flag.FlagSet, c *config) { fs.StringVar(&c.weaviate, "weaviate", "", "") },
		check: func(c *config, set map[string]bool) error {
			if set["weaviate"] {
				for _, a := range strings.Split(c.weaviate, ",") {
					if strings.TrimSpace(a) == "" {
						return usagef("--weaviate %q: want HOST:PORT[,HOST:PORT...]", c.weaviate)
					}
				}
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
	db, err := weaviate.Open(ctx, addrs, &weaviate.Options{Shards: min(3, len(addrs))})
	if err != nil {
		return fmt.Errorf("--weaviate: %w", err)
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
	return nil
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
