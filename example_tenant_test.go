package cairn_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairndb/cairn"
)

// Each user of an agent gets a tenant of one collection: the same ids in
// each, and no query of one returns another's memories. A file may hold
// far more tenants than memory: each is loaded on first use.
func ExampleCollection_Tenant() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil) // or cairn.Open(ctx, "agent.db", nil)
	defer db.Close()

	memories, err := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	alice, err := memories.GetOrCreateTenant(ctx, "alice")
	if err != nil {
		log.Fatal(err)
	}
	bob, err := memories.GetOrCreateTenant(ctx, "bob")
	if err != nil {
		log.Fatal(err)
	}
	if err := alice.Add(ctx, cairn.Item{ID: "m1", Text: "Alice prefers dark mode", Embedding: []float32{0.9, 0.1, 0}}); err != nil {
		log.Fatal(err)
	}
	if err := bob.Add(ctx, cairn.Item{ID: "m1", Text: "Bob prefers light mode", Embedding: []float32{0.9, 0.1, 0}}); err != nil {
		log.Fatal(err)
	}

	// Later, in a request for alice: the handle is a name, cheap to get.
	alice, err = memories.Tenant(ctx, "alice")
	if err != nil {
		log.Fatal(err)
	}
	hits, err := alice.Query(ctx, []float32{1, 0, 0}, 5, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s  %s\n", h.ID, h.Text)
	}
	names, err := memories.Tenants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(names)
	// Output:
	// m1  Alice prefers dark mode
	// [alice bob]
}
