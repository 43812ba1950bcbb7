package cairn

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// storeClock adds up the time a backend spends in its store's own batch
// write.
type storeClock struct{ ns atomic.Int64 }

func (k *storeClock) time(f func() error) error {
	t := time.Now()
	err := f()
	k.ns.Add(int64(time.Since(t)))
	return err
}

// timeStore makes be's store calls report to the clock it returns,
// through the backend's seam for it.
func timeStore(be backend) *storeClock {
	k := new(storeClock)
	switch be := be.(type) {
	case *memBackend:
		put := be.putBatch
		be.putBatch = func(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
			return k.time(func() error { return put(ctx, ids, vs) })
		}
	case *sqlBackend:
		write := be.writeItems
		be.writeItems = func(ctx context.Context, items []sqlitestore.Item, drop []vector.ID) error {
			return k.time(func() error { return write(ctx, items, drop) })
		}
	}
	return k
}

// BenchmarkAddSplit splits a batch Add between the store's own batch
// insert (MemStore.PutBatch, or sqlitestore's WriteItems) and the rest,
// which is the collection's work: validation, metadata, ids,
// reservations, publication and, for a file, the metadata's JSON. Both
// are timed on the very same calls, so the ratio add/insert is what the
// API costs on top of its store, free of the differences between two
// stores that an A/B comparison (BenchmarkAdd/ratio) also picks up. It
// reports the ratio of the totals, and the median and 95th percentile of
// the ratio of each Add.
func BenchmarkAddSplit(b *testing.B) {
	const batch, dim = 1000, 768
	ctx := context.Background()
	ds := recall.Uniform(batch, 0, dim, 2)
	for _, persistent := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "sqlite"}[persistent]
		b.Run(fmt.Sprintf("%s/batch=%d/dim=%d", name, batch, dim), func(b *testing.B) {
			db := OpenMemory(nil)
			if persistent {
				var err error
				if db, err = Open(ctx, filepath.Join(b.TempDir(), "c.db"), nil); err != nil {
					b.Fatal(err)
				}
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: dim, Index: Flat})
			if err != nil {
				b.Fatal(err)
			}
			clock := timeStore(c.be)
			var (
				total  time.Duration
				ratios []float64 // of each Add
			)
			round := 0
			for b.Loop() {
				its := make([]Item, batch)
				for i, v := range ds.Base {
					its[i] = Item{ID: fmt.Sprintf("r%d-%d", round, i), Embedding: v, Text: "some text",
						Metadata: map[string]any{"bucket": i % 10, "source": "bench"}}
				}
				before := clock.ns.Load()
				t := time.Now()
				if err := c.Add(ctx, its...); err != nil {
					b.Fatal(err)
				}
				d := time.Since(t)
				total += d
				ratios = append(ratios, float64(d)/float64(clock.ns.Load()-before))
				round++
			}
			store := time.Duration(clock.ns.Load())
			slices.Sort(ratios)
			b.ReportMetric(float64(total)/float64(store), "add/insert")
			b.ReportMetric(ratios[len(ratios)/2], "add/insert-p50")
			b.ReportMetric(ratios[len(ratios)*95/100], "add/insert-p95")
			b.ReportMetric(float64(total-store)/float64(b.N*batch), "api-ns/item")
		})
	}
}
