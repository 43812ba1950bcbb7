// This file holds the tests that run against a real cluster: the
// memory-store and index conformance suites. They run only when
// CAIRN_WEAVIATE names the nodes (cluster.sh exec sets nothing; run them as
//
//	weaviate/cluster.sh up
//	weaviate/cluster.sh exec env CAIRN_WEAVIATE=$(weaviate/cluster.sh addrs) CAIRN_WEAVIATE_GRPC=$(weaviate/cluster.sh grpc-addrs) go test ./weaviate/
//
// or with weaviate/test-cluster.sh, which does all of it), and skip
// otherwise, so that the unit suite stays fast.

package weaviate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/memorytest"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/vector"
)

// clusterTransport is the transport of the cluster tests' DBs; the
// conformance suites run on both.
var clusterTransport = flag.String("weaviate.transport", "grpc", "transport of the cluster tests' DBs, grpc or rest (the conformance suites run on both)")

// clusterAddrs returns the nodes of the test cluster, or skips the test.
func clusterAddrs(t testing.TB) []string {
	t.Helper()
	env := os.Getenv("CAIRN_WEAVIATE")
	if env == "" {
		t.Skip("no cluster: set CAIRN_WEAVIATE=host:port,... (see weaviate/cluster.sh)")
	}
	return strings.Split(env, ",")
}

// clusterOptions returns o set to reach the given nodes of the test
// cluster (all if none) over o.Transport, or -weaviate.transport if that
// is not set: over gRPC at their addresses in CAIRN_WEAVIATE_GRPC
// (cluster.sh grpc-addrs), since each node of cluster.sh has its own
// gRPC port.
func clusterOptions(t testing.TB, o Options, nodes ...int) *Options {
	t.Helper()
	if o.Transport == "" {
		o.Transport = Transport(*clusterTransport)
	}
	if o.Transport != GRPC {
		return &o
	}
	env := os.Getenv("CAIRN_WEAVIATE_GRPC")
	if env == "" {
		t.Fatal("CAIRN_WEAVIATE_GRPC is not set: give the nodes' gRPC addresses (weaviate/cluster.sh grpc-addrs), or -weaviate.transport=rest")
	}
	all := strings.Split(env, ",")
	if len(nodes) == 0 {
		o.GRPCAddrs = all
		return &o
	}
	o.GRPCAddrs = nil
	for _, i := range nodes {
		o.GRPCAddrs = append(o.GRPCAddrs, all[i])
	}
	return &o
}

// openCluster connects to the test cluster with 3 shards and replication
// factor 2, the layout the issue asks the suites to run on.
func openCluster(t testing.TB, o *Options) *DB {
	t.Helper()
	return openClusterReplicated(t, o, 2)
}

// openClusterReplicated is openCluster at replication factor factor.
func openClusterReplicated(t testing.TB, o *Options, factor int) *DB {
	t.Helper()
	addrs := clusterAddrs(t)
	var opt Options
	if o != nil {
		opt = *o
	}
	opt.Shards, opt.Replication = 3, factor
	opt.MaxResults = 100000 // cluster.sh sets QUERY_MAXIMUM_RESULTS so
	db, err := Open(context.Background(), addrs, clusterOptions(t, opt))
	if err != nil {
		t.Fatalf("Open(%v): %v", addrs, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// transports are the transports the conformance suites run on.
var transports = []Transport{GRPC, REST}

func TestClusterMemoryStore(t *testing.T) {
	clusterAddrs(t)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			memorytest.Run(t, func(t *testing.T, emb cairn.Embedder) cairn.MemoryStore {
				return openCluster(t, &Options{Embedder: emb, Transport: tr})
			})
		})
	}
}

// TestClusterUnreplicated runs the memory-store suite on classes of one
// replica a shard, to which Weaviate refuses any consistency level.
func TestClusterUnreplicated(t *testing.T) {
	clusterAddrs(t)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			memorytest.Run(t, func(t *testing.T, emb cairn.Embedder) cairn.MemoryStore {
				return openClusterReplicated(t, &Options{Embedder: emb, Transport: tr}, 1)
			})
		})
	}
}

