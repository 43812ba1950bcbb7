package cairn

import (
	"context"
	"fmt"
	"testing"
)

// TestTimeOrderBoundedWithoutRecency upserts a few items many times with
// no recency query: the time order must not keep every version ever
// published (it held each retired record, text and metadata included,
// until a recency query sorted it: 210,000 records and 187 MB of heap for
// 10,000 live items after 200,000 upserts).
func TestTimeOrderBoundedWithoutRecency(t *testing.T) {
	ctx := context.Background()
	db := OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat})
	if err != nil {
		t.Fatal(err)
	}
	const live, writes = 50, 5000
	for i := range writes {
		it := Item{ID: fmt.Sprint(i % live), Embedding: []float32{1, float32(i)}, Text: "note"}
		if err := c.Upsert(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.RLock()
	n, retired := len(c.cat.times.list.recs), c.cat.times.retired
	c.mu.RUnlock()
	if n > 2*live+1 || retired > n/2 {
		t.Fatalf("after %d upserts of %d items the time order holds %d records, %d retired", writes, live, n, retired)
	}
}
