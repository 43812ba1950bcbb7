package cairn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
)

// BenchmarkTenantQuery compares a query of a tenant with one of a
// dedicated collection holding the same items, in one file: "tenant"
// looks the tenant up by name for each query, as a server handling a
// request for it does; "held" keeps the handle.
func BenchmarkTenantQuery(b *testing.B) {
	ctx := context.Background()
	const dim = 64
	for _, n := range []int{10, 100, 1000} {
		db, err := cairn.Open(ctx, filepath.Join(b.TempDir(), "t.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(n)))
		items := make([]cairn.Item, n)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprint(i), Text: fmt.Sprint("memory ", i), Embedding: randVec(r, dim)}
		}
		parent, err := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: dim})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 100 { // neighbours, so the tenant is one of many
			tn, err := parent.CreateTenant(ctx, fmt.Sprint("other", i))
			if err == nil {
				err = tn.Add(ctx, items[:min(n, 10)]...)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		tn, err := parent.CreateTenant(ctx, "user")
		if err == nil {
			err = tn.Add(ctx, items...)
		}
		if err != nil {
			b.Fatal(err)
		}
		dedicated, err := db.CreateCollection(ctx, "dedicated", cairn.CollectionConfig{Dim: dim})
		if err == nil {
			err = dedicated.Add(ctx, items...)
		}
		if err != nil {
			b.Fatal(err)
		}
		qs := make([][]float32, 256)
		for i := range qs {
			qs[i] = randVec(r, dim)
		}
		run := func(name string, query func(q []float32) error) {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := query(qs[i%len(qs)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
		run("dedicated", func(q []float32) error { _, err := dedicated.Query(ctx, q, 5, nil); return err })
		run("tenant", func(q []float32) error {
			t, err := parent.Tenant(ctx, "user")
			if err == nil {
				_, err = t.Query(ctx, q, 5, nil)
			}
			return err
		})
		run("held", func(q []float32) error { _, err := tn.Query(ctx, q, 5, nil); return err })
		db.Close()
	}
}