// indexFactories returns the store and index factories of vectortest for
// indexes of kind on db: the store is only a carrier of dimension and
// metric, since the index keeps its vectors on the cluster (so it shows
// no Close: closing it closes nothing of the index's).
func indexFactories(db *DB, kind cairn.IndexKind) (vectortest.StoreFactory, vectortest.IndexFactory) {
	newStore := func(t *testing.T, dim int, m vector.Metric) vector.Store {
		s, err := vector.NewMemStore(dim, m)
		if err != nil {
			t.Fatal(err)
		}
		return struct{ vector.Store }{s}
	}
	newIndex := func(t *testing.T, s vector.Store) vector.Index {
		name := memorytest.Name(t)
		ix, err := db.NewIndex(context.Background(), name, cairn.CollectionConfig{Dim: s.Dim(), Metric: s.Metric(), Index: kind})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.DropIndex(context.Background(), name) })
		return ix
	}
	return newStore, newIndex
}

func TestClusterIndex(t *testing.T) {
	clusterAddrs(t)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			db := openCluster(t, &Options{Transport: tr})
			t.Run("flat", func(t *testing.T) {
				newStore, newIndex := indexFactories(db, cairn.Flat)
				vectortest.TestIndex(t, newStore, newIndex, vectortest.IndexConfig{})
			})
			t.Run("hnsw", func(t *testing.T) {
				newStore, newIndex := indexFactories(db, cairn.HNSW)
				vectortest.TestIndex(t, newStore, newIndex, vectortest.IndexConfig{Approximate: true, MinRecall: 0.9})
			})
		})
	}
}

// TestClusterDeletedElsewhere deletes a collection through one DB and
// then uses it through another, which still holds it, over each
// transport, with and without other classes in the schema (Weaviate's
// GraphQL answers differ): once every node has dropped the class, every
// call fails with an error wrapping vector.ErrNotFound. Each call takes
// its bound (3 s here): a node whose schema lacks a class cannot tell a
// deleted class from one it has yet to catch up on (doc.go).
func TestClusterDeletedElsewhere(t *testing.T) {
	clusterAddrs(t)
	ctx := context.Background()
	for _, tr := range transports {
		for _, others := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/others=%v", tr, others), func(t *testing.T) {
				a, b := openCluster(t, &Options{Transport: tr}), openCluster(t, &Options{Transport: tr})
				if others {
					name := memorytest.Name(t) + "-other"
					if _, err := b.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: 2}); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { b.DeleteCollection(context.Background(), name) })
				}
				name := memorytest.Name(t)
				mc, err := a.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: 4, Index: cairn.Flat})
				if err != nil {
					t.Fatal(err)
				}
				item := cairn.Item{ID: "a", Embedding: []float32{1, 2, 3, 4}, Text: "a"}
				if err := mc.Add(ctx, item); err != nil {
					t.Fatal(err)
				}
				if err := b.DeleteCollection(ctx, name); err != nil {
					t.Fatal(err)
				}
				dropped(t, a, mc.(*Collection).Class())
				for _, call := range []struct {
					name string
					f    func(ctx context.Context) error
				}{
					{"Get", func(ctx context.Context) error { _, err := mc.Get(ctx, "a"); return err }},
					{"Query", func(ctx context.Context) error { _, err := mc.Query(ctx, item.Embedding, 3, nil); return err }},
					{"Count", func(ctx context.Context) error { _, err := mc.Count(ctx); return err }},
					{"Find", func(ctx context.Context) error { _, err := mc.Find(ctx, nil, 0); return err }},
					{"Add", func(ctx context.Context) error { return mc.Add(ctx, cairn.Item{ID: "b", Embedding: item.Embedding}) }},
					{"Delete", func(ctx context.Context) error { return mc.Delete(ctx, "a") }},
				} {
					cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
					err := call.f(cctx)
					cancel()
					if !errors.Is(err, vector.ErrNotFound) {
						t.Errorf("%s of a deleted collection: %v, want an error wrapping ErrNotFound", call.name, err)
					}
				}
			})
		}
	}
}

// dropped waits until no node of db's cluster has class cls in its own
// schema or an index of it.
func dropped(t *testing.T, db *DB, cls string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for node := range db.cl.nodes {
		for _, path := range []string{"/v1/schema/" + cls + "?consistency=false", "/v1/schema/" + cls + "/shards"} {
			for {
				st, _, err := db.cl.attempt(ctx, node, http.MethodGet, path, nil)
				if err == nil && st/100 != 2 {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("node %d still has class %s: GET %s answers %d, %v", node, cls, path, st, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}
