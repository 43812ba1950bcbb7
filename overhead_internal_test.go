package cairn

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/recall"
)

// discardBackend is a backend whose inserts store nothing, so that a
// benchmark of Add through it measures the collection's own work alone.
type discardBackend struct{ backend }

func (discardBackend) insert(context.Context, []row) error { return nil }

// BenchmarkAddOverhead measures what a batch Add costs on top of its
// backend's insert: validation, metadata, reservations and publication.
// The backend here stores nothing; ns/item is the collection's own cost.
func BenchmarkAddOverhead(b *testing.B) {
	const batch, dim = 1000, 768
	ctx := context.Background()
	ds := recall.Uniform(batch, 0, dim, 2)
	db := OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: dim, Index: Flat})
	if err != nil {
		b.Fatal(err)
	}
	c.be = discardBackend{c.be}
	b.ReportAllocs()
	round := 0
	for b.Loop() {
		b.StopTimer()
		its := make([]Item, batch)
		for i, v := range ds.Base {
			its[i] = Item{ID: fmt.Sprintf("r%d-%d", round, i), Embedding: v, Text: "some text",
				Metadata: map[string]any{"bucket": i % 10, "source": "bench"}}
		}
		b.StartTimer()
		if err := c.Add(ctx, its...); err != nil {
			b.Fatal(err)
		}
		round++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
}
