package cairn_test

// This file holds the examples of item times and expiry.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// A collection with a time-to-live: an item expires a day after it is
// written unless it says otherwise, and from then on no read returns it.
func ExampleCollectionConfig_ttl() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	session, err := db.CreateCollection(ctx, "session", cairn.CollectionConfig{Dim: 2, TTL: 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	err = session.Add(ctx,
		cairn.Item{ID: "mood", Embedding: []float32{1, 0}, Text: "the user is tired today"},
		cairn.Item{ID: "trip", Embedding: []float32{0, 1}, Text: "the user is in Lisbon this week",
			ExpiresAt: time.Now().Add(7 * 24 * time.Hour)}, // its own expiry beats the TTL
	)
	if err != nil {
		log.Fatal(err)
	}
	items, err := session.Get(ctx, "mood", "trip")
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range items {
		fmt.Printf("%s expires %v after it was written\n", it.ID, it.ExpiresAt.Sub(it.CreatedAt).Round(time.Hour))
	}

	// An item cannot be written already expired.
	err = session.Add(ctx, cairn.Item{ID: "stale", Embedding: []float32{1, 1}, ExpiresAt: time.Now().Add(-time.Minute)})
	fmt.Println(errors.Is(err, vector.ErrInvalidOptions))
	// Output:
	// mood expires 24h0m0s after it was written
	// trip expires 168h0m0s after it was written
	// true
}

// Filtering by time: the items updated in the last hour, in a query or a
// Find, in Go or in the JSON form of filters.
func ExampleTimeRange() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	notes, err := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 2})
	if err != nil {
		log.Fatal(err)
	}
	err = notes.Add(ctx,
		cairn.Item{ID: "old", Embedding: []float32{1, 0}, CreatedAt: time.Now().Add(-48 * time.Hour), UpdatedAt: time.Now().Add(-48 * time.Hour)},
		cairn.Item{ID: "new", Embedding: []float32{1, 0.1}},
	)
	if err != nil {
		log.Fatal(err)
	}
	recent := cairn.TimeRange(cairn.Updated, time.Now().Add(-time.Hour), time.Time{}) // to: open
	hits, err := notes.Query(ctx, []float32{1, 0}, 5, &cairn.QueryOptions{Filter: recent})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.ID)
	}
	f, err := cairn.ParseFilter([]byte(`{"$created": {"$lt": "2000-01-01T00:00:00Z"}}`))
	if err != nil {
		log.Fatal(err)
	}
	found, err := notes.Find(ctx, f, 0)
	fmt.Println(len(found), err)
	// Output:
	// new
	// 0 <nil>
}
